#!/usr/bin/env bash
# A batch of template variants against the user's alternatives, side by side in one run on the
# same machine: `reel batch` of N rows, a loop of N `ffmpeg` commands that make the same
# outputs, and a loop of N `reel render --set …` commands.
#
#   ops/bench-batch.sh [OUTPUT.md]      (default: print to stdout; KEEP_WORK=1 keeps the work dir)
#   env: ROWS (1000) · LOOP_ROWS (ROWS: how many rows each loop renders; fewer scales the loop's
#        measured time per row to ROWS, and the report says so) · AGENTS (2) · PHOTOS (50)
#        · REEL_BIN_DIR: use these binaries instead of building
#
# The template: 15 s of 1280x720 at 30 fps. A 3 s intro clip and a 3 s outro clip, the same in
# every row; between them 9 s of the row's photo with "Hello, NAME!" in the row's colour; a
# 15 s music bed under all of it. Export: H.264 Main CRF 23 with x264 preset veryfast, closed
# 2 s GOPs, AAC 128 kb/s. The ffmpeg command of a row concatenates the same three pictures,
# draws the same text with the same font (DejaVu Sans, which fontconfig gives Reel's
# "sans-serif") and encodes with the same x264 settings; its outputs are not byte-identical to
# Reel's (another text rasteriser and scaler) but hold the same picture, length and streams.
#
# The same batch also runs on a farm of separate processes (`reel coordinator`, AGENTS `reel
# agent`s, `reel submit --batch --wait`), for the coordinator's own peak RSS and database.
#
# Reported: wall times and their ratios; peak RSS of the `reel coordinator` process and of the
# `reel batch` process (coordinator, its PostgreSQL client and the local agents in one process;
# the PostgreSQL server is apart); the database's growth per variant (pg_database_size before
# and after, indexes and TOAST included); and the chunks the manifest says each row reused.
set -euo pipefail
cd "$(dirname "$0")/.."
report=${1:-/dev/stdout}
rows=${ROWS:-1000}
loop_rows=${LOOP_ROWS:-$rows}
agents=${AGENTS:-2}
photos=${PHOTOS:-50}
. ops/bench-lib.sh
use_release reel
bench_workdir batch
[ "$loop_rows" -le "$rows" ] || { log "LOOP_ROWS ($loop_rows) must be at most ROWS ($rows)"; exit 2; }
font=$(fc-match -f '%{file}' 'sans-serif')
[ -f "$font" ] || { log "fontconfig finds no sans-serif font: apt-get install fonts-dejavu-core"; exit 1; }

log "media: intro, outro, music, $photos photos"
media=$work/media
mkdir -p "$media"
ff -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=3" "${enc[@]}" -an "$media/intro.mp4"
ff -f lavfi -i "gradients=size=1280x720:rate=30:speed=0.05:seed=3" -t 3 "${enc[@]}" -an "$media/outro.mp4"
ff -f lavfi -i "sine=frequency=220:sample_rate=48000:duration=15" -f lavfi -i "sine=frequency=330:sample_rate=48000:duration=15" \
   -filter_complex "[0:a][1:a]amerge=inputs=2" -c:a aac -b:a 256k "$media/music.m4a"
for i in $(seq 1 "$photos"); do
  ff -f lavfi -i "gradients=size=1280x720:seed=$i:n=4" -frames:v 1 -q:v 2 "$media/photo$i.jpg"
done

cat >"$media/template.json" <<'JSON'
{
  "formatVersion": 1,
  "variables": {
    "name": {"type": "text", "default": "Ada", "maxLength": 40},
    "photo": {"type": "asset", "default": "photo1.jpg"},
    "ink": {"type": "color", "default": "#FFFFFF"}
  },
  "assets": {"intro": {"url": "intro.mp4"}, "outro": {"url": "outro.mp4"},
             "music": {"url": "music.m4a"}, "photo": {"url": "{{photo}}"}},
  "tracks": [
    {"id": 1, "mediaType": "video", "segments": [
      {"asset": "intro", "at": 0},
      {"asset": "photo", "at": 3, "duration": 9},
      {"asset": "outro", "at": 12}
    ]},
    {"id": 2, "mediaType": "audio", "segments": [{"asset": "music", "at": 0}]}
  ],
  "videoComposition": {
    "renderSize": {"width": 1280, "height": 720}, "frameDuration": "1/30",
    "overlays": [
      {"text": "Hello, {{name}}!", "fontSize": 64, "color": "{{ink}}",
       "frame": {"x": 80, "y": 560, "width": 1120, "height": 120}, "timeRange": {"start": 3, "duration": 9}}
    ]
  },
  "export": {"preset": "medium", "video": {"x264Preset": "veryfast"}}
}
JSON
python3 - "$media/rows.csv" "$rows" "$photos" <<'PY'
import csv, sys
path, rows, photos = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
inks = ["#FFFFFF", "#FFD700", "#00E5FF", "#FF6F61", "#B2FF59"]
with open(path, "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["id", "name", "photo", "ink"])
    for r in range(1, rows + 1):
        w.writerow([f"v{r:05d}", f"Person {r}", f"photo{(r - 1) % photos + 1}.jpg", inks[r % len(inks)]])
PY

log "PostgreSQL for the batch and the reel render loop"
"$bench_root/ops/postgres.sh" start "$work/pg" "$(free_port)" >"$work/pgurl"
pgurl=$(cat "$work/pgurl")
base=${pgurl%/*}
psql "$pgurl" -qc "CREATE DATABASE bench_batch" -c "CREATE DATABASE bench_loop"
batch_db=$base/bench_batch
loop_db=$base/bench_loop
# The schema first, so that the growth measured is the batch's: a render of 1 s of a still,
# which shares no chunk with the template's.
cat >"$media/warm.json" <<'JSON'
{"formatVersion": 1, "assets": {"still": {"url": "photo1.jpg"}},
 "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "still", "at": 0, "duration": 1}]}]}
JSON
"$bin/reel" render "$media/warm.json" -o "$work/warm.mp4" --database "$batch_db" --quiet
size_before=$(psql "$batch_db" -Atc "SELECT pg_database_size(current_database())")

log "reel batch: $rows rows, $agents agents"
start=$(now)
/usr/bin/time -f '%M' -o "$work/batch.rss" \
  "$bin/reel" batch "$media/template.json" "$media/rows.csv" -o "$work/reel/{{id}}.mp4" \
  --agents "$agents" --database "$batch_db" --quiet
batch_wall=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
psql "$batch_db" -qc "CHECKPOINT" 2>/dev/null || true
size_after=$(psql "$batch_db" -Atc "SELECT pg_database_size(current_database())")
psql "$batch_db" -Atc "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY 2 DESC LIMIT 6" >"$work/tables.txt"

log "reel submit --batch --wait: $rows rows on a coordinator and $agents agents"
farm_db=$base/bench_farm
psql "$pgurl" -qc "CREATE DATABASE bench_farm"
start_coordinator "$farm_db"
start_agents "$agents"
export REEL_COORDINATOR=127.0.0.1:$port REEL_SECRET_FILE=$work/secret
# The schema is there once the coordinator listens: the growth measured is the batch's.
farm_before=$(psql "$farm_db" -Atc "SELECT pg_database_size(current_database())")
start=$(now)
"$bin/reel" submit --batch "$media/rows.csv" "$media/template.json" -o "$work/farm/{{id}}.mp4" --wait --quiet >/dev/null
farm_wall=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
coordinator_rss=$(awk '/VmHWM/ { print $2 }' "/proc/$coordinator/status")
psql "$farm_db" -qc "CHECKPOINT" 2>/dev/null || true
farm_after=$(psql "$farm_db" -Atc "SELECT pg_database_size(current_database())")
unset REEL_COORDINATOR REEL_SECRET_FILE

log "a loop of $loop_rows ffmpeg commands"
x264="keyint=60:min-keyint=60:scenecut=0:open-gop=0"
mkdir -p "$work/ffmpeg"
start=$(now)
tail -n +2 "$media/rows.csv" | head -n "$loop_rows" | while IFS=, read -r id name photo ink; do
  ffmpeg -nostdin -v error -y -i "$media/intro.mp4" -loop 1 -framerate 30 -t 9 -i "$media/$photo" -i "$media/outro.mp4" \
    -i "$media/music.m4a" -filter_complex \
    "[1:v]scale=1280:720,format=yuv420p,drawtext=fontfile=$font:text='Hello, $name!':fontsize=64:fontcolor=$ink:x=80:y=560[p];[0:v][p][2:v]concat=n=3:v=1:a=0[v]" \
    -map '[v]' -map 3:a -c:v libx264 -profile:v main -preset veryfast -crf 23 -pix_fmt yuv420p -x264-params "$x264" \
    -c:a aac -b:a 128k -t 15 "$work/ffmpeg/$id.mp4"
done
ffmpeg_wall=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')

log "a loop of $loop_rows reel render commands"
mkdir -p "$work/render"
start=$(now)
tail -n +2 "$media/rows.csv" | head -n "$loop_rows" | while IFS=, read -r id name photo ink; do
  "$bin/reel" render "$media/template.json" --set "name=$name" --set "photo=$media/$photo" --set "ink=$ink" \
    -o "$work/render/$id.mp4" --agents "$agents" --database "$loop_db" --quiet
done
render_wall=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')

python3 - "$report" "$work" "$rows" "$loop_rows" "$agents" "$batch_wall" "$ffmpeg_wall" "$render_wall" \
  "$(cat "$work/batch.rss")" "$size_before" "$size_after" "$(machine)" "$farm_wall" "$coordinator_rss" "$farm_before" "$farm_after" \
  "$(cat /proc/loadavg)" <<'PY'
import csv, json, subprocess, sys
(report, work, rows, loop_rows, agents, batch_wall, ffmpeg_wall, render_wall, rss_kb, before, after, machine,
 farm_wall, coordinator_kb, farm_before, farm_after, loadavg) = sys.argv[1:]
farm_wall = float(farm_wall)
rows, loop_rows = int(rows), int(loop_rows)
batch_wall, ffmpeg_wall, render_wall = float(batch_wall), float(ffmpeg_wall), float(render_wall)
scale = rows / loop_rows
ffmpeg_n, render_n = ffmpeg_wall * scale, render_wall * scale
manifest = json.load(open(f"{work}/reel/manifest.json"))
done = sorted((e for e in manifest["entries"] if e["status"] == "done"), key=lambda e: e["row"])
reused = [e["reusedChunks"] or 0 for e in done]
chunks = [e["chunks"] or 0 for e in done]

def duration(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
                         capture_output=True, text=True).stdout.strip()
    return float(out) if out else float("nan")

# Every output of each method plays 15 s: a sample of them is probed (first, middle, last row).
probe = {}
for method in ("reel", "farm", "ffmpeg", "render"):
    n = rows if method in ("reel", "farm") else loop_rows
    ids = sorted({1, (n + 1) // 2, n})
    probe[method] = [duration(f"{work}/{method}/v{i:05d}.mp4") for i in ids]
with open(report, "w") as out:
    out.write(f"### {rows} variants of a 15 s 1280x720 template (3 s shared intro and outro)\n\n")
    out.write(f"Command: `ROWS={rows} LOOP_ROWS={loop_rows} AGENTS={agents} ops/bench-batch.sh`\n")
    out.write(f"Machine: {machine}; load average at the end: {loadavg}\n\n")
    out.write("| what | wall (s) | per variant (s) | against `reel batch` |\n|---|---:|---:|---:|\n")
    out.write(f"| `reel batch`, {rows} rows, {agents} agents | {batch_wall:.1f} | {batch_wall / rows:.2f} | 1 |\n")
    out.write(f"| `reel submit --batch --wait` to a `reel coordinator` and {agents} `reel agent`s | {farm_wall:.1f} | {farm_wall / rows:.2f} | {batch_wall / farm_wall:.2f}× |\n")
    note = "" if loop_rows == rows else f" (measured on {loop_rows} rows: {ffmpeg_wall:.1f} s, scaled to {rows})"
    out.write(f"| a loop of `ffmpeg` commands{note} | {ffmpeg_n:.1f} | {ffmpeg_n / rows:.2f} | {batch_wall / ffmpeg_n:.2f}× |\n")
    note = "" if loop_rows == rows else f" (measured on {loop_rows} rows: {render_wall:.1f} s, scaled to {rows})"
    out.write(f"| a loop of `reel render --set …`{note} | {render_n:.1f} | {render_n / rows:.2f} | {batch_wall / render_n:.2f}× |\n\n")
    out.write(f"- `reel batch` / ffmpeg loop: **{batch_wall / ffmpeg_n:.2f}×** (target ≤ 0.6×); / `reel render` loop: "
              f"**{batch_wall / render_n:.2f}×** (target ≤ 0.5×).\n")
    out.write(f"- Rows done: {len(done)} of {rows}. Chunks a row: {min(chunks) if chunks else 0}–{max(chunks) if chunks else 0}; "
              f"reused a row after the first: {min(reused[1:]) if len(reused) > 1 else 0}–{max(reused[1:]) if len(reused) > 1 else 0}"
              f" (the first row: {reused[0] if reused else 0}).\n")
    out.write(f"- Peak RSS: the `reel coordinator` process {int(coordinator_kb) / 1024:.0f} MB (target ≤ 150 MB); the `reel batch` process "
              f"(coordinator and {agents} agents in one) {int(rss_kb) / 1024:.0f} MB.\n")
    farm_per = (int(farm_after) - int(farm_before)) / rows
    out.write(f"- The farm's database grew {farm_per / 1024:.1f} KiB a variant (target ≤ 5 KB; pg_database_size, indexes and TOAST included).\n")
    out.write("- Durations of the first, middle and last outputs (s): " +
              "; ".join(f"{m} " + ", ".join(f"{d:.3f}" for d in probe[m]) for m in probe) + ".\n")
    per = (int(after) - int(before)) / rows
    out.write(f"- Database growth: {(int(after) - int(before)) / 1048576:.1f} MiB, **{per / 1024:.1f} KiB a variant** "
              f"(pg_database_size, indexes and TOAST included). Largest tables:\n")
    for line in open(f"{work}/tables.txt"):
        name, size = line.strip().split("|")
        out.write(f"  - `{name}`: {int(size) / 1048576:.2f} MiB, {int(size) / rows / 1024:.2f} KiB a variant\n")
PY

#!/usr/bin/env bash
# Incremental re-rendering's figure: what an edit costs to render again when only the chunks whose frames
# changed are rendered (incremental re-rendering, docs/incremental-rendering.md).
#
#   ops/bench-reuse.sh [OUTPUT.md]        (default BENCHMARKS-reuse.md; KEEP_WORK=1 keeps the temp dir)
#
# 1. builds reel in release (.build-release);
# 2. generates a 120 s 1280x720 30 fps composition with audio from lavfi sources (ten 12 s
#    segments with hard cuts) and a 6 s caption at 42–48 s, into a temp dir — nothing is committed;
# 3. starts a private PostgreSQL (ops/postgres.sh, port $PORT, default 54399) unless
#    DATABASE_URL names a server, and gives the renders a fresh database and data home;
# 4. renders it with `reel render` (the farm on this machine, --agents 2, 10 s chunks), edits
#    the caption's text, renders again (reusing the unchanged chunks), then renders the edited
#    composition again with --no-cache (everything anew);
# 5. compares the video packets (ffprobe, SHA-256 of each packet's data) of the re-render and
#    the --no-cache render, and writes a Markdown section with the wall times, the re-render's
#    share of the first render's, the tasks rendered again and the machine.
# Requires ops/install-deps.sh (ffmpeg/ffprobe CLIs, PostgreSQL) and Swift on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
report="${1:-BENCHMARKS-reuse.md}"
agents=2
port="${PORT:-54399}"

work=$(mktemp -d "${TMPDIR:-/tmp}/reel-bench-reuse.XXXXXX")
chmod 755 "$work"   # as root, the postgres user must reach its cluster inside
pg_started=""
cleanup() {
  if [ -n "$pg_started" ]; then ops/postgres.sh stop "$work/pg" >&2 || true; fi
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
. ops/bench-lib.sh

# 1. Build.
log "building reel (release)"
build_release reel
bin="$root/.build-release/release"

# 2. Media and composition (ops/bench-lib.sh: testsrc2, mandelbrot, life, gradients).
log "generating media in $work"
src="$work/src"; mkdir -p "$src"
make_clips "$src"
ff -f lavfi -i "sine=frequency=220:sample_rate=48000:duration=120" -f lavfi -i "sine=frequency=277:sample_rate=48000:duration=120" \
   -filter_complex "[0][1]amix=inputs=2,tremolo=f=0.5:d=0.4,pan=stereo|c0=c0|c1=c0[a]" -map "[a]" -c:a aac -b:a 192k "$src/music.m4a"

write_composition() {  # $1 = file, $2 = caption text
  local segments="" sources=(testsrc2 mandelbrot life gradients) i
  for i in $(seq 0 9); do
    segments+="${segments:+, }{\"asset\": \"${sources[$((i % 4))]}\", \"at\": $((i * 12))}"
  done
  cat > "$1" <<JSON
{
  "formatVersion": 1,
  "assets": {
    "testsrc2": {"url": "src/testsrc2.mp4"}, "mandelbrot": {"url": "src/mandelbrot.mp4"},
    "life": {"url": "src/life.mp4"}, "gradients": {"url": "src/gradients.mp4"}, "music": {"url": "src/music.m4a"}
  },
  "tracks": [
    {"id": 1, "mediaType": "video", "segments": [$segments]},
    {"id": 2, "mediaType": "audio", "segments": [{"asset": "music", "at": 0}]}
  ],
  "videoComposition": {
    "renderSize": {"width": 1280, "height": 720},
    "frameDuration": "1/30",
    "overlays": [
      {"text": "$2", "fontSize": 36, "color": "#FFFFFF",
       "frame": {"x": 40, "y": 640, "width": 1200, "height": 50}, "timeRange": {"start": 42, "duration": 6}}
    ]
  },
  "export": {"preset": "medium", "fileType": "mp4"}
}
JSON
}
write_composition "$work/comp.json" "The first caption"
"$bin/reel" validate "$work/comp.json" >&2

# 3. Database and data home.
if [ -n "${DATABASE_URL:-}" ]; then
  server=$DATABASE_URL
else
  log "starting PostgreSQL on port $port"
  server=$(ops/postgres.sh start "$work/pg" "$port")
  pg_started=1
fi
database="reel_bench_reuse_$$"
psql "$server" -qc "CREATE DATABASE $database" >&2
url=$(echo "$server" | sed -E "s#/[^/?]+(\?|$)#/$database\1#")
export REEL_DATA_HOME="$work/home"

# 4. Renders.
declare -A secs summary
render() {  # name, flags…
  local name=$1; shift
  log "render $name"
  local t0; t0=$(now)
  summary[$name]=$("$bin/reel" render "$work/comp.json" -o "$work/$name.mp4" --agents "$agents" --chunk-seconds 10 \
                   --database "$url" --quiet "$@" | tail -n 1)
  summary[$name]=${summary[$name]#"$work/"}
  secs[$name]=$(printf '%.1f' "$(echo "$(now) - $t0" | bc)")
  log "${summary[$name]} in ${secs[$name]} s"
}
render first
write_composition "$work/comp.json" "The edited caption"
render edited
render fresh --no-cache
psql "$server" -qc "DROP DATABASE $database" >&2 || true

# 5. Figures.
packets() { ffprobe -v error -select_streams v:0 -show_entries packet=pts,flags,size,data_hash -show_data_hash SHA256 -of csv=p=0 "$1"; }
packets "$work/edited.mp4" > "$work/edited.packets"
packets "$work/fresh.mp4" > "$work/fresh.packets"
count=$(wc -l < "$work/edited.packets")
if cmp -s "$work/edited.packets" "$work/fresh.packets"; then same="identical, all $count"; else same="**DIFFERENT**"; fi
changed=$(packets "$work/first.mp4" | diff - "$work/edited.packets" | grep -c '^>' || true)
share=$(echo "scale=1; 100 * ${secs[edited]} / ${secs[first]}" | bc)
cat > "$report" <<MD
## Incremental re-rendering (\`ops/bench-reuse.sh\`)

Generated by \`ops/bench-reuse.sh\` on $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD).
Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(ffmpeg -version | head -n 1 | cut -d' ' -f1-3).
Load average when it ended: $(cut -d' ' -f1-3 /proc/loadavg) (other work shares the cores: times are indicative).

Composition: 120 s at 1280x720, 30 fps (ten 12 s segments with hard cuts, stereo music), a 6 s caption
at 42–48 s. Export preset \`medium\`; \`reel render --agents $agents --chunk-seconds 10\` (the farm on this
machine: coordinator, $agents agents, PostgreSQL). The edit changes the caption's text only.

| render | wall time (s) | final message |
|---|---:|---|
| first render | ${secs[first]} | ${summary[first]} |
| after the caption edit | ${secs[edited]} | ${summary[edited]} |
| the edited composition with \`--no-cache\` | ${secs[fresh]} | ${summary[fresh]} |

The re-render took **${share} %** of the first render's wall time. Its video packets and the
\`--no-cache\` render's are ${same} (ffprobe, SHA-256 of every packet's data); ${changed} of them
differ from the first render's (the edit shows). Wall time includes starting the farm
(coordinator, agents, connecting), planning, the finaliser and downloading the output.
MD
log "wrote $report"
cat "$report"

#!/usr/bin/env bash
# What a batch's variants keep in the farm's database, table by table: ops/bench-batch.sh's
# template (3 s intro and outro, 9 s of a photo with a name in a colour, a music bed) as a
# `reel submit --batch --wait` of ROWS rows to a `reel coordinator` and 2 `reel agent`s on a
# PostgreSQL of its own, without the timing loops. Bytes do not depend on the picture's size or
# the build, so SIZE (default 320x180) keeps it quick and debug binaries will do.
#
#   ops/bench-batch-db.sh          env: ROWS (100) · SIZE (320x180) · REEL_BIN_DIR · KEEP_WORK=1
#                                       · PRE_SQL (a file run on the migrated database first)
#
# Reported: the database's growth a variant (pg_database_size after CHECKPOINT, as
# ops/bench-batch.sh reports it), each table's (pg_total_relation_size: heap, TOAST, indexes),
# row counts and updates, each index's size and scans, and the average row sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${ROWS:-100}; size=${SIZE:-320x180}; W=${size%x*}; H=${size#*x}
. ops/bench-lib.sh
use_release reel
bench_workdir batch-db
media=$work/media
mkdir -p "$media"
ff -f lavfi -i "testsrc2=size=${size}:rate=30:duration=3" "${enc[@]}" -an "$media/intro.mp4"
ff -f lavfi -i "gradients=size=${size}:rate=30:speed=0.05:seed=3" -t 3 "${enc[@]}" -an "$media/outro.mp4"
ff -f lavfi -i "sine=frequency=220:sample_rate=48000:duration=15" -f lavfi -i "sine=frequency=330:sample_rate=48000:duration=15" \
   -filter_complex "[0:a][1:a]amerge=inputs=2" -c:a aac -b:a 256k "$media/music.m4a"
for i in $(seq 1 10); do ff -f lavfi -i "gradients=size=${size}:seed=$i:n=4" -frames:v 1 -q:v 2 "$media/photo$i.jpg"; done
sed -e "s/\"width\": 1280, \"height\": 720/\"width\": $W, \"height\": $H/" > "$media/template.json" <<'JSON'
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
python3 - "$media/rows.csv" "$rows" 10 <<'PY'
import csv, sys
path, rows, photos = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
inks = ["#FFFFFF", "#FFD700", "#00E5FF", "#FF6F61", "#B2FF59"]
with open(path, "w", newline="") as f:
  w = csv.writer(f, lineterminator="\n")
  w.writerow(["id", "name", "photo", "ink"])
  for r in range(1, rows + 1):
      w.writerow([f"v{r:05d}", f"Person {r}", f"photo{(r - 1) % photos + 1}.jpg", inks[r % len(inks)]])
PY
head -n $((rows + 1)) "$media/rows.csv" > "$work/rows.csv"
cp "$media"/* "$work/"
"$bench_root/ops/postgres.sh" start "$work/pg" "$(free_port)" >"$work/pgurl"
db=$(cat "$work/pgurl")
start_coordinator "$db"
start_agents 2
if [ -n "${PRE_SQL:-}" ]; then psql "$db" -q -v ON_ERROR_STOP=1 -f "$PRE_SQL"; fi
export REEL_COORDINATOR=127.0.0.1:$port REEL_SECRET_FILE=$work/secret
psql "$db" -qc "CHECKPOINT" 2>/dev/null || true
before=$(psql "$db" -Atc "SELECT pg_database_size(current_database())")
psql "$db" -Atc "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = 'public'" > "$work/t0"
s=$(now)
"$bin/reel" submit --batch "$work/rows.csv" "$work/template.json" -o "$work/out/{{id}}.mp4" --wait --quiet >/dev/null
wall=$(awk -v a="$s" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
psql "$db" -qc "CHECKPOINT" 2>/dev/null || true
after=$(psql "$db" -Atc "SELECT pg_database_size(current_database())")
echo "rows=$rows size=$size wall=${wall}s growth/variant=$(( (after - before) / rows )) B ($(awk -v a=$after -v b=$before -v r=$rows 'BEGIN{printf "%.2f", (a-b)/r/1024}') KiB)"
psql "$db" -Atc "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = 'public'" > "$work/t1"
python3 - "$work/t0" "$work/t1" "$rows" <<'PY'
import sys
t0=dict(l.strip().split('|') for l in open(sys.argv[1]) if l.strip()); t1=dict(l.strip().split('|') for l in open(sys.argv[2]) if l.strip())
r=int(sys.argv[3])
for k,v in sorted(t1.items(), key=lambda kv:-(int(kv[1])-int(t0.get(kv[0],0)))):
    d=int(v)-int(t0.get(k,0))
    if d: print(f"  {k:20s} +{d:8d} B  {d/r:8.0f} B/variant")
PY
psql "$db" -c "SELECT c.relname, pg_relation_size(c.oid) heap, coalesce(pg_total_relation_size(nullif(c.reltoastrelid,0)),0) toast, pg_indexes_size(c.oid) idx, s.n_live_tup live, s.n_dead_tup dead, s.n_tup_upd upd, s.n_tup_hot_upd hot FROM pg_class c JOIN pg_stat_user_tables s ON s.relid=c.oid WHERE c.relname in ('jobs','tasks','events','job_assets','batches','task_failures','assets') ORDER BY 1"
psql "$db" -c "SELECT indexrelname, pg_relation_size(indexrelid) bytes, idx_scan FROM pg_stat_user_indexes WHERE relname in ('jobs','tasks','events','job_assets') ORDER BY relname, 1"
if psql "$db" -Atc "SELECT to_regclass('job_documents') IS NOT NULL" | grep -q t; then
  psql "$db" -c "SELECT avg(pg_column_size(j.*))::int job_row, avg(pg_column_size(d.*))::int docs_row, avg(pg_column_size(composition))::int comp, avg(octet_length(composition))::int comp_raw, avg(pg_column_size(plan))::int plan, avg(pg_column_size(settings))::int settings FROM jobs j JOIN job_documents d ON d.job_id = j.id WHERE batch_id IS NOT NULL"
else
  psql "$db" -c "SELECT avg(pg_column_size(j.*))::int row_, avg(pg_column_size(composition))::int comp, avg(octet_length(composition))::int comp_raw, avg(pg_column_size(plan))::int plan, avg(octet_length(plan))::int plan_raw, avg(pg_column_size(settings))::int settings, avg(octet_length(settings))::int settings_raw FROM jobs j WHERE batch_id IS NOT NULL"
fi
psql "$db" -c "SELECT kind, count(*), avg(pg_column_size(t.*))::int row_, avg(octet_length(result_key))::int key FROM tasks t GROUP BY kind"
psql "$db" -c "SELECT kind, count(*), avg(pg_column_size(e.*))::int FROM events e GROUP BY kind ORDER BY 2 DESC"
echo "outputs: $(ls "$work/out" | grep -c mp4) of $rows"

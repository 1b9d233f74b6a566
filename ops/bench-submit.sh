#!/usr/bin/env bash
# Submit time against timeline length: how long the coordinator takes to accept a
# long timeline — validate it, cut it into chunks, key every chunk (content keys walk every
# frame) and store its tasks — for 2, 8 and 16 hours of alternating stills, one segment every
# 10 s (720, 2,880 and 5,760 segments at 30 fps).
#
#   ops/bench-submit.sh [OUTPUT.md]      (default: print to stdout; KEEP_WORK=1 keeps the work dir)
#   env: HOURS ("2 8 16") · RUNS (3) submits per length, the median reported
#        CHUNK_SECONDS (the coordinator's default, 10 s) the jobs' chunk length
#        REEL_BIN_DIR: use these binaries instead of building release ones · PG_PORT (54393)
#
# PostgreSQL, one `reel coordinator` and no agent on loopback. The two stills are uploaded once
# by a first, short submission; after that a `SUBMIT` finds every asset stored and the
# coordinator plans the job before it answers, so the wall time of `reel submit` is the time to
# accept the job. The coordinator's CPU time per submit (user + system, from /proc) is reported
# beside it. Nothing here is a test: no figure is asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
report=${1:-/dev/stdout}
hours_list=${HOURS:-2 8 16}
runs=${RUNS:-3}
chunk_option=()
[ -n "${CHUNK_SECONDS:-}" ] && chunk_option=(--chunk-seconds "$CHUNK_SECONDS")

. ops/bench-lib.sh
use_release reel

bench_workdir submit

log "media: two 1280x720 stills"
ff -f lavfi -i "testsrc2=size=1280x720" -frames:v 1 "$work/a.png"
ff -f lavfi -i "smptebars=size=1280x720" -frames:v 1 "$work/b.png"

# A timeline of HOURS hours: stills a and b alternating on one video track, 10 s each.
timeline() {
  python3 - "$work/timeline-$1h.json" "$1" <<'PY'
import json, sys
path, hours = sys.argv[1], float(sys.argv[2])
count = int(hours * 3600 / 10)
segments = [{"asset": "ab"[i % 2], "at": i * 10, "duration": 10} for i in range(count)]
json.dump({"formatVersion": 1, "assets": {"a": {"url": "a.png"}, "b": {"url": "b.png"}},
           "tracks": [{"id": 1, "mediaType": "video", "segments": segments}],
           "videoComposition": {"renderSize": {"width": 1280, "height": 720}, "frameDuration": "1/30"}},
          open(path, "w"))
PY
}

pg_port=${PG_PORT:-54393}
database=$("$root/ops/postgres.sh" start "$work/pg" "$pg_port")
start_coordinator "$database"
export REEL_COORDINATOR=127.0.0.1:$port REEL_SECRET_FILE=$work/secret

# CPU seconds (user + system) the coordinator has used so far.
cpu() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$coordinator/stat"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

log "uploading the stills (a first, short submission)"
timeline 0.01
"$bin/reel" submit "$work/timeline-0.01h.json" --quiet >/dev/null

rows=()
for hours in $hours_list; do
  timeline "$hours"
  segments=$(( ${hours%.*} * 360 ))
  walls=(); cpus=()
  for run in $(seq 1 "$runs"); do
    before=$(cpu)
    started=$(now)
    job=$("$bin/reel" submit "$work/timeline-${hours}h.json" "${chunk_option[@]}" --quiet)
    ended=$(now)
    after=$(cpu)
    walls+=("$(awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.3f", b - a }')")
    cpus+=("$(awk -v a="$before" -v b="$after" 'BEGIN { printf "%.2f", b - a }')")
    log "${hours} h, run $run: job $job, ${walls[-1]} s (coordinator CPU ${cpus[-1]} s)"
  done
  chunks=$(psql "$database" -tAc "SELECT count(*) FROM tasks WHERE job_id = $job AND kind = 'video_chunk'")
  [ "$chunks" -gt 0 ] || { log "job $job was not planned:"; tail -n 5 "$work/coordinator.log" >&2; exit 1; }
  wall=$(printf '%s\n' "${walls[@]}" | median)
  used=$(printf '%s\n' "${cpus[@]}" | median)
  rows+=("| $hours h | $segments | $(( ${hours%.*} * 108000 )) | $chunks | $wall (${walls[*]}) | $used | $(awk -v w="$wall" -v h="$hours" 'BEGIN { printf "%.3f", w / h }') |")
done

{
  echo "| timeline | segments | frames | video chunks | submit wall time, s: median (runs) | coordinator CPU, s (median) | wall s per hour of timeline |"
  echo "|---|---:|---:|---:|---|---:|---:|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Command: \`ops/bench-submit.sh\` (HOURS=\"$hours_list\", RUNS=$runs${CHUNK_SECONDS:+, CHUNK_SECONDS=$CHUNK_SECONDS}). Machine: $(machine), $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')."
} >"$report"

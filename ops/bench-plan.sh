#!/usr/bin/env bash
# Planning time against timeline length: the CPU time to parse, validate and plan a
# timeline of alternating stills (one segment every 10 s), cut it into chunks and compute every
# chunk's content key (which evaluates every frame) — what the coordinator does with a job
# before it answers SUBMIT — for 2, 8 and 16 hours (720, 2,880 and 5,760 segments at 30 fps).
# Single-threaded, in release, pinned to one core; no PostgreSQL, no network (for the whole
# submit, store included, see ops/bench-submit.sh). Prints a Markdown table; nothing is asserted.
#
#   ops/bench-plan.sh                    env: HOURS ("2 8 16") · RUNS (5), the median reported
#                                        REEL_BIN_DIR: use this reel-bench instead of building one
set -euo pipefail
cd "$(dirname "$0")/.."
hours_list=${HOURS:-2 8 16}
runs=${RUNS:-5}

. ops/bench-lib.sh
if [ -n "${REEL_BIN_DIR:-}" ]; then bench=$REEL_BIN_DIR/reel-bench; else
  build_release reel-bench
  bench=$PWD/.build-release/release/reel-bench
fi

work=$(mktemp -d /tmp/reel-bench-plan.XXXXXX)
trap 'rm -rf "$work"' EXIT
ff -f lavfi -i "testsrc2=size=1280x720" -frames:v 1 "$work/a.png"
ff -f lavfi -i "smptebars=size=1280x720" -frames:v 1 "$work/b.png"

echo "| timeline | segments | frames | chunks | plan + chunks + keys, CPU s (median of $runs) |"
echo "|---|---:|---:|---:|---:|"
for hours in $hours_list; do
  python3 - "$work/timeline-${hours}h.json" "$hours" <<'PY'
import json, sys
path, hours = sys.argv[1], float(sys.argv[2])
segments = [{"asset": "ab"[i % 2], "at": i * 10, "duration": 10} for i in range(int(hours * 3600 / 10))]
json.dump({"formatVersion": 1, "assets": {"a": {"url": "a.png"}, "b": {"url": "b.png"}},
           "tracks": [{"id": 1, "mediaType": "video", "segments": segments}],
           "videoComposition": {"renderSize": {"width": 1280, "height": 720}, "frameDuration": "1/30"}},
          open(path, "w"))
PY
  log "$hours h"
  out=$(taskset -c 0 "$bench" --case plan --composition "$work/timeline-${hours}h.json" --runs "$runs")
  log "$out"
  line=$(grep '^plan:' <<<"$out")
  frames=$(sed -E 's/^plan: ([0-9]+) frames.*/\1/' <<<"$line")
  segments=$(sed -E 's/.* ([0-9]+) segments.*/\1/' <<<"$line")
  chunks=$(sed -E 's/.* ([0-9]+) chunks.*/\1/' <<<"$line")
  seconds=$(awk '/^RESULT plan / {print $4}' <<<"$out")
  echo "| $hours h | $segments | $frames | $chunks | $seconds |"
done
echo
echo "Command: \`ops/bench-plan.sh\` (HOURS=\"$hours_list\", RUNS=$runs). Machine: $(machine), $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')."

#!/usr/bin/env bash
# Cancelling a huge job while agents claim from it: how long `reel cancel`
# takes, and what it costs requests that arrive meanwhile (`reel status`, a `reel submit`, claims
# of another job).
#
#   ops/bench-cancel.sh [OUTPUT.md]      (default: print to stdout; KEEP_WORK=1 keeps the work dir)
#   env: AGENTS (200) simulated agents · CHUNKS (15000) chunks of the job cancelled · RENDER_MS (1000)
#        each simulated render (0: agents claim back to back)
#        REEL_BIN_DIR: use these binaries instead of building release ones · PG_PORT (54394)
#
# PostgreSQL, one `reel coordinator` and reel-dispatchbench's simulated agents on loopback. Two
# jobs of 2 s chunks: the big one (CHUNKS chunks, priority 1, so agents claim from it) and a
# small one (priority 0) that the agents move on to after the cancel. The agents "render" about
# 1 s a task (a steady ~AGENTS claims per second). While they do: the latency of `reel status`
# and of a small `reel submit` with no load on the job (the baseline), then `reel cancel` of the
# big job with the same two requests sent during it. Nothing here is a test: no figure is asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
report=${1:-/dev/stdout}
agents=${AGENTS:-200}
chunks=${CHUNKS:-15000}
render_ms=${RENDER_MS:-1000}

. ops/bench-lib.sh
use_release reel reel-dispatchbench
bench_workdir cancel

pg_port=${PG_PORT:-54394}
database=$("$root/ops/postgres.sh" start "$work/pg" "$pg_port")
sql() { psql "$database" -tAc "$1"; }
head -c 32 /dev/urandom | base64 > "$work/secret"
chmod 600 "$work/secret"
ff -f lavfi -i testsrc2=s=320x180 -frames:v 1 "$work/still.png"
# A timeline of $2 still segments of 10 s (2 s chunks: five per segment).
timeline() {
  python3 - "$1" "$2" <<'PY'
import json, sys
path, segments = sys.argv[1], int(sys.argv[2])
json.dump({"formatVersion": 1, "assets": {"still": {"url": "still.png"}},
           "tracks": [{"id": 1, "mediaType": "video",
                       "segments": [{"asset": "still", "at": i * 10, "duration": 10} for i in range(segments)]}],
           "videoComposition": {"renderSize": {"width": 320, "height": 180}, "frameDuration": "1/30"},
           "export": {"preset": "low"}}, open(path, "w"))
PY
}
timeline "$work/big.json" $(( chunks / 5 ))
timeline "$work/small.json" 2000
timeline "$work/tiny.json" 1

start_coordinator "$database" --lease-seconds 300
export REEL_COORDINATOR=127.0.0.1:$port REEL_SECRET_FILE=$work/secret

small=$("$bin/reel" submit "$work/small.json" --chunk-seconds 2 --quiet)
big=$("$bin/reel" submit "$work/big.json" --chunk-seconds 2 --priority 1 --quiet)
planned=$(sql "SELECT count(*) FROM tasks WHERE job_id = $big AND kind = 'video_chunk'")
log "job $big: $planned chunks; job $small: $(sql "SELECT count(*) FROM tasks WHERE job_id = $small AND kind = 'video_chunk'") chunks"

ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", 1000 * (b - a) }'; }
# Wall milliseconds of one command.
timed() { local t0; t0=$(now); "$@" >/dev/null; ms "$t0" "$(now)"; }

"$bin/reel-dispatchbench" --host 127.0.0.1 --port "$port" --secret-file "$work/secret" --agents "$agents" \
  --seconds 40 --render-ms "$render_ms" >"$work/load.txt" 2>&1 &
load=$!
pids+=($load)
# Let every agent reach its steady claim rhythm.
for i in $(seq 1 100); do
  [ "$(sql "SELECT count(*) FROM tasks WHERE job_id = $big AND state <> 'queued'")" -ge "$agents" ] && break
  sleep 0.1
done
sleep 3
status_before=$(timed "$bin/reel" status "$small")
submit_before=$(timed "$bin/reel" submit "$work/tiny.json" --quiet)

# The cancel, with a status and a submit sent 100 ms into it.
t0=$(now)
"$bin/reel" cancel "$big" >"$work/cancel.txt" 2>&1 &
cancel=$!
sleep 0.1
status_during=$(timed "$bin/reel" status "$small")
submit_during=$(timed "$bin/reel" submit "$work/tiny.json" --quiet)
wait "$cancel"
cancel_ms=$(ms "$t0" "$(now)")
claimed_small_before=$(sql "SELECT count(*) FROM tasks WHERE job_id = $small AND state <> 'queued'")
sleep 2
claimed_small_after=$(sql "SELECT count(*) FROM tasks WHERE job_id = $small AND state <> 'queued'")
open_big=$(sql "SELECT count(*) FROM tasks WHERE job_id = $big AND state IN ('queued', 'leased')")
kill -TERM "$load" 2>/dev/null || true
wait "$load" 2>/dev/null || true

{
  echo "| figure | value |"
  echo "|---|---|"
  echo "| \`reel cancel\` of a $planned-chunk job, $agents agents claiming ($render_ms ms renders) | $cancel_ms ms |"
  echo "| \`reel status\` before / during the cancel | $status_before ms / $status_during ms |"
  echo "| \`reel submit\` (1 segment) before / during the cancel | $submit_before ms / $submit_during ms |"
  echo "| claims of the other job in the 2 s after the cancel | $(( claimed_small_after - claimed_small_before )) |"
  echo "| the cancelled job's tasks still queued or leased | $open_big |"
  echo
  echo "Command: \`AGENTS=$agents CHUNKS=$chunks RENDER_MS=$render_ms ops/bench-cancel.sh\`. Machine: $(machine)."
} >"$report"

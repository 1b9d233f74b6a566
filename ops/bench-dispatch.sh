#!/usr/bin/env bash
# Dispatch figures: how fast one coordinator + PostgreSQL hands out tasks to many
# agents, what the job's tasks cost in the database, and the coordinator's memory.
#
#   ops/bench-dispatch.sh [OUTPUT.md]       (default: print to stdout; KEEP_WORK=1 keeps the work dir)
#   env: AGENTS (200) simulated agents · RUN_SECONDS (20) per measurement · JOBS (16) jobs queued
#        HOURS (4) timeline length · SEGMENTS (1440) still segments per timeline · CHUNK_SECONDS (2)
#        REEL_BIN_DIR: use these binaries instead of building release ones into .build-release
#        PHASES ("closed paced"): which of the two load phases run · PACED_SECONDS (RUN_SECONDS)
#        the paced phase's window · RENDER_MS (1000) each paced "render" · COORDINATORS (1)
#        coordinators on the one database, the agents split evenly between them (a load client
#        each): the report's first line is the farm's total, then each coordinator's own
#
# 1. builds reel and reel-dispatchbench (release) unless REEL_BIN_DIR is given;
# 2. starts a private PostgreSQL and a coordinator on loopback (storage and data in a temp dir);
# 3. generates a still and a HOURS-long composition of SEGMENTS still segments, and submits it
#    JOBS times with --chunk-seconds CHUNK_SECONDS (4 h in 2 s chunks: 7,200 tasks a job);
# 4. reports the tasks' database footprint (spec bytes per task, table and database size);
# 5. runs reel-dispatchbench twice: agents claiming back to back (throughput), then agents that
#    "render" about 1 s per task (0.5–1.5 s, starts staggered: latency under a steady load of
#    about AGENTS claims per second);
# 6. reports the coordinator's peak and current RSS.
# Results go in BENCHMARKS.md with the command and the machine. Nothing here is a test: no
# figure is asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
report=${1:-/dev/stdout}
agents=${AGENTS:-200}
run_seconds=${RUN_SECONDS:-20}
jobs=${JOBS:-16}
hours=${HOURS:-4}
segments=${SEGMENTS:-1440}
chunk_seconds=${CHUNK_SECONDS:-2}
phases=${PHASES:-closed paced}
paced_seconds=${PACED_SECONDS:-$run_seconds}
render_ms=${RENDER_MS:-1000}
coordinators=${COORDINATORS:-1}

. ops/bench-lib.sh
use_release reel reel-dispatchbench

# Under /var/tmp: the postgres user must reach the data directory when this runs as root.
work=$(mktemp -d /var/tmp/reel-bench-dispatch.XXXXXX)
chmod 755 "$work"
coordinator=""
pids=()
ports=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  "$root/ops/postgres.sh" stop "$work/pg" >/dev/null 2>&1 || true
  if [ "${KEEP_WORK:-0}" = 1 ]; then log "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

pg_port=${PG_PORT:-54391}
database=$("$root/ops/postgres.sh" start "$work/pg" "$pg_port")
sql() { psql "$database" -tAc "$1"; }
head -c 32 /dev/urandom | base64 > "$work/secret"
chmod 600 "$work/secret"

log "composition: $hours h of $segments still segments, submitted $jobs times in $chunk_seconds s chunks"
ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=s=320x180 -frames:v 1 "$work/still.png"
python3 - "$work/timeline.json" "$hours" "$segments" <<'EOF'
import json, sys
path, hours, segments = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
each = hours * 3600 / segments
assert each == int(each), "HOURS*3600 must divide evenly into SEGMENTS"
json.dump({"formatVersion": 1, "assets": {"still": {"url": "still.png"}},
           "tracks": [{"id": 1, "mediaType": "video",
                       "segments": [{"asset": "still", "at": int(i * each), "duration": int(each)} for i in range(segments)]}],
           "videoComposition": {"renderSize": {"width": 320, "height": 180}, "frameDuration": "1/30"},
           "export": {"preset": "low"}}, open(path, "w"))
EOF

# Several coordinators share the database and (being on one machine) the storage directory.
for c in $(seq 1 "$coordinators"); do
  port=$(free_port)
  "$bin/reel" coordinator --listen "127.0.0.1:$port" --database "$database" --storage "$work/storage" \
    --secret-file "$work/secret" --lease-seconds 300 >"$work/coordinator-$c.log" 2>&1 &
  pids+=($!)
  ports+=("$port")
  wait_listening "$port" "$!" "$work/coordinator-$c.log"
done
coordinator=${pids[0]}
port=${ports[0]}

export REEL_COORDINATOR=127.0.0.1:$port REEL_SECRET_FILE=$work/secret
for j in $(seq 1 "$jobs"); do
  "$bin/reel" submit "$work/timeline.json" --chunk-seconds "$chunk_seconds" --quiet >>"$work/job-ids"
done
log "waiting for $jobs job(s) to be planned"
for i in $(seq 1 600); do
  planned=$(sql "SELECT count(DISTINCT job_id) FROM tasks")
  [ "$planned" -ge "$jobs" ] && break
  [ "$i" -lt 600 ] || { log "only $planned of $jobs jobs were planned"; exit 1; }
  sleep 0.5
done
# The load client's results are a kilobyte of bytes, not media: the coordinator's finaliser
# would take each finished job, fail to join its chunks, and re-queue and re-check thousands of
# results, all inside the measured window (one such statement ran 63 s, on a core the claims
# needed). Dispatch is what this measures, so the jobs have no finalise to run.
sql "UPDATE tasks SET state = 'cancelled', finished_at = now() WHERE kind = 'finalise'" >/dev/null
tasks=$(sql "SELECT count(*) FROM tasks")
spec_bytes=$(sql "SELECT coalesce(sum(length(spec)), 0) FROM tasks")
tasks_size=$(sql "SELECT pg_total_relation_size('tasks')")
database_size=$(sql "SELECT pg_database_size(current_database())")

# CPU seconds (user + system) a process and its exited children used so far; for PostgreSQL,
# the postmaster and every backend. On a shared machine wall-clock rates vary with the other
# load, CPU per claim much less: it says what each side costs.
ticks=$(getconf CLK_TCK)
cpu_of() { awk -v t="$ticks" '{ s += $14 + $15 + $16 + $17 } END { printf "%.2f", s / t }' "$@" 2>/dev/null || echo 0; }
postmaster=$(head -1 "$work/pg/postmaster.pid")
cpu_coordinator() { cpu_of $(printf '/proc/%s/stat ' "${pids[@]}"); }
cpu_postgres() { cpu_of "/proc/$postmaster/stat" $(pgrep -P "$postmaster" | sed 's|.*|/proc/&/stat|'); }
# Runs the load client; prints its report and the CPU each side used per claim.
measure() {
  local c0 p0 out c1 p1 claims c each=()
  c0=$(cpu_coordinator); p0=$(cpu_postgres)
  for c in $(seq 1 "$coordinators"); do
    /usr/bin/time -f "client-cpu %U %S" "$bin/reel-dispatchbench" --host 127.0.0.1 --port "${ports[c - 1]}" \
      --secret-file "$work/secret" --agents "$(( agents / coordinators ))" --seconds "$2" --render-ms "$1" --name-prefix "bench$c" \
      >"$work/load-$c.txt" 2>&1 &
    each+=($!)
  done
  for c in "${each[@]}"; do wait "$c"; done
  c1=$(cpu_coordinator); p1=$(cpu_postgres)
  if [ "$coordinators" = 1 ]; then
    out=$(cat "$work/load-1.txt")
  else
    # The farm's total first (claims and rates add up), then each coordinator's report.
    out=$(cat "$work"/load-*.txt | awk '/^claims: / { n += $2; r += substr($3, 2) } END { printf "claims: %d (%d per second) over %s coordinators\n", n, r, '"$coordinators"' }'
          for c in $(seq 1 "$coordinators"); do echo "coordinator $c:"; grep -v '^client-cpu' "$work/load-$c.txt"; done
          cat "$work"/load-*.txt | awk '/^client-cpu/ { u += $2; s += $3 } END { print "client-cpu", u, s }')
  fi
  claims=$(echo "$out" | sed -n 's/^claims: \([0-9]*\).*/\1/p' | head -1)
  echo "$out" | grep -v '^client-cpu'
  echo "$out" | awk -v c="$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')" -v p="$(awk -v a="$p0" -v b="$p1" 'BEGIN { print b - a }')" -v n="${claims:-0}" '
    /^client-cpu/ { l = $2 + $3 }
    END { if (n > 0) printf "CPU per claim (ms): coordinator %.2f, PostgreSQL %.2f, load client %.2f\n", 1000 * c / n, 1000 * p / n, 1000 * l / n }'
}

closed="(not run)" paced="(not run)"
if [[ " $phases " == *" closed "* ]]; then
  log "throughput: $agents agents claiming back to back for $run_seconds s"
  closed=$(measure 0 "$run_seconds")
fi
if [[ " $phases " == *" paced "* ]]; then
  log "latency: $agents agents rendering $render_ms ms per task for $paced_seconds s"
  paced=$(measure "$render_ms" "$paced_seconds")
fi
rss_peak=$(awk '/VmHWM/ {print $2}' "/proc/$coordinator/status")
rss_now=$(awk '/VmRSS/ {print $2}' "/proc/$coordinator/status")
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

{
  echo "### Dispatch: $agents agents, $coordinators coordinator(s), $jobs × ${hours} h timeline ($segments stills) in ${chunk_seconds} s chunks"
  echo
  echo "Command: \`AGENTS=$agents RUN_SECONDS=$run_seconds JOBS=$jobs HOURS=$hours SEGMENTS=$segments CHUNK_SECONDS=$chunk_seconds PHASES=\"$phases\" PACED_SECONDS=$paced_seconds RENDER_MS=$render_ms COORDINATORS=$coordinators ops/bench-dispatch.sh\`"
  echo "Machine: $(machine)"
  echo
  echo "| figure | value |"
  echo "|---|---|"
  echo "| tasks stored | $tasks |"
  echo "| task specifications | $(mb "$spec_bytes") ($(( spec_bytes / (tasks > 0 ? tasks : 1) )) bytes per task) |"
  echo "| tasks table (with indexes) | $(mb "$tasks_size") |"
  echo "| database | $(mb "$database_size") |"
  echo "| coordinator RSS, peak / at the end | $(( rss_peak / 1024 )) MB / $(( rss_now / 1024 )) MB |"
  echo
  echo "Agents claiming back to back:"
  echo '```text'
  echo "$closed"
  echo '```'
  echo "Agents rendering $render_ms ms per task:"
  echo '```text'
  echo "$paced"
  echo '```'
} >"$report"

#!/usr/bin/env bash
# A screenshot of the operator console with a job rendering: starts a small farm on loopback
# (a private PostgreSQL, a coordinator with --http, AGENTS agents), submits the sample
# composition, and once chunks are done and others rendering saves what headless Chromium
# shows: the jobs table and the job's page (chunk strip, history).
#   ops/console-screenshot.sh [REEL] [OUT_DIR]     (default: .build/debug/reel, console-shots/)
# Writes OUT_DIR/console-jobs.png, console-job.png and console-agents.png (desktop, 1280 wide)
# and OUT_DIR/console-phone.png (390 wide). Needs ffmpeg and chromium (ops/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

. ops/lib.sh
reel=$(reel_binary console-screenshot "${1:-}")
out=${2:-console-shots}
mkdir -p "$out"
out=$(cd "$out" && pwd)
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "console-screenshot: chromium is missing (ops/install-deps.sh installs it)" >&2; exit 1; }

agents=${AGENTS:-2}
port=${PORT:-7410} http=${HTTP_PORT:-7490} pgport=${PG_PORT:-54391}
work=$(mktemp -d /tmp/reel-console-shot.XXXXXX)
chmod 755 "$work"
pids=()
log() { printf 'console-screenshot: %s\n' "$*" >&2; }
cleanup() {
  status=$?
  set +e
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${pids[i]}" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "${pids[i]}" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "${pids[i]}" 2>/dev/null
    wait "${pids[i]}" 2>/dev/null
  done
  "$root/ops/postgres.sh" stop "$work/pg" >/dev/null 2>&1
  if [ "$status" -ne 0 ]; then
    for f in "$work"/*.log; do [ -f "$f" ] && { echo "---- $f (last 20 lines)" >&2; tail -20 "$f" >&2; }; done
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

head -c 32 /dev/urandom | base64 > "$work/secret"
chmod 600 "$work/secret"
log "generating sample media"
"$root/ops/make-sample.sh" "$work/sample" >/dev/null
database=$("$root/ops/postgres.sh" start "$work/pg" "$pgport")
"$reel" coordinator --listen "127.0.0.1:$port" --http "127.0.0.1:$http" --database "$database" \
  --storage "$work/storage" --secret-file "$work/secret" >"$work/coordinator.log" 2>&1 &
pids+=($!)
for i in $(seq 1 150); do
  if bash -c "exec 3<>/dev/tcp/127.0.0.1/$http" 2>/dev/null; then break; fi
  kill -0 "${pids[0]}" 2>/dev/null || { log "the coordinator exited"; exit 1; }
  [ "$i" -lt 150 ] || { log "the console is not listening on 127.0.0.1:$http after 30 s"; exit 1; }
  sleep 0.2
done
for n in $(seq 1 "$agents"); do
  "$reel" agent --coordinator "127.0.0.1:$port" --secret-file "$work/secret" --cache "$work/cache-$n" \
    --name "render-0$n" --threads 1 >"$work/agent-$n.log" 2>&1 &
  pids+=($!)
done
export REEL_COORDINATOR=127.0.0.1:$port REEL_SECRET_FILE=$work/secret
# A few jobs, so the farm is busy a while: one paused, one urgent, two in the queue.
submit() { "$reel" submit "$work/sample/sample.json" --chunk-seconds 1 "$@"; }
submit --name "trailer v1" >/dev/null
paused=$(submit --name "teaser (on hold)")
"$reel" pause "$paused" >/dev/null
submit --name "trailer v2 (urgent)" --priority 10 >/dev/null
submit --name "social cut 9x16" >/dev/null
submit --name "trailer v3" >/dev/null
log "jobs submitted; waiting until a job has chunks done and others rendering"
job=
for i in $(seq 1 600); do
  job=$("$reel" status --json | python3 -c '
import json, sys
for j in json.load(sys.stdin)["status"]["jobs"]:
    t = j["tasks"]
    if t["done"] >= 2 and t["running"] >= 1:
        print(j["id"]); break')
  [ -n "$job" ] && break
  [ "$i" -lt 600 ] || { log "no job got going: $("$reel" status)"; exit 1; }
  sleep 0.1
done
token=$("$reel" token --expires 10m)
shot() {  # shot FILE WIDTHxHEIGHT VIEW
  local profile
  profile=$(mktemp -d "$work/chromium.XXXXXX")
  "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --hide-scrollbars \
    --user-data-dir="$profile" --window-size="$2" --virtual-time-budget=4000 --screenshot="$1" \
    "http://127.0.0.1:$http/#token=$token&view=$3" >"$work/chromium.log" 2>&1
  log "wrote $1"
}
shot "$out/console-jobs.png" 1280,720 /jobs
shot "$out/console-job.png" 1280,1100 "/jobs/$job"
shot "$out/console-agents.png" 1280,500 /agents
shot "$out/console-phone.png" 390,844 /jobs
"$reel" status

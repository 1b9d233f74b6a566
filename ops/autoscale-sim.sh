#!/usr/bin/env bash
# KEDA and the HPA played on one machine (docs/scaling.md): a private PostgreSQL, a coordinator
# serving /scale, and ops/autoscale-sim.py starting and stopping real `reel agent` processes as
# deploy/k8s-autoscaling/scaledobject.yaml would, from zero agents, for one job of the sample
# composition (ops/make-sample.sh). Prints its decisions and the figures: polling intervals from
# the submit to the first claim, agents stopped while holding a chunk, exit statuses.
#
#   ops/autoscale-sim.sh [REEL_BINARY]     (default: .build/debug/reel, then .build/release/reel)
#   env: POLL (5) s between polls · MAX_AGENTS (3) · COOLDOWN (30) s of no work before zero ·
#        STABILISATION (20) s window of scale-down recommendations · SCALE_DOWN_PERIOD (10) s
#        between removals · GRACE (45) s from SIGTERM to SIGKILL · DRAIN_SECONDS (30) the
#        agents' --drain-seconds · CHUNK_SECONDS (2) · KEEP=1 keeps the work directory
set -euo pipefail
cd "$(dirname "$0")/.."
. ops/lib.sh
reel=$(reel_binary autoscale-sim "${1:-}")
work=$(mktemp -d /var/tmp/reel-autoscale.XXXXXX)
chmod 755 "$work"
coordinator_pid=""
cleanup() {
  status=$?
  set +e
  pkill -TERM -f "reel agent --name sim-" 2>/dev/null
  [ -n "$coordinator_pid" ] && stop_process "$coordinator_pid"
  ops/postgres.sh stop "$work/pg" >/dev/null 2>&1
  if [ "$status" -ne 0 ]; then tail -20 "$work/coordinator.log" >&2 2>/dev/null; fi
  if [ "${KEEP:-0}" = 1 ]; then echo "autoscale-sim: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
database=$(ops/postgres.sh start "$work/pg" "$(free_port)")
head -c 32 /dev/urandom | base64 >"$work/secret"
chmod 600 "$work/secret"
port=$(free_port) metrics_port=$(free_port)
"$reel" coordinator --listen "127.0.0.1:$port" --database "$database" --storage "$work/storage" \
  --secret-file "$work/secret" --metrics "127.0.0.1:$metrics_port" >"$work/coordinator.log" 2>&1 &
coordinator_pid=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$metrics_port/scale" >/dev/null && break; sleep 0.2; done
ops/make-sample.sh "$work/sample" >/dev/null
python3 ops/autoscale-sim.py "$reel" "$work" "127.0.0.1:$port" "127.0.0.1:$metrics_port" "$work/sample/sample.json"

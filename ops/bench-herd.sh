#!/usr/bin/env bash
# A thundering herd: AGENTS real agents (reel-dispatchbench herd: the agent library's own
# connect and reconnect-with-backoff loop, one slot each, in one process) registered with a
# coordinator on a private PostgreSQL; the coordinator is killed (SIGNAL=KILL, default) or
# stopped (SIGNAL=TERM) and started again on the same port and database, and the agents come
# back. Reports how long until every agent had registered again (from its lost connection and
# from the restarted coordinator listening), and what each agent met on the way: refusals by
# the pre-authentication limit (too_many_connections), handshake timeouts, other failed
# attempts, and whether any agent gave up.
#
#   ops/bench-herd.sh [OUTPUT.md]        (default: print to stdout; KEEP_WORK=1 keeps the work dir)
#   env: AGENTS (1000) · SIGNAL (KILL or TERM) · DOWN_SECONDS (0): how long the coordinator
#        stays down before its restart · WAIT_SECONDS (300): longest wait for each phase
#        REEL_BIN_DIR: use these binaries instead of building release ones into .build-release
#        PG_PORT (54393) · COORDINATOR_PORT (a free one) · WORK_ROOT (/var/tmp): where the work dir goes
#
# Nothing here is a test: no figure is asserted. Results go in BENCHMARKS.md with the command
# and the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
report=${1:-/dev/stdout}
agents=${AGENTS:-1000}
signal=${SIGNAL:-KILL}
down_seconds=${DOWN_SECONDS:-0}
wait_seconds=${WAIT_SECONDS:-300}

. ops/bench-lib.sh
use_release reel reel-dispatchbench
# bench_workdir's, under WORK_ROOT (/var/tmp) if given.
work=$(mktemp -d "${WORK_ROOT:-/var/tmp}/reel-bench-herd.XXXXXX")
chmod 755 "$work"
pids=()
bench_root=$PWD
trap bench_cleanup EXIT

# Two sockets per agent (its end and the coordinator's), its cache-directory lock, PostgreSQL.
needed=$(( agents * 3 + 1024 ))
if [ "$(ulimit -n)" -lt "$needed" ]; then
  ulimit -n "$needed" 2>/dev/null || ulimit -n "$(ulimit -Hn)"
fi
[ "$(ulimit -n)" -ge "$needed" ] || { log "ulimit -n is $(ulimit -n), $needed needed for $agents agents"; exit 1; }

database=$("$bench_root/ops/postgres.sh" start "$work/pg" "${PG_PORT:-54393}")
head -c 32 /dev/urandom | base64 > "$work/secret"
chmod 600 "$work/secret"
port=${COORDINATOR_PORT:-$(free_port)}
ms() { date +%s%3N; }

start_coordinator() {
  "$bin/reel" coordinator --listen "127.0.0.1:$port" --database "$database" --storage "$work/storage" \
    --secret-file "$work/secret" >>"$work/coordinator-$1.log" 2>&1 &
  coordinator=$!
  pids+=("$coordinator")
}
# Waits until the coordinator listens (trying every 20 ms, for a precise moment).
wait_port() { wait_listening "$port" "$coordinator" "$work/coordinator-$1.log" 0.02; }

start_coordinator 1
wait_port 1
log "$agents agents registering with the coordinator on port $port"
"$bin/reel-dispatchbench" herd --host 127.0.0.1 --port "$port" --secret-file "$work/secret" --agents "$agents" \
  --work-dir "$work/agents" --ready-file "$work/ready" --restarted-file "$work/restarted" --seconds "$wait_seconds" \
  >"$work/herd.txt" 2>"$work/herd.log" &
herd=$!
pids+=("$herd")
for i in $(seq 1 $(( wait_seconds * 10 ))); do
  [ -s "$work/ready" ] && break
  kill -0 "$herd" 2>/dev/null || { cat "$work/herd.log" "$work/herd.txt" >&2; exit 1; }
  sleep 0.1
done
[ -s "$work/ready" ] || { log "the agents did not all register in $wait_seconds s"; exit 1; }

log "SIG$signal to the coordinator; restart after $down_seconds s"
killed=$(ms)
kill "-$signal" "$coordinator"
wait "$coordinator" 2>/dev/null || true
stopped=$(ms)
sleep "$down_seconds"
restarted_at=$(ms)
start_coordinator 2
wait_port 2
listening=$(ms)
echo "$listening" > "$work/restarted"
wait "$herd" || { cat "$work/herd.log" >&2; exit 1; }
end=$(ms)

# The agents the database saw register since the coordinator was started again (a
# registration writes last_heartbeat). Not their state: the rows of before a SIGKILL still say
# online, and the herd stops its agents once all are back, which takes them offline.
registered=$(psql "$database" -tAc "SELECT count(*) FROM agents WHERE name LIKE 'herd-%' AND last_heartbeat >= to_timestamp($restarted_at / 1000.0)")
statements=$(grep -c 'agent registered' "$work/coordinator-2.log" || true)
refused=$(grep -c 'too many connections' "$work/coordinator-2.log" || true)
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1000 }'; }
{
  echo "### Herd: $agents agents, coordinator SIG$signal and restart"
  echo
  echo "Command: \`AGENTS=$agents SIGNAL=$signal DOWN_SECONDS=$down_seconds ops/bench-herd.sh\`"
  echo "Machine: $(machine)"
  echo
  echo "| figure | value |"
  echo "|---|---|"
  echo "| signal to exit | $(seconds "$killed" "$stopped") s |"
  echo "| restart to listening | $(seconds "$restarted_at" "$listening") s |"
  echo "| signal to the last agent registered again | $(seconds "$killed" "$end") s (upper bound: includes the load client's exit) |"
  echo "| agents registered in the database since the restart | $registered |"
  echo "| registrations logged by the restarted coordinator | $statements |"
  echo "| logins refused as too many at once by the restarted coordinator | $refused |"
  echo
  echo '```text'
  cat "$work/herd.txt"
  echo '```'
} >"$report"

#!/usr/bin/env bash
# A two-host farm on one Linux machine, with network namespaces standing in for hosts:
#   host A (namespace reel-a-PID, 10.77.0.1/24): PostgreSQL (on A's loopback) + `reel coordinator`
#   host B (namespace reel-b-PID, 10.77.0.2/24): `reel agent`, and the operator's `reel submit`
# joined by a veth pair. B can reach A only over 10.77.0.0/24: the agent has no database access
# and reads every source from the coordinator by content hash. Submits sample/sample.json (made
# by ops/make-sample.sh), waits, and checks the output with ffprobe against `reel validate`.
# Test traffic stays inside the two namespaces; both are deleted on exit, whatever happens.
#
# Then a fault run (FAULTS=0 skips it): the same job again with a second agent on host A; while
# B's agent holds a chunk the link is cut until its lease has expired and A has rendered the rest,
# then healed. The job must finish with video packets identical to the fault-free render and no
# chunk accepted twice (B's late result is refused by its stale epoch).
#
# Then a run with two coordinators behind one name (FAULTS=0 skips it too): a second coordinator
# on host A at 10.77.0.3 shares the database and storage; host B's own /etc/hosts (the
# namespace's /etc/netns/NAME/hosts, which `ip netns exec` mounts over /etc/hosts) gives the name
# `coordinators` both addresses, and B's agents and submit use only that name. The coordinator
# B's agents are connected to is killed with SIGKILL while one holds a chunk; they must move to
# the name's other address, keep their leases, and the job finish with the same video packets.
#
#   sudo ops/netns-farm.sh [REEL_BINARY]        (default: .build/debug/reel, then .build/release/reel)
#   env: AGENTS=N agents on host B (default 1), CHUNK_SECONDS (default 2), KEEP=1 keeps the work dir,
#        FAULTS=0 skips the partition run.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

. ops/lib.sh
reel=$(reel_binary netns-farm "${1:-}")
[ "$(id -u)" = 0 ] || { echo "netns-farm: network namespaces need root; run with sudo" >&2; exit 1; }
for tool in ip ffprobe ffmpeg runuser; do
  command -v "$tool" >/dev/null || { echo "netns-farm: $tool is missing (ops/install-deps.sh installs it)" >&2; exit 1; }
done

agents=${AGENTS:-1}
chunk_seconds=${CHUNK_SECONDS:-2}
ns_a=reel-a-$$ ns_b=reel-b-$$
veth_a=rla$$ veth_b=rlb$$          # interface names are at most 15 bytes
addr_a=10.77.0.1 addr_b=10.77.0.2 addr_a2=10.77.0.3 port=7400
# Under /var/tmp: the postgres user must be able to reach the data directory.
work=$(mktemp -d /var/tmp/reel-netns.XXXXXX)
chmod 755 "$work"
pids=()

log() { printf 'netns-farm: %s\n' "$*" >&2; }

cleanup() {
  status=$?
  set +e
  # Agents first (SIGTERM: they release their task and say QUIT), then the coordinator.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop_process "${pids[i]}"; done
  if [ -d "$work/pg" ]; then ip netns exec "$ns_a" "$root/ops/postgres.sh" stop "$work/pg" >/dev/null 2>&1; fi
  rm -rf "/etc/netns/$ns_b"
  ip netns del "$ns_a" 2>/dev/null   # deleting a namespace deletes its end of the veth pair, and so the pair
  ip netns del "$ns_b" 2>/dev/null
  if [ "$status" -ne 0 ]; then
    for f in "$work"/*.log; do [ -f "$f" ] && { echo "---- $f (last 30 lines)" >&2; tail -30 "$f" >&2; }; done
  fi
  if [ "${KEEP:-0}" = 1 ]; then log "kept $work"; else rm -rf "$work"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "hosts: $ns_a ($addr_a) and $ns_b ($addr_b); work dir $work"
two_hosts "$ns_a" "$ns_b" "$veth_a" "$veth_b" "$addr_a" "$addr_b"
# Reachability without ping (not always installed): a closed port on A must answer "refused".
reach=$(ip netns exec "$ns_b" timeout 3 bash -c "exec 3<>/dev/tcp/$addr_a/9" 2>&1 || true)
case $reach in
  *"Connection refused"*) ;;
  *) log "host B cannot reach host A over the veth pair: ${reach:-timed out}"; exit 1 ;;
esac

head -c 32 /dev/urandom | base64 > "$work/secret"
chmod 600 "$work/secret"
log "generating sample media"
"$root/ops/make-sample.sh" "$work/sample" >/dev/null
expected_frames=$("$reel" validate "$work/sample/sample.json" | sed -n 's/.* \([0-9][0-9]*\) frames.*/\1/p')
[ -n "$expected_frames" ] || { log "reel validate did not report a frame count"; exit 1; }

log "host A: PostgreSQL on its loopback"
database=$(ip netns exec "$ns_a" "$root/ops/postgres.sh" start "$work/pg" 5432)
log "host A: reel coordinator --listen $addr_a:$port"
mkdir -p "$work/storage"
# A short lease so the partition run below waits seconds, not the default 30 s.
ip netns exec "$ns_a" "$reel" coordinator --listen "$addr_a:$port" --database "$database" \
  --storage "$work/storage" --secret-file "$work/secret" --lease-seconds 6 >"$work/coordinator.log" 2>&1 &
pids+=($!)
wait_listening() {  # until host B can connect to coordinator $1 (process $2) at $3:$port
  for i in $(seq 1 150); do
    if ip netns exec "$ns_b" bash -c "exec 3<>/dev/tcp/$3/$port" 2>/dev/null; then return 0; fi
    kill -0 "$2" 2>/dev/null || { log "the $1 exited"; exit 1; }
    [ "$i" -lt 150 ] || { log "the $1 is not listening on $3:$port after 30 s"; exit 1; }
    sleep 0.2
  done
}
wait_listening coordinator "${pids[0]}" "$addr_a"

for n in $(seq 1 "$agents"); do
  log "host B: reel agent #$n --coordinator $addr_a:$port"
  ip netns exec "$ns_b" "$reel" agent --coordinator "$addr_a:$port" --secret-file "$work/secret" \
    --cache "$work/cache-$n" --name "host-b-$n" --threads 1 >"$work/agent-$n.log" 2>&1 &
  pids+=($!)
done

export REEL_COORDINATOR=$addr_a:$port REEL_SECRET_FILE=$work/secret
log "host B: reel submit --wait (chunks of $chunk_seconds s)"
ip netns exec "$ns_b" timeout 900 "$reel" submit "$work/sample/sample.json" --chunk-seconds "$chunk_seconds" \
  --wait -o "$work/out.mp4" >"$work/job-id"
job=$(cat "$work/job-id")
ip netns exec "$ns_b" "$reel" status "$job"

log "checking $work/out.mp4 (job $job) with ffprobe"
probe() { ffprobe -v error -select_streams "$1" -show_entries "stream=$2" -of csv=p=0 "$work/out.mp4"; }
video_codec=$(probe v:0 codec_name)
audio_codec=$(probe a:0 codec_name)
frames=$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$work/out.mp4")
[ "$video_codec" = h264 ] || { log "video codec is '$video_codec', expected h264"; exit 1; }
[ "$audio_codec" = aac ] || { log "audio codec is '$audio_codec', expected aac"; exit 1; }
[ "$frames" = "$expected_frames" ] || { log "output has $frames frames, the composition $expected_frames"; exit 1; }
errors=$(ffmpeg -nostdin -v error -i "$work/out.mp4" -f null - 2>&1 || echo "ffmpeg exited $?")
[ -z "$errors" ] || { log "decoding the output reported: $errors"; exit 1; }
log "operator commands from host B: fetch, agents, cancel of an unknown job"
ip netns exec "$ns_b" "$reel" fetch "$job" -o "$work/fetched.mp4" --quiet
cmp -s "$work/out.mp4" "$work/fetched.mp4" || { log "reel fetch gave different bytes than submit --wait"; exit 1; }
[ "$(ip netns exec "$ns_b" "$reel" agents --json | grep -o '"name"' | wc -l)" -ge "$agents" ] || { log "reel agents does not list the agents"; exit 1; }
if ip netns exec "$ns_b" "$reel" cancel 999999 2>"$work/cancel.err"; then log "cancel of an unknown job succeeded"; exit 1; fi
log "reel cancel 999999: $(cat "$work/cancel.err")"
log "ok: job $job rendered across two hosts: $frames frames, h264 + aac, decodes cleanly"

[ "${FAULTS:-1}" = 1 ] || exit 0

# ---- The partition run ------------------------------------------------------------------------
video_md5() { ffmpeg -nostdin -v error -i "$1" -map 0:v -c copy -f md5 - ; }
expect_each_chunk_accepted_once() {
  twice=$(ip netns exec "$ns_a" psql "$database" -tAc \
    "SELECT count(*) FROM (SELECT task_id FROM events WHERE job_id = $1 AND kind = 'completed' GROUP BY task_id HAVING count(*) > 1) t")
  [ "$twice" = 0 ] || { log "job $1: $twice chunk(s) were accepted twice"; exit 1; }
}
agent_task() {  # the task the coordinator thinks agent $1 holds ("" if none)
  ip netns exec "$ns_a" "$reel" agents --json | python3 -c '
import json, sys
for a in json.load(sys.stdin)["agents"]:
    if a["name"] == sys.argv[1]: print(a.get("currentTask") or "")' "$1"
}
# --no-cache: every chunk of the first job is stored, so without it nothing would be rendered.
log "fault run: a second agent on host A; the same job again (--no-cache), submitted from host A"
ip netns exec "$ns_a" "$reel" agent --coordinator "$addr_a:$port" --secret-file "$work/secret" \
  --cache "$work/cache-a" --name host-a-1 --threads 1 >"$work/agent-a.log" 2>&1 &
pids+=($!)
ip netns exec "$ns_a" timeout 900 "$reel" submit "$work/sample/sample.json" --chunk-seconds "$chunk_seconds" \
  --no-cache --wait -o "$work/faulted.mp4" --quiet >"$work/job2-id" 2>"$work/submit2.log" &
submit_pid=$!

# host-b-1's process (`ip netns exec` runs the agent in its own place). It is stopped while the
# coordinator is asked what it holds, so a chunk seen held is still unfinished when the link goes
# down, however slow the machine.
agent_b=${pids[1]}
held=""
for _ in $(seq 1 600); do
  kill -STOP "$agent_b"
  held=$(agent_task host-b-1)
  # A video chunk ("frames [a, b)" with b > 0), so the packets compared below include its redo.
  case $held in *"frames ["*", "[1-9]*) break ;; *) held="" ;; esac
  kill -CONT "$agent_b"
  kill -0 "$submit_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$held" ] || { log "host B's agent never held a chunk of the second job"; exit 1; }
ip -n "$ns_b" link set "$veth_b" down
kill -CONT "$agent_b"
log "partitioned host B while it holds: $held"
# The coordinator must give the chunk to host A once B's lease expires; the job then finishes.
wait "$submit_pid" || { log "submit --wait failed during the partition: $(cat "$work/submit2.log")"; exit 1; }
job2=$(cat "$work/job2-id")
expired=$(ip netns exec "$ns_a" psql "$database" -tAc \
  "SELECT count(*) FROM events WHERE job_id = $job2 AND kind = 'lease_expired'")
[ "$expired" -ge 1 ] || { log "no lease expired during the partition (events: $expired)"; exit 1; }
ip -n "$ns_b" link set "$veth_b" up
log "healed host B; waiting for its agent to come back"
for i in $(seq 1 300); do
  state=$(ip netns exec "$ns_a" "$reel" agents --json | python3 -c '
import json, sys
print(next((a["state"] for a in json.load(sys.stdin)["agents"] if a["name"] == "host-b-1"), ""))')
  case $state in idle|busy) break ;; esac
  [ "$i" -lt 300 ] || { log "host B's agent did not reconnect after the partition (state: $state)"; exit 1; }
  sleep 0.2
done
expect_each_chunk_accepted_once "$job2"
[ "$(video_md5 "$work/faulted.mp4")" = "$(video_md5 "$work/out.mp4")" ] \
  || { log "the partitioned run's video packets differ from the fault-free run's"; exit 1; }
log "ok: partition past the lease: job $job2 finished on host A, video packets identical, no chunk accepted twice"

# ---- Two coordinators behind one name ---------------------------------------------------------
log "several coordinators: the agents used so far stop; a second coordinator on host A at $addr_a2"
for ((i = ${#pids[@]} - 1; i >= 1; i--)); do stop_process "${pids[i]}"; done
pids=("${pids[0]}")
ip -n "$ns_a" addr add "$addr_a2/24" dev "$veth_a"
ip netns exec "$ns_a" "$reel" coordinator --listen "$addr_a2:$port" --database "$database" \
  --storage "$work/storage" --secret-file "$work/secret" --lease-seconds 6 >"$work/coordinator-2.log" 2>&1 &
pids+=($!)
coordinator_pid() { case $1 in "$addr_a") echo "${pids[0]}" ;; "$addr_a2") echo "${pids[1]}" ;; esac; }
wait_listening "second coordinator" "${pids[1]}" "$addr_a2"
# Host B's name for the farm: one name, both coordinators' addresses.
mkdir -p "/etc/netns/$ns_b"
printf '127.0.0.1 localhost\n%s coordinators\n%s coordinators\n' "$addr_a" "$addr_a2" > "/etc/netns/$ns_b/hosts"
resolved=$(ip netns exec "$ns_b" getent ahostsv4 coordinators | awk '$2 == "STREAM" { print $1 }' | sort | tr '\n' ' ')
[ "$resolved" = "$addr_a $addr_a2 " ] || { log "host B resolves 'coordinators' to '$resolved', expected both addresses"; exit 1; }
export REEL_COORDINATOR=coordinators:$port
for n in 1 2; do
  ip netns exec "$ns_b" "$reel" agent --coordinator "coordinators:$port" --secret-file "$work/secret" \
    --cache "$work/cache-named-$n" --name "named-$n" --threads 1 >"$work/agent-named-$n.log" 2>&1 &
  pids+=($!)
done
listed=$(ip netns exec "$ns_b" "$reel" agents --json | python3 -c '
import json, sys
print(sum(1 for c in json.load(sys.stdin).get("coordinators") or [] if c.get("state") == "alive"))')
[ "$listed" -ge 2 ] || { log "reel agents lists $listed live coordinator(s), expected 2"; exit 1; }
named_task() {  # the task the farm thinks agent $1 holds, asked through the name from host B
  ip netns exec "$ns_b" "$reel" agents --json | python3 -c '
import json, sys
for a in json.load(sys.stdin)["agents"]:
    if a["name"] == sys.argv[1]: print(a.get("currentTask") or "")' "$1"
}
ip netns exec "$ns_b" timeout 900 "$reel" submit "$work/sample/sample.json" --chunk-seconds "$chunk_seconds" \
  --no-cache --wait -o "$work/named.mp4" --quiet >"$work/job3-id" 2>"$work/submit3.log" &
submit_pid=$!
# Wait until a named agent holds a video chunk, with both agents stopped while the coordinator
# is asked, then find the coordinator that agent is connected to (its established connection's
# peer) and kill it.
agent_pids=("${pids[2]}" "${pids[3]}")
held="" holder=""
for _ in $(seq 1 600); do
  kill -STOP "${agent_pids[@]}"
  for n in 1 2; do
    held=$(named_task "named-$n")
    case $held in *"frames ["*", "[1-9]*) holder=$n; break ;; *) held="" ;; esac
  done
  [ -n "$holder" ] && break
  kill -CONT "${agent_pids[@]}"
  kill -0 "$submit_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$holder" ] || { kill -CONT "${agent_pids[@]}"; log "no named agent ever held a chunk of the third job"; exit 1; }
coordinator_of() {  # the address host B's process $1 is connected to the farm at
  ip netns exec "$ns_b" ss -Htnp state established "( dport = :$port )" \
    | grep "pid=$1," | awk '{ print $4 }' | sed 's/:[0-9]*$//' | head -1
}
peer=$(coordinator_of "${agent_pids[holder-1]}")
victim=$(coordinator_pid "$peer")
[ -n "$victim" ] || { kill -CONT "${agent_pids[@]}"; log "named-$holder's connection goes to '$peer', not to a coordinator"; exit 1; }
kill -KILL "$victim"
kill -CONT "${agent_pids[@]}"
log "killed the coordinator at $peer (SIGKILL) while named-$holder holds: $held"
wait "$submit_pid" || { log "submit --wait failed after a coordinator was killed: $(cat "$work/submit3.log")"; exit 1; }
job3=$(cat "$work/job3-id")
expect_each_chunk_accepted_once "$job3"
[ "$(video_md5 "$work/named.mp4")" = "$(video_md5 "$work/out.mp4")" ] \
  || { log "the run with a coordinator killed gave video packets different from the fault-free run's"; exit 1; }
for n in 1 2; do  # each named agent reconnects (through the name) to the coordinator still up
  for i in $(seq 1 300); do
    peer_now=$(coordinator_of "${agent_pids[n-1]}")
    [ -n "$peer_now" ] && [ "$peer_now" != "$peer" ] && break
    [ "$i" -lt 300 ] || { log "named-$n is not connected to the surviving coordinator after 60 s (peer: '${peer_now:-none}')"; exit 1; }
    sleep 0.2
  done
done
log "ok: one name, two addresses: the coordinator at $peer was killed mid-job, the agents moved to the other address, job $job3's video packets are identical, no chunk accepted twice"

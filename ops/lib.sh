# Shared by the ops scripts that run a farm from a built binary (netns-farm.sh, bench-bytes.sh,
# console-screenshot.sh). Source it after `cd` to the repository root.

# The absolute path of the reel binary: $2 if given, else .build/debug/reel, else
# .build/release/reel; exits naming the script ($1) when there is none.
reel_binary() {
  local script=$1 reel=${2:-} candidate
  if [ -z "$reel" ]; then
    for candidate in .build/debug/reel .build/release/reel; do
      if [ -x "$candidate" ]; then reel=$candidate; break; fi
    done
  fi
  [ -n "$reel" ] && [ -x "$reel" ] || { echo "$script: no reel binary; build it (swift build --product reel) or pass its path" >&2; exit 1; }
  echo "$(cd "$(dirname "$reel")" && pwd)/$(basename "$reel")"
}

# Stops one process: SIGTERM (an agent releases its task and says QUIT), SIGKILL after 10 s. A
# process stopped by a fault run (SIGSTOP) is continued first, or it would not see the TERM.
stop_process() {
  kill -TERM "$1" 2>/dev/null || true
  kill -CONT "$1" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# Two hosts on one machine: network namespaces $1 and $2 joined by a veth pair whose ends are
# named $3 (in $1) and $4 (in $2), with the addresses $5 and $6 (/24), every link up. Deleting
# a namespace deletes its end of the pair, and so the pair.
two_hosts() {
  local ns_a=$1 ns_b=$2 veth_a=$3 veth_b=$4 addr_a=$5 addr_b=$6 ns
  ip netns add "$ns_a"
  ip netns add "$ns_b"
  ip link add "$veth_a" type veth peer name "$veth_b"
  ip link set "$veth_a" netns "$ns_a"
  ip link set "$veth_b" netns "$ns_b"
  ip -n "$ns_a" addr add "$addr_a/24" dev "$veth_a"
  ip -n "$ns_b" addr add "$addr_b/24" dev "$veth_b"
  for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
  ip -n "$ns_a" link set "$veth_a" up
  ip -n "$ns_b" link set "$veth_b" up
}

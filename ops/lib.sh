# Shared by the ops scripts that run a farm from a built binary (netns-farm.sh,
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

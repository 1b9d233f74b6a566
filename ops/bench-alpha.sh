#!/usr/bin/env bash
# What alpha (export.video.alpha) costs: the same 1280x720 ProRes 4444 render with the alpha
# composited and written, and with "alpha": false (an opaque picture, the path every other
# output takes).
#
#   ops/bench-alpha.sh [OUTPUT.md]      (default: print to stdout; KEEP_WORK=1 keeps the work dir)
#   env: SECONDS_OF_VIDEO (20) · RUNS (3) · REEL_BIN_DIR: use these binaries instead of building
#
# The composition: SECONDS_OF_VIDEO s of testsrc2 at 1280x720, 30 fps, drawn at half size in the
# middle of a transparent background (#00000000), under a 256x256 logo with alpha that turns and a
# text overlay. `reel render --in-process --agents 2`, preset prores4444; hyperfine, RUNS runs
# after one warm-up, medians.
set -euo pipefail
cd "$(dirname "$0")/.."
report=${1:-/dev/stdout}
seconds=${SECONDS_OF_VIDEO:-20}
runs=${RUNS:-3}
. ops/bench-lib.sh
use_release reel
command -v hyperfine >/dev/null || { log "hyperfine is missing: apt-get install hyperfine"; exit 1; }

bench_workdir alpha

log "media: $seconds s of 1280x720 at 30 fps, and a logo with alpha"
ff -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=$seconds" "${enc[@]}" "$work/clip.mp4"
ff -f lavfi -i "color=c=black:s=256x256" -vf "format=rgba,geq=r=255:g=X:b=Y:a='if(lt(hypot(X-127.5\,Y-127.5)\,100)\,255\,0)'" \
  -frames:v 1 "$work/logo.png"
python3 - "$work" "$seconds" <<'PY'
import json, sys
work, seconds = sys.argv[1], int(sys.argv[2])
def composition(alpha):
    return {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}, "logo": {"url": "logo.png"}},
            "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]}],
            "videoComposition": {
                "instructions": [{"timeRange": {"start": 0, "duration": seconds}, "backgroundColor": "#00000000",
                                  "layerInstructions": [{"track": 1, "transform": {"a": 0.5, "b": 0, "c": 0, "d": 0.5, "tx": 320, "ty": 180}}]}],
                "overlays": [
                    {"image": "logo", "frame": {"x": 980, "y": 40, "width": 256, "height": 256},
                     "animations": [{"property": "rotation", "from": 0, "to": 6.283185, "duration": 4, "repeat": True}]},
                    {"text": "Lower third", "fontSize": 48, "color": "#FFFFFFCC", "frame": {"x": 80, "y": 600, "width": 800, "height": 70}}]},
            "export": {"preset": "prores4444", "video": {"alpha": alpha}}}
json.dump(composition(True), open(f"{work}/alpha.json", "w"))
json.dump(composition(False), open(f"{work}/opaque.json", "w"))
PY

render() { echo "$bin/reel render $work/$1.json -o $work/$1.mov --in-process --agents 2 --quiet"; }
hyperfine --warmup 1 --runs "$runs" --export-json "$work/times.json" \
  -n "alpha false" "$(render opaque)" -n "alpha true" "$(render alpha)" >&2

python3 - "$work/times.json" "$report" "$seconds" "$runs" "$(machine)" <<'PY'
import json, sys
times, report, seconds, runs, machine = sys.argv[1:6]
results = {r["command"]: r for r in json.load(open(times))["results"]}
base = results["alpha false"]["median"]
with open(report, "w") as out:
    out.write(f"### Alpha: {seconds} s of 1280x720 at 30 fps, ProRes 4444\n\n")
    out.write(f"Command: `SECONDS_OF_VIDEO={seconds} RUNS={runs} ops/bench-alpha.sh`\n")
    out.write(f"Machine: {machine}\n\n")
    user = results["alpha false"]["user"]
    out.write("| render | wall median (s) | min–max (s) | wall against alpha false | user CPU mean (s) | user CPU against alpha false |\n"
              "|---|---:|---:|---:|---:|---:|\n")
    for name in ("alpha false", "alpha true"):
        r = results[name]
        out.write(f"| {name} | {r['median']:.2f} | {r['min']:.2f}–{r['max']:.2f} | {r['median'] / base:.3f}× "
                  f"| {r['user']:.2f} | {r['user'] / user:.3f}× |\n")
PY

#!/usr/bin/env bash
# Thumbnails of an edit: `reel thumbnail COMP.json` renders only the frames it is
# asked for, so a picture of an edit costs a small fraction of rendering the edit.
#
#   ops/bench-thumbnail.sh [OUTPUT.md]      (default: print to stdout; KEEP_WORK=1 keeps the work dir)
#   env: SECONDS_OF_VIDEO (30) · RUNS (3) · REEL_BIN_DIR: use these binaries instead of building
#
# The composition: SECONDS_OF_VIDEO s of 1280x720 at 30 fps (testsrc2, encoded near-losslessly
# with a keyframe every 2 s), scaled to 90 % over a coloured background, with a spinning overlay
# and a tone, export preset `medium`. Against `reel render --in-process --agents 2` (worker threads,
# no database: the cheapest full render), hyperfine times one thumbnail, five thumbnails spread
# over the edit, and a contact sheet of one picture every 2 s shrunk to 160 px wide.
set -euo pipefail
cd "$(dirname "$0")/.."
report=${1:-/dev/stdout}
seconds=${SECONDS_OF_VIDEO:-30}
runs=${RUNS:-3}
. ops/bench-lib.sh
use_release reel
command -v hyperfine >/dev/null || { log "hyperfine is missing: apt-get install hyperfine"; exit 1; }

bench_workdir thumbnail

log "media: $seconds s of 1280x720 at 30 fps"
ff -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=$seconds" -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$seconds" \
   -c:v libx264 -preset veryfast -crf 10 -g 60 -pix_fmt yuv420p -c:a aac -b:a 256k -shortest "$work/clip.mp4"
ff -f lavfi -i "color=c=orange:s=128x128,format=rgba" -frames:v 1 "$work/logo.png"
cat >"$work/edit.json" <<JSON
{"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}, "logo": {"url": "logo.png"}},
 "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]},
            {"id": 2, "mediaType": "audio", "segments": [{"asset": "clip", "at": 0}]}],
 "videoComposition": {"renderSize": {"width": 1280, "height": 720}, "frameDuration": "1/30",
   "instructions": [{"timeRange": {"start": 0, "duration": $seconds}, "backgroundColor": "#203040",
     "layerInstructions": [{"track": 1, "transform": {"a": 0.9, "b": 0, "c": 0, "d": 0.9, "tx": 64, "ty": 36}}]}],
   "overlays": [{"image": "logo", "frame": {"x": 1100, "y": 560, "width": 128, "height": 128},
     "animations": [{"property": "rotation", "from": 0, "to": 6.283185, "duration": 2, "repeat": true}]}]},
 "export": {"preset": "medium"}}
JSON

five=""
for i in 1 3 5 7 9; do five+=" --at $(python3 -c "print(round($seconds * $i / 10 + 0.37, 2))")"; done
hyperfine --warmup 1 --runs "$runs" --export-json "$work/times.json" \
  -n "render" "$bin/reel render $work/edit.json -o $work/edit.mp4 --in-process --agents 2 --quiet" \
  -n "one" "$bin/reel thumbnail $work/edit.json --at $(python3 -c "print(round($seconds * 0.57, 2))") -o $work/one.png" \
  -n "five" "$bin/reel thumbnail $work/edit.json$five -o $work/five-%d.png" \
  -n "sprite" "$bin/reel thumbnail $work/edit.json --every 2 --max-size 160x0 --sprite -o $work/sheet.jpg" >&2

python3 - "$work/times.json" "$report" "$seconds" "$runs" "$(machine)" "$bin" <<'PY'
import json, sys
times, report, seconds, runs, machine, binaries = sys.argv[1:7]
r = {x["command"]: x for x in json.load(open(times))["results"]}
render = r["render"]["median"]
import math
pictures = math.ceil(float(seconds) / 2)
with open(report, "w") as out:
    out.write(f"### Thumbnails of an edit against its render: {seconds} s of 1280x720 at 30 fps\n\n")
    out.write(f"Command: `SECONDS_OF_VIDEO={seconds} RUNS={runs} ops/bench-thumbnail.sh` (binaries: {binaries})\n")
    out.write(f"Machine: {machine}\n\n")
    out.write("| command | wall median (s) | min–max (s) | of the render |\n|---|---:|---:|---:|\n")
    rows = (("`reel render --in-process --agents 2` (the whole edit)", "render"),
            ("`reel thumbnail --at T` (one frame)", "one"),
            ("`reel thumbnail` with five `--at`", "five"),
            (f"`reel thumbnail --every 2 --max-size 160x0 --sprite` ({pictures} tiles)", "sprite"))
    for label, key in rows:
        x = r[key]
        out.write(f"| {label} | {x['median']:.2f} | {x['min']:.2f}–{x['max']:.2f} | {x['median'] / render:.3f}× |\n")
PY

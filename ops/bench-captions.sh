#!/usr/bin/env bash
# What burned-in captions (videoComposition.captions) cost: the same 1280x720 render with and
# without them, and with word-by-word highlight (a new caption picture at every word).
#
#   ops/bench-captions.sh [OUTPUT.md]      (default: print to stdout; KEEP_WORK=1 keeps the work dir)
#   env: SECONDS_OF_VIDEO (60) · RUNS (3) · REEL_BIN_DIR: use these binaries instead of building
#
# The clip: SECONDS_OF_VIDEO s of testsrc2 at 1280x720, 30 fps. Captions: a two-line cue every 2 s
# (1.6 s on screen), default style (white on a translucent box); the highlight variant marks each
# of the cue's 8 words with an inline timestamp. `reel render --in-process --agents 2`, preset
# medium; hyperfine, RUNS runs after one warm-up, medians.
set -euo pipefail
cd "$(dirname "$0")/.."
report=${1:-/dev/stdout}
seconds=${SECONDS_OF_VIDEO:-60}
runs=${RUNS:-3}
. ops/bench-lib.sh
use_release reel
command -v hyperfine >/dev/null || { log "hyperfine is missing: apt-get install hyperfine"; exit 1; }

bench_workdir captions

log "media: $seconds s of 1280x720 at 30 fps"
ff -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=$seconds" "${enc[@]}" "$work/clip.mp4"
python3 - "$work" "$seconds" <<'PY'
import json, sys
work, seconds = sys.argv[1], int(sys.argv[2])
def ts(t): return "%02d:%02d:%02d.%03d" % (t // 3600, t // 60 % 60, t % 60, round((t % 1) * 1000))
words = "The quick brown fox jumps over the dog".split()
plain, karaoke = ["WEBVTT", ""], ["WEBVTT", ""]
for k, start in enumerate(range(0, seconds, 2)):
    end = start + 1.6
    plain += [f"{ts(start)} --> {ts(end)}", f"Cue {k}: " + " ".join(words[:4]), " ".join(words[4:]), ""]
    marked = " ".join(w if i == 0 else f"<{ts(start + 0.2 * i)}>{w}" for i, w in enumerate(words))
    karaoke += [f"{ts(start)} --> {ts(end)}", marked, ""]
open(f"{work}/plain.vtt", "w").write("\n".join(plain))
open(f"{work}/karaoke.vtt", "w").write("\n".join(karaoke))
def composition(captions):
    c = {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}, "plain": {"url": "plain.vtt"}, "karaoke": {"url": "karaoke.vtt"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]}],
         "export": {"preset": "medium"}}
    if captions: c["videoComposition"] = {"captions": captions}
    return c
json.dump(composition(None), open(f"{work}/none.json", "w"))
json.dump(composition([{"asset": "plain"}]), open(f"{work}/captions.json", "w"))
json.dump(composition([{"asset": "karaoke", "highlight": "#FFFF00"}]), open(f"{work}/highlight.json", "w"))
PY

render() { echo "$bin/reel render $work/$1.json -o $work/$1.mp4 --in-process --agents 2 --quiet"; }
hyperfine --warmup 1 --runs "$runs" --export-json "$work/times.json" \
  -n "no captions" "$(render none)" -n "captions" "$(render captions)" -n "captions with highlight" "$(render highlight)" >&2

python3 - "$work/times.json" "$report" "$seconds" "$runs" "$(machine)" <<'PY'
import json, sys
times, report, seconds, runs, machine = sys.argv[1:6]
results = {r["command"]: r for r in json.load(open(times))["results"]}
base = results["no captions"]["median"]
with open(report, "w") as out:
    out.write(f"### Burned-in captions: {seconds} s of 1280x720 at 30 fps, preset medium\n\n")
    out.write(f"Command: `SECONDS_OF_VIDEO={seconds} RUNS={runs} ops/bench-captions.sh`\n")
    out.write(f"Machine: {machine}\n\n")
    out.write("| render | wall median (s) | min–max (s) | against no captions |\n|---|---:|---:|---:|\n")
    for name in ("no captions", "captions", "captions with highlight"):
        r = results[name]
        out.write(f"| {name} | {r['median']:.2f} | {r['min']:.2f}–{r['max']:.2f} | {r['median'] / base:.3f}× |\n")
PY

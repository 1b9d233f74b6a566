#!/usr/bin/env bash
# The HLS ladder: one job draws each frame once and encodes every rendition, so a
# three-rendition ladder should cost its three encodes, not three renders.
#
#   ops/bench-ladder.sh [OUTPUT.md]      (default: print to stdout; KEEP_WORK=1 keeps the work dir)
#   env: SECONDS_OF_VIDEO (30) · RUNS (3) · REEL_BIN_DIR: use these binaries instead of building
#
# The composition: SECONDS_OF_VIDEO s of 1920x1080 at 30 fps (testsrc2, encoded near-losslessly
# with a keyframe every 2 s) scaled to 90 % over a coloured background, with a tone. hyperfine
# times, each with `reel render --in-process --agents 2` (worker threads, no database):
#   ladder   the composition as an HLS ladder of 1080p (6 Mbit/s), 720p (3) and 360p (0.73),
#            maximum rate 1.5× each, x264 `veryfast`, 2 s segments (-o DIR/master.m3u8);
#   three    three MP4 renders of the same composition, one per rendition size and bit rate;
#   ffmpeg   one ffmpeg command that decodes the source once, draws the same picture (scale to
#            90 %, pad on the background), splits it into three scales and three libx264
#            encodes at the same rates (plus AAC once), i.e. the same work without Reel.
set -euo pipefail
cd "$(dirname "$0")/.."
report=${1:-/dev/stdout}
seconds=${SECONDS_OF_VIDEO:-30}
runs=${RUNS:-3}
. ops/bench-lib.sh
use_release reel
command -v hyperfine >/dev/null || { log "hyperfine is missing: apt-get install hyperfine"; exit 1; }

bench_workdir ladder

log "media: $seconds s of 1920x1080 at 30 fps"
ff -f lavfi -i "testsrc2=size=1920x1080:rate=30:duration=$seconds" -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$seconds" \
   -c:v libx264 -preset veryfast -crf 10 -g 60 -pix_fmt yuv420p -c:a aac -b:a 256k -shortest "$work/clip.mp4"

# name width height bit-rate
rungs=("1080p 1920 1080 6000000" "720p 1280 720 3000000" "360p 640 360 730000")
composition() {  # $1: the export object
  cat <<JSON
{"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
 "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]},
            {"id": 2, "mediaType": "audio", "segments": [{"asset": "clip", "at": 0}]}],
 "videoComposition": {"renderSize": {"width": 1920, "height": 1080}, "frameDuration": "1/30",
   "instructions": [{"timeRange": {"start": 0, "duration": $seconds}, "backgroundColor": "#203040",
     "layerInstructions": [{"track": 1, "transform": {"a": 0.9, "b": 0, "c": 0, "d": 0.9, "tx": 96, "ty": 54}}]}]},
 "export": $1}
JSON
}
renditions=""
three=""
for rung in "${rungs[@]}"; do
  read -r name w h rate <<<"$rung"
  renditions+="${renditions:+, }{\"name\": \"$name\", \"renderSize\": {\"width\": $w, \"height\": $h}, \"video\": {\"bitRate\": $rate, \"maxBitRate\": $((rate * 3 / 2))}}"
  # A separate render at the rendition's size: the same picture, drawn at that size.
  python3 - "$work/$name.json" "$w" "$h" "$rate" "$seconds" <<'PY'
import json, sys
path, w, h, rate, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
s = w / 1920
json.dump({"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
  "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]},
             {"id": 2, "mediaType": "audio", "segments": [{"asset": "clip", "at": 0}]}],
  "videoComposition": {"renderSize": {"width": w, "height": h}, "frameDuration": "1/30",
    "instructions": [{"timeRange": {"start": 0, "duration": float(seconds)}, "backgroundColor": "#203040",
      "layerInstructions": [{"track": 1, "transform": {"a": 0.9 * s, "b": 0, "c": 0, "d": 0.9 * s, "tx": 96 * s, "ty": 54 * s}}]}]},
  "export": {"video": {"x264Preset": "veryfast", "bitRate": rate}}}, open(path, "w"))
PY
  three+="$bin/reel render $work/$name.json -o $work/$name.mp4 --in-process --agents 2 --quiet && "
done
three+="true"
composition "{\"fileType\": \"hls\", \"segmentDuration\": 2, \"video\": {\"x264Preset\": \"veryfast\"}, \"renditions\": [$renditions]}" >"$work/ladder.json"

filter="[0:v]scale=1728:972,pad=1920:1080:96:54:color=#203040,split=3[a][b][c];[a]null[v0];[b]scale=1280:720[v1];[c]scale=640:360[v2]"
ffmpeg_cmd="ffmpeg -nostdin -v error -y -i $work/clip.mp4 -filter_complex '$filter'"
i=0
for rung in "${rungs[@]}"; do
  read -r name w h rate <<<"$rung"
  ffmpeg_cmd+=" -map '[v$i]' -c:v libx264 -preset veryfast -b:v $rate -maxrate $((rate * 3 / 2)) -bufsize $((rate * 3)) -g 60 -keyint_min 60 -sc_threshold 0 -an $work/ff-$name.mp4"
  i=$((i + 1))
done
ffmpeg_cmd+=" -map 0:a -c:a aac -b:a 192k $work/ff-audio.m4a"

hyperfine --warmup 1 --runs "$runs" --export-json "$work/times.json" \
  -n "ladder" "rm -rf $work/hls && $bin/reel render $work/ladder.json -o $work/hls/master.m3u8 --in-process --agents 2 --quiet --chunk-seconds 6" \
  -n "three" "$three" \
  -n "ffmpeg" "$ffmpeg_cmd" >&2

python3 - "$work/times.json" "$report" "$seconds" "$runs" "$(machine)" "$bin" <<'PY'
import json, sys
times, report, seconds, runs, machine, binaries = sys.argv[1:7]
r = {x["command"]: x for x in json.load(open(times))["results"]}
ladder = r["ladder"]["median"]
# CPU time (hyperfine's mean user + system, children included) is steadier than wall time on a
# machine shared with other work.
ladder_cpu = r["ladder"]["user"] + r["ladder"]["system"]
with open(report, "w") as out:
    out.write(f"### A three-rendition HLS ladder against three renders and one ffmpeg command: {seconds} s of 1080p at 30 fps\n\n")
    out.write(f"Command: `SECONDS_OF_VIDEO={seconds} RUNS={runs} ops/bench-ladder.sh` (binaries: {binaries})\n")
    out.write(f"Machine: {machine}\n\n")
    out.write("| command | wall median (s) | min–max (s) | ladder ÷ it | CPU mean, user+system (s) | ladder ÷ it (CPU) |\n"
              "|---|---:|---:|---:|---:|---:|\n")
    rows = (("`reel render --in-process --agents 2 -o DIR/master.m3u8` (the ladder)", "ladder"),
            ("three `reel render --in-process --agents 2` MP4s, one per rendition", "three"),
            ("one `ffmpeg` command: decode once, split, three scales, three libx264 encodes", "ffmpeg"))
    for label, key in rows:
        x = r[key]
        cpu = x["user"] + x["system"]
        out.write(f"| {label} | {x['median']:.2f} | {x['min']:.2f}–{x['max']:.2f} | {ladder / x['median']:.2f} "
                  f"| {cpu:.2f} | {ladder_cpu / cpu:.2f} |\n")
PY

#!/usr/bin/env bash
# The farm's end-to-end overhead: `reel render --agents 2` (a private farm on this machine:
# PostgreSQL, a coordinator and two agents on loopback, chunks joined without re-encoding)
# against the single ffmpeg command that encodes the same clip with the same x264 settings.
#
#   ops/bench-overhead.sh [OUTPUT.md]      (default: print to stdout; KEEP_WORK=1 keeps the work dir)
#   env: SECONDS_OF_VIDEO (20) · RUNS (3) · REEL_BIN_DIR: use these binaries instead of building
#
# The clip: SECONDS_OF_VIDEO s of 1280x720 at 30 fps with a tone (ffmpeg's lavfi sources, encoded
# near-losslessly so decoding it costs little). The composition plays it whole with export
# preset `medium`: H.264 Main, CRF 23, x264 preset medium, closed 2 s GOPs, mbtree=0,
# sync-lookahead=0, AAC 128 kb/s. ffmpeg gets exactly those x264 parameters and its own
# automatic threading; Reel renders with --no-cache. Timings are hyperfine's (RUNS runs after one warm-up, which also starts
# the private PostgreSQL cluster that later runs reuse); the figure is the ratio of the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
report=${1:-/dev/stdout}
seconds=${SECONDS_OF_VIDEO:-20}
runs=${RUNS:-3}
. ops/bench-lib.sh
use_release reel
command -v hyperfine >/dev/null || { log "hyperfine is missing: apt-get install hyperfine"; exit 1; }

bench_workdir overhead

log "media: $seconds s of 1280x720 at 30 fps"
ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=$seconds" \
  -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$seconds" \
  -c:v libx264 -preset veryfast -crf 10 -pix_fmt yuv420p -c:a aac -b:a 256k -shortest "$work/clip.mp4"
cat >"$work/clip.json" <<JSON
{"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
 "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]},
            {"id": 2, "mediaType": "audio", "segments": [{"asset": "clip", "at": 0}]}],
 "export": {"preset": "medium"}}
JSON

x264="keyint=60:min-keyint=60:scenecut=0:open-gop=0:stitchable=1:repeat-headers=0:sliced-threads=0:sync-lookahead=0:mbtree=0"
ffmpeg_command="ffmpeg -nostdin -v error -y -i $work/clip.mp4 -c:v libx264 -profile:v main -preset medium -crf 23 -pix_fmt yuv420p -x264-params $x264 -c:a aac -b:a 128k $work/ffmpeg.mp4"
# --no-cache: every run renders (otherwise the runs after the first reuse its chunks).
reel_command="$bin/reel render $work/clip.json -o $work/reel.mp4 --agents 2 --no-cache --quiet"
hyperfine --warmup 1 --runs "$runs" --export-json "$work/times.json" -n "ffmpeg" "$ffmpeg_command" -n "reel render --agents 2" "$reel_command" >&2

python3 - "$work/times.json" "$report" "$seconds" "$runs" "$(machine)" <<'PY'
import json, sys
times, report, seconds, runs, machine = sys.argv[1:6]
results = {r["command"]: r for r in json.load(open(times))["results"]}
ff, reel = results["ffmpeg"], results["reel render --agents 2"]
with open(report, "w") as out:
    out.write(f"### reel render --agents 2 against ffmpeg: {seconds} s of 1280x720, preset medium\n\n")
    out.write(f"Command: `SECONDS_OF_VIDEO={seconds} RUNS={runs} ops/bench-overhead.sh`\n")
    out.write(f"Machine: {machine}\n\n")
    out.write("| command | wall median (s) | wall min–max (s) | CPU user+sys (s) |\n|---|---:|---:|---:|\n")
    for name, r in (("ffmpeg (one command, automatic threads)", ff), ("reel render --agents 2", reel)):
        out.write(f"| {name} | {r['median']:.2f} | {r['min']:.2f}–{r['max']:.2f} | {r['user'] + r['system']:.2f} |\n")
    out.write(f"\nReel / ffmpeg: **{reel['median'] / ff['median']:.2f}×** wall time (medians), "
              f"{(reel['user'] + reel['system']) / (ff['user'] + ff['system']):.2f}× CPU time (hyperfine's mean user+sys of the "
              f"process and its children; the private PostgreSQL server is not a child and not counted).\n")
PY

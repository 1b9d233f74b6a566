#!/usr/bin/env bash
# What loudness normalisation (export.audio.loudness) costs on a long mix: the measuring pass
# alone (`reel loudness COMP`: the mix rendered once through libebur128, no picture), and a render
# with normalisation against the same render without it (`reel render --in-process`).
#
#   ops/bench-loudness.sh [OUTPUT.md]      (default: print to stdout; KEEP_WORK=1 keeps the work dir)
#   env: MINUTES (60) · REEL_BIN_DIR: use these binaries instead of building
#
# The composition: MINUTES minutes of two audio tracks (pink noise at two levels, and a 220 Hz
# tone with a slow tremolo, each a 60 s source placed end to end), under a 64x64 still at one
# frame per second, so the picture costs next to nothing and the audio task is the render.
# Preset medium (AAC 128 kb/s). Each command runs once (they are long); the figure is wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
report=${1:-/dev/stdout}
minutes=${MINUTES:-60}
. ops/bench-lib.sh
use_release reel

bench_workdir loudness

log "media: 60 s sources for a $minutes min mix"
ff -f lavfi -i "anoisesrc=color=pink:sample_rate=48000:amplitude=0.5:seed=1:duration=60" \
   -af "volume='0.2+0.8*abs(sin(2*PI*t/20))':eval=frame,aformat=channel_layouts=stereo" -c:a aac -b:a 256k "$work/noise.m4a"
ff -f lavfi -i "sine=frequency=220:sample_rate=44100:duration=60" \
   -af "tremolo=f=0.5:d=0.7,aformat=channel_layouts=stereo" -c:a aac -b:a 256k "$work/tone.m4a"
ff -f lavfi -i "color=c=gray:size=64x64" -frames:v 1 "$work/still.png"

python3 - "$work" "$minutes" <<'PY'
import json, sys
work, minutes = sys.argv[1], int(sys.argv[2])
def composition(loudness):
    seconds = 60 * minutes
    c = {"formatVersion": 1,
         "assets": {"still": {"url": "still.png"}, "noise": {"url": "noise.m4a"}, "tone": {"url": "tone.m4a"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "still", "at": 0, "duration": seconds}]},
                    {"id": 2, "mediaType": "audio", "segments": [{"asset": "noise", "at": 60 * k} for k in range(minutes)]},
                    {"id": 3, "mediaType": "audio", "segments": [{"asset": "tone", "at": 60 * k} for k in range(minutes)]}],
         "audioMix": [{"track": 3, "volume": 0.3}],
         "videoComposition": {"renderSize": {"width": 64, "height": 64}, "frameDuration": 1},
         "export": {"preset": "medium", "video": {"gopDuration": 10}}}
    if loudness: c["export"]["audio"] = {"loudness": loudness}
    return c
for name, loudness in (("plain", None), ("ebur128", "ebuR128")):
    json.dump(composition(loudness), open(f"{work}/{name}.json", "w"))
PY

calc() { python3 -c "print($1)"; }
timed() { local start end; start=$(now); "$@" >"$work/last.out"; end=$(now); calc "$end - $start"; }
log "measuring pass: reel loudness plain.json"
measure=$(timed "$bin/reel" loudness "$work/plain.json")
measured=$(cat "$work/last.out")
log "render without normalisation"
plain=$(timed "$bin/reel" render "$work/plain.json" -o "$work/plain.mp4" --in-process --agents 2 --quiet)
log "render normalised to ebuR128"
normalised=$(timed "$bin/reel" render "$work/ebur128.json" -o "$work/ebur128.mp4" --in-process --agents 2 --quiet)
ffmpeg_says=$(ffmpeg -nostdin -nostats -i "$work/ebur128.mp4" -af ebur128=peak=true -f null - 2>&1 | \
  awk '/Summary/ {s=1} s && /I:/ {i=$2} s && /Peak:/ {p=$2} END {print i " LUFS, true peak " p " dBTP"}')

{
  echo "### Loudness normalisation on a $minutes-minute mix"
  echo
  echo "Command: \`MINUTES=$minutes ops/bench-loudness.sh\`"
  echo "Machine: $(machine)"
  echo
  echo "| run | wall (s) |"
  echo "|---|---:|"
  printf '| `reel loudness plain.json` (the measuring pass alone: mix + libebur128) | %.1f |\n' "$measure"
  printf '| `reel render --in-process` without `loudness` | %.1f |\n' "$plain"
  printf '| `reel render --in-process` with `"loudness": "ebuR128"` | %.1f |\n' "$normalised"
  echo
  printf 'Normalisation adds %.1f s (%.2f× the plain render). The mix measured: %s\n' \
    "$(calc "$normalised - $plain")" "$(calc "$normalised / $plain")" "$measured"
  echo "FFmpeg measures the normalised output at $ffmpeg_says."
} >"$report"

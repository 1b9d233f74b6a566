#!/usr/bin/env bash
# Audio mixer benchmark: Reel's mixer against FFmpeg's `volume` + `amix` on ONE core,
# mixing the same three stereo tracks with the same volume ramps. Prints a Markdown table.
#
#   ops/bench-mixer.sh [SECONDS]        (default 300: five minutes of audio)
#   env: RUNS (5) runs per side, the median reported · LEGACY_RUNS (1) runs of the old mixer
#
# Sources: three SECONDS-long 48 kHz stereo WAV files (32-bit float, so decoding is a copy on
# both sides) made here with lavfi: "music", "voice" and "room". Volume curves: the music fades
# in over 2 s, ducks to 0.3 under the voice for 20 s of every minute (1 s ramps) and fades out
# over the last 3 s; the voice fades in and out at each of its minutes; the room tone holds 0.5.
#
# Reel: `reel-bench --case mix` (release build, `taskset -c 0`) mixes the composition in the
# 4096-sample blocks `reel render` uses — decoding through libav, the gain curves, the sum and
# the soft limiter — and reports its thread's CPU time. `--case mix-legacy` runs the mixer as
# it was before its rewrite per block (a copy kept in reel-bench) on the same composition. FFmpeg:
# `volume=eval=frame` (the same ramps as an expression of t, evaluated once per audio frame) on
# each input and `amix=normalize=0`, with -threads 1 -filter_threads 1 -filter_complex_threads 1,
# pinned, to the null muxer; its figure is the process's CPU time (utime + stime), so it
# includes demuxing and decoding as Reel's does.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
runs=${RUNS:-5}
legacy_runs=${LEGACY_RUNS:-1}

. ops/bench-lib.sh
if [ -n "${REEL_BIN_DIR:-}" ]; then bench=$REEL_BIN_DIR/reel-bench; else
  build_release reel-bench
  bench=$PWD/.build-release/release/reel-bench
fi

work=$(mktemp -d /tmp/reel-bench-mixer.XXXXXX)
trap 'rm -rf "$work"' EXIT
log "sources: 3 × $seconds s of 48 kHz stereo float WAV"
ff -f lavfi -i "aevalsrc=0.5*sin(2*PI*220*t)+0.2*sin(2*PI*331*t)|0.5*sin(2*PI*221*t)+0.2*sin(2*PI*330*t):s=48000:d=$seconds" -c:a pcm_f32le "$work/music.wav"
ff -f lavfi -i "aevalsrc=0.6*sin(2*PI*180*t)*(0.6+0.4*sin(2*PI*3*t))|0.6*sin(2*PI*181*t)*(0.6+0.4*sin(2*PI*3*t)):s=48000:d=$seconds" -c:a pcm_f32le "$work/voice.wav"
ff -f lavfi -i "anoisesrc=color=pink:amplitude=0.3:seed=7:r=48000:d=$seconds,aformat=channel_layouts=stereo" -c:a pcm_f32le "$work/room.wav"

# The composition and, from the same ramp lists, FFmpeg's volume expressions.
python3 - "$work" "$seconds" <<'PY'
import json, sys
work, seconds = sys.argv[1], int(sys.argv[2])
music = [(0, 1, 0, 2)]                       # (from, to, start, duration)
voice = []
for minute in range(0, seconds // 60):
    s = minute * 60 + 20
    if s + 21 >= seconds - 3: break
    music += [(1, 0.3, s, 1), (0.3, 1, s + 20, 1)]
    voice += [(0, 1, s, 1), (1, 0, s + 20, 1)]
music.append((1, 0, seconds - 3, 3))
def ramps(lst): return [{"from": a, "to": b, "timeRange": {"start": s, "duration": d}} for a, b, s, d in lst]
def expression(lst, base):
    # AVFoundation semantics: base before the first ramp, linear inside one, its `to` after it.
    out = str(base)
    for a, b, s, d in lst:
        out = f"if(lt(t,{s}),{out},if(lt(t,{s + d}),{a}+({b}-{a})*(t-{s})/{d},{b}))"
    return out
tracks = [{"id": i + 1, "mediaType": "audio", "segments": [{"asset": name, "at": 0, "sourceRange": {"start": 0, "duration": seconds}}]}
          for i, name in enumerate(["music", "voice", "room"])]
json.dump({"formatVersion": 1, "assets": {n: {"url": f"{n}.wav"} for n in ["music", "voice", "room"]},
           "tracks": tracks,
           "audioMix": [{"track": 1, "volumeRamps": ramps(music)},
                        {"track": 2, "volume": 0, "volumeRamps": ramps(voice)},
                        {"track": 3, "volume": 0.5}],
           "videoComposition": {"renderSize": {"width": 320, "height": 240}, "frameDuration": "1/25"},
           "export": {"audio": {"sampleRate": 48000, "channels": 2}}},
          open(f"{work}/mix.json", "w"))
open(f"{work}/music.expr", "w").write(expression(music, 1))
open(f"{work}/voice.expr", "w").write(expression(voice, 0))
PY

log "Reel: reel-bench --case mix, $runs runs"
reel_s=$(taskset -c 0 "$bench" --case mix --composition "$work/mix.json" --runs "$runs" | awk '/^RESULT mix / {print $4}')
log "Reel's mixer before its rewrite per block: reel-bench --case mix-legacy, $legacy_runs run(s)"
legacy_s=$(taskset -c 0 "$bench" --case mix-legacy --composition "$work/mix.json" --runs "$legacy_runs" | awk '/^RESULT mix-legacy / {print $4}')

graph="[0]volume=eval=frame:volume='$(cat "$work/music.expr")'[a];[1]volume=eval=frame:volume='$(cat "$work/voice.expr")'[b];[2]volume=0.5[c];[a][b][c]amix=inputs=3:normalize=0:duration=longest"
ff_cpu() {
  taskset -c 0 ffmpeg -nostdin -hide_banner -benchmark -threads 1 -filter_threads 1 -filter_complex_threads 1 \
    -i "$work/music.wav" -i "$work/voice.wav" -i "$work/room.wav" -filter_complex "$graph" -f null - 2>&1 \
    | awk '/bench: utime/ { split($0, a, "utime="); split(a[2], u, "s"); split($0, b, "stime="); split(b[2], s, "s"); printf "%.3f\n", u[1] + s[1] }'
}
log "FFmpeg: volume + amix, $runs runs"
ff_s=$(for _ in $(seq 1 "$runs"); do ff_cpu; done | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')

samples=$((seconds * 48000))
cpu=$(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')
cat <<MD
| mixer (3 stereo tracks, 48 kHz, $seconds s of audio, one core) | time (s, median) | M samples/s (per channel) | × real time |
|---|---:|---:|---:|
| Reel \`AudioMixer\` before its rewrite per block (per-sample \`Rational\` gain, \`tanh\`) | $legacy_s | $(awk -v n="$samples" -v s="$legacy_s" 'BEGIN { printf "%.1f", n / s / 1e6 }') | $(awk -v d="$seconds" -v s="$legacy_s" 'BEGIN { printf "%.0f", d / s }') |
| Reel \`AudioMixer\` (decode, gain curves, sum, limiter) | $reel_s | $(awk -v n="$samples" -v s="$reel_s" 'BEGIN { printf "%.1f", n / s / 1e6 }') | $(awk -v d="$seconds" -v s="$reel_s" 'BEGIN { printf "%.0f", d / s }') |
| FFmpeg \`volume=eval=frame\` ×2 + \`volume\` + \`amix=normalize=0\` (CPU time) | $ff_s | $(awk -v n="$samples" -v s="$ff_s" 'BEGIN { printf "%.1f", n / s / 1e6 }') | $(awk -v d="$seconds" -v s="$ff_s" 'BEGIN { printf "%.0f", d / s }') |

Machine: $(nproc) cores, $cpu; \`ops/bench-mixer.sh $seconds\` (RUNS=$runs, LEGACY_RUNS=$legacy_runs).
Speed-up over the mixer before its rewrite per block: $(awk -v a="$legacy_s" -v b="$reel_s" 'BEGIN { printf "%.1f", a / b }')×; against FFmpeg: $(awk -v a="$ff_s" -v b="$reel_s" 'BEGIN { printf "%.2f", a / b }')× (FFmpeg time / Reel time).
MD

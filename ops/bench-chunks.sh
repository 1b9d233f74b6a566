#!/usr/bin/env bash
# Chunked rendering's figures: what it costs in bitrate and quality, and how fast the
# finaliser joins chunks compared with copying the same bytes with cat.
#
#   ops/bench-chunks.sh [OUTPUT.md]        (default BENCHMARKS-chunks.md; KEEP_WORK=1 keeps the temp dir)
#
# 1. builds reel and reel-chunkbench in release (.build-release);
# 2. generates a 60 s 1280x720 30 fps composition with audio from lavfi sources (five 12 s
#    segments with hard cuts: testsrc2, an upscaled mandelbrot zoom, life, a zooming still,
#    moving gradients; music; a caption) into a temp dir — nothing is committed;
# 3. renders it with the same export settings (preset medium → CRF 23) as one chunk, 10 s
#    chunks and 2 s chunks (--agents 2), plus a near-lossless reference (export.video.crf 4);
# 4. measures video bytes/bitrate (ffprobe packet sizes) and per-frame PSNR-Y of every output
#    against the single-chunk output and against the CRF 4 reference;
# 5. times the finaliser alone (reel-chunkbench) on the kept chunks against `cat` of the same
#    bytes into a file on the same disk + sync, median of 5 each;
# 6. writes a Markdown section with every figure, the commands and the machine.
# Requires ops/install-deps.sh (ffmpeg/ffprobe CLIs) and Swift on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
report="${1:-BENCHMARKS-chunks.md}"
runs=5
agents=2

work=$(mktemp -d "${TMPDIR:-/tmp}/reel-bench-chunks.XXXXXX")
if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work dir: $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
. ops/bench-lib.sh

# 1. Build.
log "building reel and reel-chunkbench (release)"
build_release reel reel-chunkbench
bin="$root/.build-release/release"

# 2. Media and composition (ops/bench-lib.sh: testsrc2, mandelbrot, life, gradients; near-lossless).
log "generating media in $work"
src="$work/src"; mkdir -p "$src"
make_clips "$src"
# A zooming still: one testsrc2-free photo-like frame (a mandelbrot detail, blurred a little),
# panned and zoomed over 12 s.
ff -f lavfi -i "mandelbrot=size=1920x1080:start_scale=0.02:start_x=-0.743643887037151:start_y=0.13182590420533" \
   -frames:v 1 -vf "gblur=sigma=1.5" "$src/still.png"
ff -loop 1 -framerate 30 -i "$src/still.png" \
   -vf "zoompan=z='1+0.0015*on':x='iw/2-(iw/zoom/2)+on*0.5':y='ih/2-(ih/zoom/2)':d=1:s=1280x720:fps=30" \
   -t 12 "${enc[@]}" "$src/zoom.mp4"
# Music: a chord with a slow tremolo and a little noise, 60 s stereo.
ff -f lavfi -i "sine=frequency=220:sample_rate=48000:duration=60" -f lavfi -i "sine=frequency=277:sample_rate=48000:duration=60" \
   -f lavfi -i "anoisesrc=color=pink:amplitude=0.05:sample_rate=48000:duration=60" \
   -filter_complex "[0][1][2]amix=inputs=3,tremolo=f=0.5:d=0.4,pan=stereo|c0=c0|c1=c0[a]" -map "[a]" -c:a aac -b:a 192k "$src/music.m4a"

write_composition() {  # $1 = file, $2 = extra export JSON (without braces), may be empty
  cat > "$1" <<JSON
{
  "formatVersion": 1,
  "assets": {
    "testsrc2": {"url": "src/testsrc2.mp4"}, "mandelbrot": {"url": "src/mandelbrot.mp4"},
    "life": {"url": "src/life.mp4"}, "zoom": {"url": "src/zoom.mp4"},
    "gradients": {"url": "src/gradients.mp4"}, "music": {"url": "src/music.m4a"}
  },
  "tracks": [
    {"id": 1, "mediaType": "video", "segments": [
      {"asset": "testsrc2", "at": 0}, {"asset": "mandelbrot", "at": 12}, {"asset": "life", "at": 24},
      {"asset": "zoom", "at": 36}, {"asset": "gradients", "at": 48}
    ]},
    {"id": 2, "mediaType": "audio", "segments": [{"asset": "music", "at": 0}]}
  ],
  "videoComposition": {
    "renderSize": {"width": 1280, "height": 720},
    "frameDuration": "1/30",
    "instructions": [
      {"timeRange": {"start": 0, "duration": 12}, "layerInstructions": [{"track": 1}]},
      {"timeRange": {"start": 12, "duration": 24},
       "layerInstructions": [{"track": 1, "transform": {"a": 2, "b": 0, "c": 0, "d": 2, "tx": 0, "ty": 0}}]},
      {"timeRange": {"start": 36, "duration": 24}, "layerInstructions": [{"track": 1}]}
    ],
    "overlays": [
      {"text": "Reel chunk benchmark · 分块编码测试", "fontSize": 36, "color": "#FFFFFF",
       "frame": {"x": 40, "y": 640, "width": 1200, "height": 50}}
    ]
  },
  "export": {"preset": "medium", "fileType": "mp4"$2}
}
JSON
}
write_composition "$work/comp.json" ''
write_composition "$work/comp-crf4.json" ', "video": {"crf": 4}'
write_composition "$work/comp-faststart.json" ', "optimizeForNetworkUse": true'
"$bin/reel" validate "$work/comp.json" >&2

# 3. Renders (in-process: the same chunk pipeline as the farm, and --keep-chunks keeps its
# chunk files for step 5). The single-chunk render uses --agents 1: with --agents 2 the planner makes at
# least two chunks (one per agent) even for --chunk-seconds 1000. Agents change only the
# chunking, never the encoder settings (--encoder-threads is the default, 4, for all).
declare -A render_cmd render_secs
render() {  # name, chunk seconds, agents, composition, extra flags…
  local name=$1 secs=$2 n=$3 comp=$4; shift 4
  local cmd=("$bin/reel" render "$comp" -o "$work/$name.mp4" --in-process --agents "$n" --chunk-seconds "$secs" --quiet "$@")
  log "render $name: ${cmd[*]#$work/}"
  local t0; t0=$(now)
  "${cmd[@]}" >&2
  render_secs[$name]=$(echo "$(now) - $t0" | bc)
  render_cmd[$name]="reel render $(basename "$comp") -o $name.mp4 --in-process --agents $n --chunk-seconds $secs${*:+ $*}"
}
render single 1000 1 "$work/comp.json"
render c10 10 $agents "$work/comp.json" --keep-chunks
render c2 2 $agents "$work/comp.json" --keep-chunks
render ref 1000 1 "$work/comp-crf4.json"

# 4. Sizes and quality.
frames=$(ffprobe -v error -count_packets -select_streams v:0 -show_entries stream=nb_read_packets -of csv=p=0 "$work/single.mp4")
duration=$(echo "scale=6; $frames / 30" | bc)
video_bytes() { ffprobe -v error -select_streams v:0 -show_entries packet=size -of csv=p=0 "$1" | awk '{s += $1} END {print s}'; }
# PSNR-Y per frame of $1 against $2: prints "mean_of_frames min identical_frames global"
# (global = PSNR of the mean MSE over all frames, which stays finite when frames are identical;
# the mean of per-frame PSNR counts only frames that differ).
psnr() {
  local stats="$work/psnr-$(basename "$1" .mp4)-$(basename "$2" .mp4).log"
  ff -i "$1" -i "$2" -lavfi "[0:v][1:v]psnr=stats_file=$stats" -f null -
  awk '{ for (i = 1; i <= NF; i++) { split($i, kv, ":"); v[kv[1]] = kv[2] }
         n++; mse += v["mse_y"]
         if (v["psnr_y"] == "inf") same++; else { sum += v["psnr_y"]; finite++; if (min == "" || v["psnr_y"] < min) min = v["psnr_y"] } }
       END { g = (mse == 0) ? "inf" : sprintf("%.3f", 10 * log(255 * 255 / (mse / n)) / log(10))
             printf "%s %s %d %s\n", (finite ? sprintf("%.3f", sum / finite) : "inf"), (min == "" ? "inf" : sprintf("%.3f", min)), same + 0, g }' "$stats"
}
declare -A bytes kbps vs_single vs_ref
for name in single c10 c2 ref; do
  bytes[$name]=$(video_bytes "$work/$name.mp4")
  kbps[$name]=$(echo "scale=1; ${bytes[$name]} * 8 / $duration / 1000" | bc)
  [ "$name" = ref ] && continue
  vs_ref[$name]=$(psnr "$work/$name.mp4" "$work/ref.mp4")
  [ "$name" = single ] || vs_single[$name]=$(psnr "$work/$name.mp4" "$work/single.mp4")
done
pct() { echo "scale=2; 100 * (${bytes[$1]} - ${bytes[single]}) / ${bytes[single]}" | bc; }
field() { echo "$1" | cut -d' ' -f"$2"; }
db() { echo "scale=3; $(field "${vs_ref[$1]}" 1) - $(field "${vs_ref[single]}" 1)" | bc; }
ffmpeg_check=$(for name in single c10 c2; do ffmpeg -nostdin -v error -i "$work/$name.mp4" -f null - 2>&1; done | wc -l)

# 5. Finaliser vs cat, on the kept chunks of the 10 s and 2 s renders.
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
declare -A same_join fin fin_fast cat_med chunk_bytes nchunks
for name in c10 c2; do
  dir=$(ls -d "$work"/.$name.partial-*.mp4.chunks)
  secs=$([ $name = c10 ] && echo 10 || echo 2)
  nchunks[$name]=$(ls "$dir"/chunk-*.mp4 | wc -l)
  chunk_bytes[$name]=$(cat "$dir"/chunk-*.mp4 "$dir"/audio.m4a | wc -c)
  log "finaliser on $name (${nchunks[$name]} chunks)"
  fin[$name]=$("$bin/reel-chunkbench" "$work/comp.json" "$dir" "$work/joined-$name.mp4" --agents $agents --chunk-seconds $secs --runs $runs \
               | tee /dev/stderr | awk '/^median:/ {print $2}')
  cmp -s "$work/joined-$name.mp4" "$work/$name.mp4" && same_join[$name]="byte-identical to" || same_join[$name]="DIFFERENT from"
  fin_fast[$name]=$("$bin/reel-chunkbench" "$work/comp-faststart.json" "$dir" "$work/joined-fast-$name.mp4" --agents $agents --chunk-seconds $secs --runs $runs \
                    | tee /dev/stderr | awk '/^median:/ {print $2}')
  cat_med[$name]=$(for i in $(seq $runs); do
      rm -f "$work/cat-$name.bin"
      t0=$(now); cat "$dir"/chunk-*.mp4 "$dir"/audio.m4a > "$work/cat-$name.bin"; sync "$work/cat-$name.bin"; echo "$(now) - $t0" | bc
    done | median)
done
ratio() { echo "scale=2; $1 / $2" | bc; }

# 6. Report.
{
cat <<EOF
## Chunked rendering: cost and finaliser speed (\`ops/bench-chunks.sh\`)

Generated by \`ops/bench-chunks.sh\` on $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo ' (with uncommitted changes)').
Machine: $(nproc) CPUs, $(lscpu | grep 'Model name' | sed 's/Model name: *//'), $(ffmpeg -version | head -1 | cut -d' ' -f1-3).
**The 2 cores were shared with other work while this ran: times are indicative, sizes and PSNR are exact.**

Composition: ${frames} frames (${duration} s) at 1280x720, 30 fps; five 12 s segments with hard cuts
(testsrc2, a mandelbrot zoom upscaled 2x, life upscaled 2x, a zooming still, moving gradients), a text
caption, stereo music. Export preset \`medium\` (H.264 Main, CRF 23, x264 preset medium, closed 2 s GOPs,
mbtree=0, sync-lookahead=0), \`--encoder-threads 4\`. Reference for quality: the same composition
rendered as one chunk with \`"video": {"crf": 4}\` (near-lossless; CRF 0 would need High 4:4:4).

### Bitrate and quality

| render | chunks | video bytes | video kb/s | bitrate vs single | PSNR-Y vs CRF 4 ref: mean / min (dB) | PSNR-Y cost vs single (dB) | vs single-chunk output: mean / min / global (dB), identical frames | render wall time (s) |
|---|---|---|---|---|---|---|---|---|
| single chunk | 1 | ${bytes[single]} | ${kbps[single]} | — | $(field "${vs_ref[single]}" 1) / $(field "${vs_ref[single]}" 2) | — | — | ${render_secs[single]} |
| 10 s chunks | ${nchunks[c10]} | ${bytes[c10]} | ${kbps[c10]} | $(pct c10) % | $(field "${vs_ref[c10]}" 1) / $(field "${vs_ref[c10]}" 2) | $(db c10) | $(field "${vs_single[c10]}" 1) / $(field "${vs_single[c10]}" 2) / $(field "${vs_single[c10]}" 4), $(field "${vs_single[c10]}" 3) of ${frames} | ${render_secs[c10]} |
| 2 s chunks | ${nchunks[c2]} | ${bytes[c2]} | ${kbps[c2]} | $(pct c2) % | $(field "${vs_ref[c2]}" 1) / $(field "${vs_ref[c2]}" 2) | $(db c2) | $(field "${vs_single[c2]}" 1) / $(field "${vs_single[c2]}" 2) / $(field "${vs_single[c2]}" 4), $(field "${vs_single[c2]}" 3) of ${frames} | ${render_secs[c2]} |
| CRF 4 reference | 1 | ${bytes[ref]} | ${kbps[ref]} | | | | | ${render_secs[ref]} |

Targets: 10 s chunks cost ≤ 2 % bitrate and ≤ 0.1 dB. PSNR is ffmpeg's \`psnr\` filter, luma,
per frame; "mean" is the mean of per-frame PSNR over frames that differ, "global" is the PSNR of the mean
MSE over all frames (finite when frames are identical). \`ffmpeg -v error -i OUT -f null -\` printed
${ffmpeg_check} lines for the three outputs.

### Finaliser vs cat (median of ${runs})

| chunks | bytes joined (chunks + audio) | finaliser (s) | finaliser, optimizeForNetworkUse (s) | cat + sync (s) | finaliser / cat |
|---|---|---|---|---|---|
| 10 s (${nchunks[c10]}) | ${chunk_bytes[c10]} | ${fin[c10]} | ${fin_fast[c10]} | ${cat_med[c10]} | $(ratio "${fin[c10]}" "${cat_med[c10]}")× |
| 2 s (${nchunks[c2]}) | ${chunk_bytes[c2]} | ${fin[c2]} | ${fin_fast[c2]} | ${cat_med[c2]} | $(ratio "${fin[c2]}" "${cat_med[c2]}")× |

Target: finaliser ≤ 2× cat. The finaliser run is \`Finaliser.finalise\` alone (\`reel-chunkbench\`): it
verifies every chunk's size and SHA-256, checks codec parameters, stream-copies with rebuilt timestamps,
interleaves the audio, writes a temporary file, fsyncs it and renames it; its output was
${same_join[c10]} the 10 s render's output and ${same_join[c2]} the 2 s render's. \`cat\` writes the same bytes to a file on the same disk, then \`sync FILE\`. Both read warm
page cache.

### Commands

\`\`\`sh
$(for name in single c10 c2 ref; do echo "${render_cmd[$name]}"; done)
reel-chunkbench comp.json CHUNKDIR joined.mp4 --agents $agents --chunk-seconds 10|2 --runs $runs
cat CHUNKDIR/chunk-*.mp4 CHUNKDIR/audio.m4a > cat.bin; sync cat.bin
ffmpeg -i OUT.mp4 -i REF.mp4 -lavfi '[0:v][1:v]psnr=stats_file=STATS' -f null -
ffprobe -select_streams v:0 -show_entries packet=size -of csv=p=0 OUT.mp4   # summed: video bytes
\`\`\`
EOF
} > "$report"
cat "$report"

#!/usr/bin/env bash
# Filter and blend-mode benchmark: frames/s of each Reel filter on ONE core against
# ffmpeg's closest filter on the same 1920x1080 yuv420p input, also single-threaded. Prints a
# Markdown table.
#
#   ops/bench-filters.sh [FRAMES]        (default 100; FFmpeg runs at least FF_FRAMES, default 5×FRAMES)
#
# Reel: `reel-bench` (release build), timing only the filter on an in-memory frame (the time to
# restore the input before each run is measured and subtracted). FFmpeg: the filter graph with
# -threads 1 -filter_threads 1 -filter_complex_threads 1, reading the very frames Reel reads
# (raw yuv420p files, looped); its cost is the CPU time (utime) of the graph `copy,FILTER`
# minus that of `copy` alone (each the least of two runs), so reading the input and the null
# muxer cancel out, and the filter, like Reel's, runs on a frame just written (Reel restores
# its input the same way).
# Where the filter's net time is under a second, the pair runs again with enough frames for
# about one: a figure that is a difference of two runs needs the filter's share to stand well
# above their spread. The conversions FFmpeg inserts to run an RGB filter (colorchannelmixer,
# lut3d) on yuv420p count against it: Reel does the same work on the same input. Everything
# runs pinned to CPU 0 (taskset -c 0).
#
# Reel's kernels use AVX2 or AVX-512BW where the CPU has them (the same bytes; `REEL_VECTOR_ISA=
# baseline` or `avx2` in the environment caps the level): the machine line says which ran.
#
# The affine colour filters run twice: on testsrc2, whose colours all lie on the RGB cube's
# surface (every pixel has a channel at 0 and one at 1, so the clamp after such a filter acts
# nearly everywhere), and on the same picture graded to 75 % contrast and saturation, more like
# footage: a kernel that skipped RGB where nothing clamps would show its gain there.
set -euo pipefail
cd "$(dirname "$0")/.."
. ops/bench-lib.sh
frames=${1:-100}
ff_frames=${FF_FRAMES:-$((5 * frames))}
use_release reel-bench
bench=$bin/reel-bench
work=$(mktemp -d /tmp/reel-bench-filters.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The inputs: two testsrc2 frames (the second shifted in time for blends) and a 33³ grade.
src="testsrc2=s=1920x1080:r=25,format=yuv420p"
ff -f lavfi -i "$src" -frames:v 1 -f rawvideo -pix_fmt yuv420p "$work/top.yuv"
grade="eq=contrast=0.75:saturation=0.75"
ff -f lavfi -i "$src" -vf "$grade" -frames:v 1 -f rawvideo -pix_fmt yuv420p "$work/graded.yuv"
ff -f lavfi -i "$src" -vf "trim=start_frame=37,setpts=PTS-STARTPTS" -frames:v 1 -f rawvideo -pix_fmt yuv420p "$work/bottom.yuv"
python3 - "$work/grade.cube" <<'PY'
import sys
n = 33
with open(sys.argv[1], "w") as f:
    f.write("LUT_3D_SIZE %d\n" % n)
    for b in range(n):
        for g in range(n):
            for r in range(n):
                x, y, z = r / (n - 1), g / (n - 1), b / (n - 1)
                f.write("%.6f %.6f %.6f\n" % (min(1, 0.9 * x + 0.1 * y ** 2), y ** 0.9, min(1, 0.2 + 0.7 * z + 0.1 * x * y)))
PY

log "Reel: reel-bench on CPU 0"
taskset -c 0 "$bench" --frames "$frames" --cube "$work/grade.cube" --input "$work/top.yuv" --input "$work/bottom.yuv" \
  --case filters > "$work/reel.txt"
isa=$(awk '$1 == "ISA" {print $2}' "$work/reel.txt")
affine=(brightness contrast saturation exposure hue grayscale invert sepia colorMatrix chain4)
taskset -c 0 "$bench" --frames "$frames" --input "$work/graded.yuv" --input "$work/bottom.yuv" \
  $(printf -- '--case filter:%s ' "${affine[@]}") > "$work/reel-graded.txt"
reel() { awk -v c="$1" '$1 == "RESULT" && $2 == c {print $5}' "${2:-$work/reel.txt}"; }

ff_utime() {
  taskset -c 0 ffmpeg -nostdin -hide_banner -benchmark -threads 1 -filter_threads 1 -filter_complex_threads 1 "$@" -f null - 2>&1 \
    | awk -F'utime=' '/bench: utime/ {split($2, a, "s"); print a[1]}'
}
raw() { echo -stream_loop -1 -f rawvideo -pix_fmt yuv420p -s 1920x1080 -r 25 -i "$1"; }
one=($(raw "$work/top.yuv"))
graded=($(raw "$work/graded.yuv"))
two=($(raw "$work/top.yuv") $(raw "$work/bottom.yuv"))
# frames/s from the CPU seconds of the graph with the filter ($1) and without it ($2), $3 frames.
net_fps() { awk -v w="$1" -v o="$2" -v n="$3" 'BEGIN { d = w - o; if (d <= 0.005) print "≈0 (within noise)"; else printf "%.1f", n / d }'; }
# The least CPU time of two runs of a graph (other work on the machine only ever adds to it).
ff_best() { local a b; a=$(ff_utime "$@"); b=$(ff_utime "$@"); awk -v a="$a" -v b="$b" 'BEGIN { print (a < b ? a : b) }'; }
# ff_pair OPTION WITH WITHOUT INPUT…: frames/s of the graph WITH net of the graph WITHOUT
# (OPTION -vf or -filter_complex), on the inputs given; again with more frames (up to 20×)
# when the difference is under a second.
ff_pair() {
  local opt=$1 with_graph=$2 without_graph=$3 n=$ff_frames with without more
  shift 3
  with=$(ff_best "$@" "$opt" "$with_graph" -frames:v "$n")
  without=$(ff_best "$@" "$opt" "$without_graph" -frames:v "$n")
  more=$(awk -v w="$with" -v o="$without" -v n="$n" 'BEGIN { d = w - o; m = (d > 0.01 ? int(n / d) + 1 : 20 * n); if (m > 20 * n) m = 20 * n; print (d < 1 ? m : 0) }')
  if [ "$more" -gt "$n" ]; then
    n=$more
    with=$(ff_best "$@" "$opt" "$with_graph" -frames:v "$n")
    without=$(ff_best "$@" "$opt" "$without_graph" -frames:v "$n")
  fi
  net_fps "$with" "$without" "$n"
}
# frames/s of the filter graph $1 on one input (testsrc2, or the graded picture when $2 is
# "graded").
ff1() {
  if [ "${2:-}" = graded ]; then ff_pair -vf "copy,$1" copy "${graded[@]}"; else ff_pair -vf "copy,$1" copy "${one[@]}"; fi
}
# frames/s of the two-input filter $1 (a blend), net of the graph that reads and copies both
# inputs and drops the second (a disabled blend is no baseline: it still costs a third of an
# enabled one, and varies by as much between runs).
both="[0]copy[a];[1]copy[b]"
without2="$both;[b]nullsink;[a]null"
ff2() { ff_pair -filter_complex "$both;[a][b]$1" "$without2" "${two[@]}"; }
ratio() { awk -v r="$1" -v f="$2" 'BEGIN { if (f !~ /^[0-9.]+$/ || f + 0 == 0) print "–"; else printf "%.2f×", r / f }'; }
table_head() {
  echo "| filter (1920x1080 yuv420p, one core) | Reel frames/s | FFmpeg frames/s | Reel / FFmpeg | FFmpeg graph |"
  echo "|---|---:|---:|---:|---|"
}
# A table's heading: a blank line, the lines given, a blank line, the table's head.
section() { echo; printf '%s\n' "$@"; echo; table_head; }
# row NAME REEL FFMPEG SHOWN-GRAPH
row() { echo "| $1 | $2 | $3 | $(ratio "$2" "$3") | $4 |"; }

sepia=".393:.769:.189:0:.349:.686:.168:0:.272:.534:.131:0"
# name | reel case | ffmpeg graph (one input) | shown graph
pairs=(
  "brightness|filter:brightness|eq=brightness=0.1"
  "contrast|filter:contrast|eq=contrast=1.3"
  "saturation|filter:saturation|eq=saturation=1.5"
  "gamma|filter:gamma|eq=gamma=1.5"
  "exposure|filter:exposure|colorchannelmixer=rr=1.414:gg=1.414:bb=1.414"
  "hue|filter:hue|hue=h=30"
  "grayscale|filter:grayscale|colorchannelmixer=.2126:.7152:.0722:0:.2126:.7152:.0722:0:.2126:.7152:.0722:0"
  "invert|filter:invert|negate"
  "sepia|filter:sepia|colorchannelmixer=$sepia"
  "colorMatrix|filter:colorMatrix|colorchannelmixer=.9:.1:0:.02:.05:.85:.1:0:0:.2:.8:-.02"
  "lut (33³)|filter:lut|lut3d=file=$work/grade.cube"
  "4-filter chain: brightness, contrast, saturation, sepia|filter:chain4|eq=brightness=0.1:contrast=1.2:saturation=1.3,colorchannelmixer=$sepia"
  "gaussianBlur σ=2|filter:gaussianBlur2|gblur=sigma=2"
  "gaussianBlur σ=5|filter:gaussianBlur5|gblur=sigma=5"
  "sharpen|filter:sharpen|unsharp=5:5:1:5:5:1"
  "pixellate 16|filter:pixellate|pixelize=w=16:h=16"
  "vignette|filter:vignette|vignette"
  "sobelEdge|filter:sobelEdge|sobel"
  "sketch|filter:sketch|sobel"
  "toon|filter:toon|sobel"
  "swirl|filter:swirl|"
  "kuwahara|filter:kuwahara|"
  "chromaKey (layer with alpha)|filter:chromaKey|chromakey=0x00ff00:0.1:0.1"
)
table_head
for p in "${pairs[@]}"; do
  IFS='|' read -r name case graph <<<"$p"
  r=$(reel "$case")
  if [ -n "$graph" ]; then f=$(ff1 "$graph"); shown="\`${graph//$work\//}\`"; else f="–"; shown="(none)"; fi
  row "$name" "$r" "$f" "$shown"
done
# Blend modes: Reel's W3C mode against ffmpeg's blend of the same name (all_mode, on the yuv planes).
for m in "normal:normal" "multiply:multiply" "screen:screen" "overlay:overlay" "darken:darken" "lighten:lighten" \
         "colorDodge:dodge" "colorBurn:burn" "hardLight:hardlight" "softLight:softlight" "difference:difference" \
         "exclusion:exclusion" "add:addition"; do
  reel_mode=${m%%:*}; ff_mode=${m##*:}
  r=$(reel "blend:$reel_mode")
  f=$(ff2 "blend=all_mode=$ff_mode")
  row "blend $reel_mode" "$r" "$f" "\`blend=all_mode=$ff_mode\`"
done
section "The affine filters on testsrc2 graded to 75 % contrast and saturation (\`$grade\`, applied before" \
  "the filter on both sides):"
for p in "${pairs[@]}"; do
  IFS='|' read -r name case graph <<<"$p"
  case " ${affine[*]} " in *" ${case#filter:} "*) ;; *) continue ;; esac
  r=$(reel "$case" "$work/reel-graded.txt")
  f=$(ff1 "$graph" graded)
  row "$name" "$r" "$f" "\`${graph//$work\//}\`"
done

# The same picture on both sides. FFmpeg's `eq`, `hue`, `negate` and `blend` work on the
# Y'CbCr planes one at a time (a luma table, chroma scaled as if it were a colour), a cheaper
# operation with another result than the RGB formulas Reel computes (and its tests hold it to).
# Here FFmpeg computes Reel's result: the filter (or a `lutrgb` or `colorchannelmixer` with the
# same formula) in RGB, its conversions counting against it as they do for colorchannelmixer
# above. Packed RGBA is the format FFmpeg converts to and from fastest here (1.5× planar gbrp);
# `blend` takes planar RGB only.
rgb() { echo "format=rgba,$1,format=yuv420p"; }
lut3() { echo "lutrgb=r=$1:g=$1:b=$1"; }
ff2rgb() {
  ff_pair -filter_complex "[0]copy,format=gbrp[a];[1]copy,format=gbrp[b];[a][b]$1,format=yuv420p" \
    "$without2" "${two[@]}"
}
same=(
  "brightness|filter:brightness|$(rgb "$(lut3 'val+25.5')")"
  "contrast|filter:contrast|$(rgb "$(lut3 '(val-127.5)*1.3+127.5')")"
  "saturation|filter:saturation|$(rgb "colorchannelmixer=1.3937:-0.3576:-0.0361:0:-0.1063:1.1424:-0.0361:0:-0.1063:-0.3576:1.4639:0")"
  "gamma|filter:gamma|$(rgb "$(lut3 'gammaval(1.5)')")"
  "hue|filter:hue|$(rgb "colorchannelmixer=0.910684:-0.244017:0.333333:0:0.333333:0.910684:-0.244017:0:-0.244017:0.333333:0.910684:0")"
  "invert|filter:invert|$(rgb negate)"
)
section "The same picture on both sides: FFmpeg's filter run in RGB, where the operations" \
  "above that FFmpeg runs on the Y'CbCr planes one at a time compute another result:"
for p in "${same[@]}"; do
  IFS='|' read -r name case graph <<<"$p"
  r=$(reel "$case")
  f=$(ff1 "$graph")
  row "$name" "$r" "$f" "\`$graph\`"
done
for m in "normal:normal" "multiply:multiply" "screen:screen" "darken:darken" "lighten:lighten" "difference:difference" "add:addition"; do
  reel_mode=${m%%:*}; ff_mode=${m##*:}
  r=$(reel "blend:$reel_mode")
  f=$(ff2rgb "blend=all_mode=$ff_mode")
  row "blend $reel_mode" "$r" "$f" "\`[0]format=gbrp[a];[1]format=gbrp[b];[a][b]blend=all_mode=$ff_mode,format=yuv420p\`"
done
echo
echo "Machine: $(machine); $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}'); Reel's vector kernels: $isa; $frames frames per case for Reel, at least $ff_frames for FFmpeg; \`ops/bench-filters.sh $frames\`."

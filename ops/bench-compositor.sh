#!/usr/bin/env bash
# Compositor benchmark: frames/s of Reel's compositor on ONE core against the
# equivalent FFmpeg filters, also single-threaded. Prints a Markdown table.
#
#   ops/bench-compositor.sh [FRAMES]        (default 200)
#
# Reel: `reel-bench` (release build; the kernels are -Ounchecked), timing only the compositor on
# in-memory 1920x1080 yuv420p frames by its thread's CPU time. FFmpeg: the same operation as a filter graph with
# -threads 1 -filter_threads 1 -filter_complex_threads 1; its cost is the CPU time (utime) of
# the graph WITH the filter minus the same graph WITHOUT it (sources, format conversion and the
# null muxer cancel out), so both columns measure the same work.
set -euo pipefail
cd "$(dirname "$0")/.."
frames=${1:-200}
swift build -c release --scratch-path .build-release --product reel-bench >/dev/null
bench=$(swift build -c release --scratch-path .build-release --show-bin-path)/reel-bench

reel_fps() { taskset -c 0 "$bench" --frames "$frames" --case "$1" | awk '/^RESULT/ {print $5}'; }

# utime of an ffmpeg run, in seconds.
ff_utime() {
  ffmpeg -nostdin -hide_banner -benchmark -threads 1 -filter_threads 1 -filter_complex_threads 1 "$@" -f null - 2>&1 \
    | awk -F'utime=' '/bench: utime/ {split($2, a, "s"); print a[1]}'
}
src="color=c=gray:s=1920x1080:r=25,format=yuv420p"
two=(-f lavfi -i "testsrc2=s=1920x1080:r=25,format=yuv420p" -f lavfi -i "testsrc2=s=1920x1080:r=25,format=yuv420p")
ff_cost() {  # $1 = graph with the operation, $2 = the same graph without it
  local with without
  with=$(taskset -c 0 bash -c "$(declare -f ff_utime); ff_utime $(printf '%q ' "${two[@]}") -filter_complex $(printf '%q' "$1") -frames:v $frames")
  without=$(taskset -c 0 bash -c "$(declare -f ff_utime); ff_utime $(printf '%q ' "${two[@]}") -filter_complex $(printf '%q' "$2") -frames:v $frames")
  awk -v w="$with" -v o="$without" -v n="$frames" 'BEGIN { d = w - o; if (d <= 0) d = 1e-9; printf "%.1f", n / d }'
}

blend_reel=$(reel_fps blend)
blend_ff=$(ff_cost "[0][1]blend=all_mode=normal:all_opacity=0.5" "[0][1]blend=all_mode=normal:all_opacity=0.5:enable=0")
affine_reel=$(reel_fps affine)
affine_ff=$(ff_cost "[0]scale=1728:972:flags=bilinear,rotate=10*PI/180:ow=1920:oh=1080:bilinear=1:c=none[fg];[1][fg]overlay=format=yuv420" \
                    "[0]null[fg];[1][fg]overlay=format=yuv420:enable=0")
rot_reel=$(reel_fps rotate90)
overlay_reel=$(reel_fps overlay)

cpu=$(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')
cat <<MD
| operation (1920x1080 yuv420p, one core) | Reel frames/s | FFmpeg frames/s | FFmpeg graph |
|---|---:|---:|---|
| 2-layer opacity blend at 0.5 | $blend_reel | $blend_ff | \`blend=all_mode=normal:all_opacity=0.5\` |
| general affine: rotate 10°, scale 0.9, over a background | $affine_reel | $affine_ff | \`scale=1728:972:flags=bilinear,rotate=10*PI/180:bilinear=1,overlay\` |
| portrait clip rotated 90° and fitted (fast path) | $rot_reel | – | |
| layer with alpha plane at opacity 0.8 | $overlay_reel | – | |

Machine: $(nproc) cores, $cpu; $frames frames per case; \`ops/bench-compositor.sh $frames\`.
MD

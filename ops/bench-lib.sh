# Shared by the ops/bench-*.sh scripts: sourced from the repository root, not run.

log() { echo "== $*" >&2; }
ff() { ffmpeg -nostdin -v error -y "$@"; }
now() { date +%s.%N; }

# Builds the named products in release, into .build-release.
build_release() {
  local product
  for product in "$@"; do swift build -c release --scratch-path .build-release --product "$product" >&2; done
}

# The encoding of generated sources: near-lossless (CRF 10, intra-heavy), so a composition's
# own encode dominates.
enc=(-c:v libx264 -preset veryfast -crf 10 -pix_fmt yuv420p -g 30)

# Four 12 s 30 fps sources from lavfi in $1, of different sizes on purpose (the compositor
# scales): testsrc2.mp4 (1280x720), mandelbrot.mp4 (a zoom, 640x360), life.mp4 (640x360),
# gradients.mp4 (1280x720).
make_clips() {
  local src=$1
  ff -f lavfi -i "testsrc2=size=1280x720:rate=30:duration=12" "${enc[@]}" "$src/testsrc2.mp4"
  ff -f lavfi -i "mandelbrot=size=640x360:rate=30:start_scale=3:end_scale=0.05" -t 12 "${enc[@]}" "$src/mandelbrot.mp4"
  ff -f lavfi -i "life=size=640x360:rate=30:mold=10:ratio=0.1:death_color=#402010:life_color=#20c060:mold_color=#803000" \
     -t 12 "${enc[@]}" "$src/life.mp4"
  ff -f lavfi -i "gradients=size=1280x720:rate=30:speed=0.02:n=5:seed=7" -t 12 "${enc[@]}" "$src/gradients.mp4"
}

#!/usr/bin/env bash
# The first command of the README: installs system dependencies, generates sample media
# (lavfi sources: clips of three sizes, two frame rates, a portrait phone clip, 5.1 sound,
# music, a logo with alpha), builds Reel and renders sample/sample.json to sample/out.mp4.
set -euo pipefail
cd "$(dirname "$0")/.."
ops/install-deps.sh
ops/make-sample.sh sample >/dev/null
swift build -c release --product reel
.build/release/reel render sample/sample.json -o sample/out.mp4 "$@"

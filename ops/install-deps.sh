#!/usr/bin/env bash
# Installs every system package Reel needs to build, test and run (Debian 12). Idempotent:
# does nothing when everything is already there. Swift itself is expected on PATH.
set -euo pipefail

packages=(
  pkg-config
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev ffmpeg  # media (ffmpeg/ffprobe CLIs: tests and ops only)
                                                                                        # (Debian's libavcodec59 brings libx264 and libx265; prores_ks is built in)
  libfreetype-dev libfontconfig-dev fontconfig fonts-dejavu-core fonts-wqy-zenhei       # text overlays, incl. CJK fallback
  libharfbuzz-dev libfribidi-dev                                                        # text shaping (HarfBuzz) and bidi order (FriBidi)
  fonts-lohit-deva fonts-noto-color-emoji                                               # Devanagari (DejaVu Sans covers Arabic, Hebrew) and colour emoji
  libharfbuzz-bin                                                                       # hb-view: the shaping tests' reference renderer only
  libpq-dev postgresql                                                                  # job store
  iproute2                                                                              # network namespaces for multi-host tests
  chromium                                                                              # the console's browser test and ops/console-screenshot.sh only
  time hyperfine                                                                        # benchmarks only (ops/bench-*.sh)
  python3-pip                                                                           # numpy for the tests' reference formulas (below)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
install_numpy() {
  # numpy, for the tests' reference formulas (Tests/References/*.py), from PyPI. Debian's own
  # python3 refuses pip installs into it (PEP 668) unless told it may.
  if ! python3 -c 'import numpy' 2>/dev/null; then
    echo "installing: numpy (pip)" >&2
    python3 -m pip install --quiet numpy 2>/dev/null || python3 -m pip install --quiet --break-system-packages numpy
  fi
}
if [ ${#missing[@]} -eq 0 ]; then
  install_numpy
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "installing: ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_numpy

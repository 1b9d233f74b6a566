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
  libebur128-dev                                                                        # loudness measurement (BS.1770-4 / EBU R128)
  fonts-lohit-deva fonts-noto-color-emoji                                               # Devanagari (DejaVu Sans covers Arabic, Hebrew) and colour emoji
  libharfbuzz-bin                                                                       # hb-view: the shaping tests' reference renderer only
  libpq-dev postgresql                                                                  # job store
  iproute2                                                                              # network namespaces for multi-host tests
  chromium                                                                              # the console's browser test and ops/console-screenshot.sh only
  time hyperfine                                                                        # benchmarks only (ops/bench-*.sh)
  tesseract-ocr tesseract-ocr-eng                                                       # OCR of burned-in captions: tests only
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "installing: ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

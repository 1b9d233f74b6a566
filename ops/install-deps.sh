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
  python3 python3-pip                                                                   # the interchange tests build timelines with OpenTimelineIO
)

# Python packages the tests use (Reel itself runs no Python): OpenTimelineIO writes the
# interchange tests' timelines, its CMX 3600 adapter their EDL, its FCP X XML adapter the
# FCPXML that otioconvert turns back into OTIO (docs/interchange.md).
python_packages=(opentimelineio==0.18.1 opentimelineio-plugins==0.18.1 otio-fcpx-xml-adapter==1.0.0)
install_python_packages() {
  if python3 -c 'import opentimelineio, otio_cmx3600_adapter, otio_fcpx_xml_adapter' 2>/dev/null \
     && python3 -c 'import opentimelineio; assert opentimelineio.__version__ == "0.18.1"' 2>/dev/null; then
    return 0
  fi
  echo "installing (pip): ${python_packages[*]}" >&2
  # Debian's own python3 refuses pip without --break-system-packages (PEP 668); a python3
  # of one's own (pyenv, a venv) takes it plainly.
  python3 -m pip install --quiet --disable-pip-version-check "${python_packages[@]}" 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "${python_packages[@]}"
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "installing: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
install_python_packages

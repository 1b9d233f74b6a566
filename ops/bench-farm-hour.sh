#!/usr/bin/env bash
# The farm's end-to-end figure: a long composition rendered through the farm on this machine —
# PostgreSQL, one `reel coordinator` and AGENTS `reel agent`s on loopback, `reel submit --wait`.
#
#   ops/bench-farm-hour.sh [OUTPUT.md]      (default: print to stdout; KEEP_WORK=1 keeps the work dir)
#   env: MINUTES (60) timeline length · AGENTS (2) · THREADS (1) encoder threads per agent
#        CHUNK_SECONDS (10) · REEL_BIN_DIR: use these binaries instead of building release ones
#
# The composition: a 60 s 640x360 30 fps clip with a tone (made here with ffmpeg's lavfi
# sources), cut back to back MINUTES times with a cross-fade between cuts, under a caption.
# Reported: wall time of submit to downloaded output, frames per second, the finaliser's share
# (its task's claim to the job's end), and the checks: exact frame count (ffprobe) and a clean
# decode (ffmpeg -v error). Nothing here is a test: no figure is asserted, but a wrong frame
# count or a decode error ends the script with an error.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
report=${1:-/dev/stdout}
minutes=${MINUTES:-60}
agents=${AGENTS:-2}
threads=${THREADS:-1}
chunk_seconds=${CHUNK_SECONDS:-10}

. ops/bench-lib.sh
use_release reel

bench_workdir hour

log "media: a 60 s 640x360 clip with a tone; a $minutes min composition"
ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=640x360:rate=30:duration=60" \
  -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=60" \
  -c:v libx264 -preset veryfast -pix_fmt yuv420p -g 30 -c:a aac -shortest "$work/clip.mp4"
python3 - "$work/timeline.json" "$minutes" <<'PY'
import json, sys
path, minutes = sys.argv[1], int(sys.argv[2])
# Cuts of the clip on two alternating tracks, each starting 1 s before the last one ends: a
# 1 s cross-fade at every cut (the sound of both plays during it).
segments = {1: [], 2: []}
instructions = []
for i in range(minutes):
    track, start = 1 + i % 2, i * 59
    segments[track].append({"asset": "clip", "sourceRange": {"start": 0, "duration": 60}, "at": start})
    solo_start = start + (1 if i > 0 else 0)
    solo_end = start + (59 if i < minutes - 1 else 60)
    instructions.append({"timeRange": {"start": solo_start, "duration": solo_end - solo_start},
                         "layerInstructions": [{"track": track}]})
    if i < minutes - 1:
        instructions.append({"timeRange": {"start": start + 59, "duration": 1}, "layerInstructions": [
            {"track": track, "opacityRamps": [{"from": 1, "to": 0, "timeRange": {"start": start + 59, "duration": 1}}]},
            {"track": 3 - track}]})
duration = (minutes - 1) * 59 + 60
json.dump({"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
           "tracks": [{"id": 1, "mediaType": "video", "segments": segments[1]},
                      {"id": 2, "mediaType": "video", "segments": segments[2]},
                      {"id": 3, "mediaType": "audio", "segments": segments[1]},
                      {"id": 4, "mediaType": "audio", "segments": segments[2]}],
           "videoComposition": {"renderSize": {"width": 640, "height": 360}, "frameDuration": "1/30",
                                "instructions": instructions,
                                "overlays": [{"text": "Reel: one hour through the farm", "fontSize": 24,
                                              "frame": {"x": 20, "y": 320, "width": 600, "height": 34}}]}},
          open(path, "w"), indent=1)
PY
"$bin/reel" validate "$work/timeline.json" >"$work/validate.txt"
expected_frames=$(sed -n 's/.* \([0-9][0-9]*\) frames.*/\1/p' "$work/validate.txt")
[ -n "$expected_frames" ] || { cat "$work/validate.txt" >&2; log "reel validate did not report a frame count"; exit 1; }

pg_port=${PG_PORT:-54392}
database=$("$root/ops/postgres.sh" start "$work/pg" "$pg_port")
start_coordinator "$database"
start_agents "$agents" --threads "$threads"

export REEL_COORDINATOR=127.0.0.1:$port REEL_SECRET_FILE=$work/secret
log "submit --wait: $expected_frames frames in $chunk_seconds s chunks, $agents agent(s) × $threads thread(s)"
started=$(date +%s.%N)
"$bin/reel" submit "$work/timeline.json" --chunk-seconds "$chunk_seconds" --wait --quiet -o "$work/out.mp4" >"$work/job-id"
ended=$(date +%s.%N)
job=$(cat "$work/job-id")
wall=$(awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.1f", b - a }')
sql() { psql "$database" -tAc "$1"; }
finalise=$(sql "SELECT round(extract(epoch FROM j.finished_at - e.at)::numeric, 1) FROM jobs j
                JOIN tasks t ON t.job_id = j.id AND t.kind = 'finalise'
                JOIN events e ON e.task_id = t.id AND e.kind = 'claimed' WHERE j.id = $job ORDER BY e.id DESC LIMIT 1")
chunks=$(sql "SELECT count(*) FROM tasks WHERE job_id = $job AND kind = 'video_chunk'")

log "checking the output"
frames=$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$work/out.mp4")
[ "$frames" = "$expected_frames" ] || { log "output has $frames frames, the composition $expected_frames"; exit 1; }
errors=$(ffmpeg -nostdin -v error -i "$work/out.mp4" -f null - 2>&1 || echo "ffmpeg exited $?")
[ -z "$errors" ] || { log "decoding the output reported: $errors"; exit 1; }
duration=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$work/out.mp4")
size=$(stat -c %s "$work/out.mp4")

{
  echo "### Farm end to end: $minutes min of 640x360 at 30 fps, $agents agent(s) × $threads thread(s), $chunk_seconds s chunks"
  echo
  echo "Command: \`MINUTES=$minutes AGENTS=$agents THREADS=$threads CHUNK_SECONDS=$chunk_seconds ops/bench-farm-hour.sh\`"
  echo "Machine: $(machine)"
  echo
  echo "| figure | value |"
  echo "|---|---|"
  echo "| output | $frames frames (expected $expected_frames), ${duration} s, $(awk -v b="$size" 'BEGIN { printf "%.1f MB", b / 1e6 }'), clean decode |"
  echo "| video chunks | $chunks |"
  echo "| wall time, submit to downloaded output | $wall s ($(awk -v f="$frames" -v w="$wall" 'BEGIN { printf "%.0f", f / w }') frames/s) |"
  echo "| finaliser (claim of its task to the job's end) | $finalise s ($(awk -v f="$finalise" -v w="$wall" 'BEGIN { printf "%.1f", 100 * f / w }') % of the wall time) |"
} >"$report"

#!/usr/bin/env bash
# Every figure of the farm's core against its target, in one table: what a user of
# the farm waits for, end to end, at the sizes the targets name. Run it before resolving any
# change to the store, the protocol, the coordinator or storage, and compare with the summary
# at the top of BENCHMARKS.md: a slower figure is a regression.
#
#   sudo ops/bench-farm.sh [OUTPUT.md]     (default: print to stdout; the sub-reports go to a
#                                           temporary directory, named at the end)
#   env: REEL_BIN_DIR: release binaries to use (reel, reel-dispatchbench); else built
#        SKIP ("" ): space-separated parts to leave out: dispatch coordinators herd cancel submit bytes
#
# The parts, each a script of its own that can run alone:
#   dispatch  ops/bench-dispatch.sh: 200 simulated agents on three 8 h timelines of 14,400
#             two-second chunks each: back to back for 8 s (claims/s), then paced at about one
#             claim per agent per second for 15 s (claim and result latency)
#   coordinators  ops/bench-dispatch.sh with COORDINATORS=2: the same back-to-back load, the
#             200 agents split over two coordinators on the one database (a farm's total must
#             stay within 10 % of one coordinator's; on one 2-core machine both coordinators
#             share the cores, so this measures what they cost each other through PostgreSQL)
#   herd      ops/bench-dispatch.sh: 1,000 agents "rendering" about 10 s a chunk (latency, RSS)
#   cancel    ops/bench-cancel.sh: `reel cancel` of a 15,000-chunk job while 200 agents claim,
#             and what `reel status` / `reel submit` cost meanwhile
#   submit    ops/bench-submit.sh: `reel submit` until queued, 2 / 8 / 16 h of stills (10 s
#             chunks), and 8 h in 2 s chunks (14,400 tasks)
#   bytes     ops/bench-bytes.sh (root: network namespaces): one ≥ 300 MB source, local
#             directory against S3: bytes through the coordinator and the job's wall time,
#             upload included
# Needs ops/install-deps.sh's packages. Nothing here is a test: no figure is asserted, each is
# printed beside its target with "met" or "MISSED".
set -euo pipefail
cd "$(dirname "$0")/.."
report=${1:-/dev/stdout}
skip=" ${SKIP:-} "
. ops/bench-lib.sh
use_release reel reel-dispatchbench
export REEL_BIN_DIR=$bin
out=$(mktemp -d /var/tmp/reel-bench-farm.XXXXXX)
chmod 755 "$out"
rows=()
# row FIGURE MEASURED TARGET VERDICT
row() { rows+=("| $1 | $2 | $3 | $4 |"); }
# verdict VALUE OP LIMIT: "met" when VALUE OP LIMIT holds (OP: < <= >=), else "MISSED"; "—" without a value.
verdict() {
  [ -n "$1" ] || { echo "—"; return; }
  awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN { ok = (op == "<") ? v < l : (op == "<=") ? v <= l : v >= l; print ok ? "met" : "MISSED" }'
}
field() { sed -n "$1" "$2" | head -1; }

if [[ $skip != *" dispatch "* ]]; then
  log "dispatch: 200 agents, back to back and paced"
  PG_PORT=$(free_port) JOBS=3 HOURS=8 SEGMENTS=2880 CHUNK_SECONDS=2 AGENTS=200 RUN_SECONDS=8 PACED_SECONDS=15 RENDER_MS=1000 \
    ops/bench-dispatch.sh "$out/dispatch.md" 2>"$out/dispatch.log"
  closed=$(awk '/^Agents claiming back to back/,/^```$/' "$out/dispatch.md" | sed -n '3,$p')
  paced=$(awk '/^Agents rendering/,/^Machine/' "$out/dispatch.md")
  rate=$(sed -n 's/^claims: [0-9]* (\([0-9]*\) per second).*/\1/p' <<<"$closed" | head -1)
  claim99=$(sed -n 's/^claim latency ms: .*p99 \([0-9.]*\),.*/\1/p' <<<"$paced" | head -1)
  result99=$(sed -n 's/^result latency ms: .*p99 \([0-9.]*\),.*/\1/p' <<<"$paced" | head -1)
  served=$(sed -n 's/^claims: [0-9]* (\([0-9]*\) per second).*/\1/p' <<<"$paced" | head -1)
  row "claims/s, 200 agents back to back on 14,400-chunk jobs" "${rate:-?}" "≥ 4,000" "$(verdict "$rate" ">=" 4000)"
  row "p99 claim, 200 agents at ~1 claim/s each (${served:-?} claims/s served)" "${claim99:-?} ms" "< 10 ms" "$(verdict "$claim99" "<" 10)"
  row "p99 result, same load" "${result99:-?} ms" "< 15 ms" "$(verdict "$result99" "<" 15)"
fi

if [[ $skip != *" coordinators "* ]]; then
  log "coordinators: 200 agents back to back, split over two coordinators on one database"
  PG_PORT=$(free_port) JOBS=3 HOURS=8 SEGMENTS=2880 CHUNK_SECONDS=2 AGENTS=200 RUN_SECONDS=8 PHASES=closed COORDINATORS=2 \
    ops/bench-dispatch.sh "$out/coordinators.md" 2>"$out/coordinators.log"
  two=$(sed -n 's/^claims: [0-9]* (\([0-9]*\) per second) over 2 coordinators.*/\1/p' "$out/coordinators.md" | head -1)
  share=$([ -n "$two" ] && [ -n "${rate:-}" ] && awk -v a="$two" -v b="$rate" 'BEGIN { printf "%.0f", 100 * a / b }')
  row "claims/s, the same 200 agents over 2 coordinators on one database" "${two:-?} (${share:-?} % of one's)" "≥ 90 % of one coordinator's" "$(verdict "$share" ">=" 90)"
fi

if [[ $skip != *" herd "* ]]; then
  log "herd: 1,000 agents at ~10 s a chunk"
  PG_PORT=$(free_port) JOBS=1 HOURS=8 SEGMENTS=2880 CHUNK_SECONDS=2 AGENTS=1000 PHASES=paced PACED_SECONDS=40 RENDER_MS=10000 \
    ops/bench-dispatch.sh "$out/herd.md" 2>"$out/herd.log"
  claim99=$(sed -n 's/^claim latency ms: .*p99 \([0-9.]*\),.*/\1/p' "$out/herd.md" | head -1)
  errors=$(sed -n 's/^errors: \([0-9]*\).*/\1/p' "$out/herd.md" | head -1)
  rss=$(sed -n 's/^| coordinator RSS, peak \/ at the end | \([0-9]*\) MB.*/\1/p' "$out/herd.md")
  row "p99 claim, 1,000 agents at ~10 s a chunk" "${claim99:-?} ms" "< 20 ms" "$(verdict "$claim99" "<" 20)"
  row "errors (stale or refused results: a double assignment shows here), 1,000 agents" "${errors:-?}" "0" "$(verdict "$errors" "<=" 0)"
  row "coordinator RSS, peak, 1,000 agents" "${rss:-?} MB" "≤ 150 MB" "$(verdict "$rss" "<=" 150)"
fi

if [[ $skip != *" cancel "* ]]; then
  log "cancel: a 15,000-chunk job while 200 agents claim"
  ops/bench-cancel.sh "$out/cancel.md" 2>"$out/cancel.log"
  cancel_ms=$(sed -n 's/^| `reel cancel` .* | \([0-9]*\) ms |$/\1/p' "$out/cancel.md")
  read -r status0 status1 < <(sed -n 's/^| `reel status` before \/ during the cancel | \([0-9]*\) ms \/ \([0-9]*\) ms |$/\1 \2/p' "$out/cancel.md")
  read -r submit0 submit1 < <(sed -n 's/^| `reel submit` (1 segment) before \/ during the cancel | \([0-9]*\) ms \/ \([0-9]*\) ms |$/\1 \2/p' "$out/cancel.md")
  row "\`reel cancel\` of a 15,000-chunk job, 200 agents claiming" "${cancel_ms:-?} ms" "< 1,000 ms" "$(verdict "$cancel_ms" "<" 1000)"
  extra=$(( ${status1:-0} - ${status0:-0} ))
  row "\`reel status\` during it, over before (${status0:-?} → ${status1:-?} ms)" "$extra ms" "≤ 50 ms" "$(verdict "$extra" "<=" 50)"
  extra=$(( ${submit1:-0} - ${submit0:-0} ))
  row "\`reel submit\` during it, over before (${submit0:-?} → ${submit1:-?} ms)" "$extra ms" "≤ 50 ms" "$(verdict "$extra" "<=" 50)"
fi

if [[ $skip != *" submit "* ]]; then
  log "submit: 2, 8 and 16 h in 10 s chunks, and 8 h in 2 s chunks"
  PG_PORT=$(free_port) HOURS="2 8 16" RUNS=3 ops/bench-submit.sh "$out/submit.md" 2>"$out/submit.log"
  PG_PORT=$(free_port) CHUNK_SECONDS=2 HOURS="8" RUNS=3 ops/bench-submit.sh "$out/submit-2s.md" 2>"$out/submit-2s.log"
  for hours in 2 8 16; do
    wall=$(sed -n "s/^| $hours h | [0-9]* | [0-9]* | [0-9]* | \([0-9.]*\) (.*/\1/p" "$out/submit.md")
    case $hours in 2) target=0.25 ;; 8) target=1 ;; 16) target=2 ;; esac
    row "\`reel submit\` until queued, $hours h of stills ($(( hours * 360 )) segments, 10 s chunks)" "${wall:-?} s" "< $target s" "$(verdict "$wall" "<" "$target")"
  done
  wall=$(sed -n "s/^| 8 h | [0-9]* | [0-9]* | [0-9]* | \([0-9.]*\) (.*/\1/p" "$out/submit-2s.md")
  row "\`reel submit\` until queued, 8 h in 2 s chunks (14,400 tasks)" "${wall:-?} s" "< 1 s" "$(verdict "$wall" "<" 1)"
fi

if [[ $skip != *" bytes "* ]]; then
  log "bytes: one large source, local directory and S3, three alternating runs each"
  RUNS=${BYTES_RUNS:-3} SOURCES=1 SOURCE_SECONDS=${SOURCE_SECONDS:-32} ops/bench-bytes.sh "$bin/reel" "$out/bytes.md" 2>"$out/bytes.log"
  source_bytes=$(sed -n 's/.*source(s), \([0-9]*\) bytes in all.*/\1/p' "$out/bytes.md")
  # The largest share of the S3 runs.
  s3_share=$(sed -n 's/^| s3[-0-9]* | [0-9]* | [0-9]* | [0-9]* | \([0-9.]*\) % .*/\1/p' "$out/bytes.md" | sort -g | tail -1)
  local_wall=$(sed -n 's/^Median wall .*: local \([0-9.]*\) s .*/\1/p' "$out/bytes.md")
  s3_wall=$(sed -n 's/^Median wall .*, S3 \([0-9.]*\) s .*/\1/p' "$out/bytes.md")
  ratio=$(sed -n 's/^Median wall .*: S3 over local \([0-9.]*\)×.*/\1/p' "$out/bytes.md")
  row "bytes through the coordinators, S3, one $(( ${source_bytes:-0} / 1000000 )) MB source" "${s3_share:-?} %" "< 1 %" "$(verdict "$s3_share" "<" 1)"
  row "that job's wall time (upload included), S3 over local (medians: ${s3_wall:-?} s / ${local_wall:-?} s)" "${ratio:-?}×" "≤ 1.1×" "$(verdict "$ratio" "<=" 1.1)"
  # On one machine the S3 server shares the cores: what Reel's own processes cost, apart.
  cpu_ratio=$(sed -n 's/^Median CPU .*: S3 over local \([0-9.]*\)×.*/\1/p' "$out/bytes.md")
  s3_cpu=$(awk -F'|' '$2 ~ /^ s3/ { gsub(/[ s]/, "", $10); print $10 }' "$out/bytes.md" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }')
  row "that job's CPU in Reel's processes (coordinator, agents, submit, fetch), S3 over local (the S3 server used ${s3_cpu:-?} s of the same cores besides)" "${cpu_ratio:-?}×" "—" ""
fi

{
  echo "| figure | measured | target | |"
  echo "|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Command: \`ops/bench-farm.sh\`${SKIP:+ (SKIP=\"$SKIP\")}. Machine: $(machine), $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}'); binaries: $bin."
} >"$report"
log "sub-reports in $out"

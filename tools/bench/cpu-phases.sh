#!/bin/bash
# The probe's CPU over one whole run, start-up to exit: the append-echo mock and `run --concurrency N
# --duration S` of a checkout's kit (both with its executable's Node flags, kit.sh), the probe's
# utime + stime (all threads, /proc/PID/stat) read every STEP_S. Prints, per reading, the seconds
# since the probe started, its CPU seconds so far and its cores over the step; then the run's
# packets and CPU per packet cycle over the whole run. Start-up and opens show as the first steps.
#
#   tools/bench/cpu-phases.sh [SESSIONS=256] [DURATION_S=30] [STEP_S=0.5] [CHECKOUT=.] [-- probe args]
#
# Only processes this script starts are signalled, by PID; everything talks on 127.0.0.1; the run
# is bounded by `timeout`.
set -euo pipefail
. "$(dirname "$0")/kit.sh"
N=${1:-256}
DURATION=${2:-30}
STEP=${3:-0.5}
ROOT=$(cd "${4:-.}" && pwd)
shift $(($# < 4 ? $# : 4))
[ "${1:-}" = -- ] && shift
OUT=$(mktemp -d)
start_mock "$OUT" "$ROOT" || exit 1
trap 'kill -INT $MOCK_PID 2>/dev/null || true; rm -rf "$OUT"' EXIT
TICK=$(getconf CLK_TCK)
# shellcheck disable=SC2046
(cd "$ROOT" && exec timeout $((DURATION + 120)) node $(kit_words "$ROOT" probe) run --url "$MOCK_URL" --concurrency "$N" --duration "$DURATION" \
  --output "$OUT/run" --quiet "$@" >"$OUT/probe.out" 2>&1) &
TIMEOUT=$!
PROBE=
for _ in $(seq 200); do PROBE=$(pgrep -P $TIMEOUT -n || true); [ -n "$PROBE" ] && break; sleep 0.01; done
[ -n "$PROBE" ] || { echo "error: the probe did not start (see $OUT/probe.out)" >&2; exit 1; }
START=$(date +%s.%N)
echo "seconds  cpu_s  cores"
LAST_T=0
LAST_C=0
while stat=$(cat /proc/"$PROBE"/stat 2>/dev/null); do
  fields=(${stat##*) })
  now=$(date +%s.%N)
  # After the command name: field 12 is utime, 13 stime (stat(5), counted from state = 1).
  read -r T C CORES < <(echo "$now $START ${fields[11]} ${fields[12]} $TICK $LAST_T $LAST_C" | awk '{ t = $1 - $2; c = ($3 + $4) / $5; printf "%.2f %.2f %.2f\n", t, c, (t > $6 ? (c - $7) / (t - $6) : 0) }')
  echo "$T  $C  $CORES"
  LAST_T=$T
  LAST_C=$C
  sleep "$STEP"
done
wait $TIMEOUT || true
python3 - "$OUT/run/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"packets {s['packets']['sent']}, qualified {s['qualified']}, CPU per packet cycle (whole process) {s['cpu_us_per_packet']} us")
PY

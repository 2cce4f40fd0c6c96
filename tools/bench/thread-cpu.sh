#!/bin/bash
# CPU of each thread of the probe in one run: a nemotron model mock that answers the built-in
# conversation, then `run --concurrency N --duration S [probe args]` of this checkout's compiled kit
# (`npm run build` first; both with the executable's Node flags, kit.sh), its threads' utime + stime read from /proc/PID/task every 0.5 s and the
# last reading of each printed: the main thread (the loop), the threads at nice 10 (the voice
# activity thread and the trace writer) and V8's and libuv's helpers; then CPU per packet cycle.
#
#   [MOCK_ARGS="serve args"] tools/bench/thread-cpu.sh SESSIONS DURATION_S [probe args, e.g. --conversation default]
#
# The mock is stopped by its PID; everything talks on 127.0.0.1; the run is bounded by `timeout`.
set -euo pipefail
. "$(dirname "$0")/kit.sh"
N=${1:?usage: thread-cpu.sh SESSIONS DURATION_S [probe args]}
DURATION=${2:?duration}
shift 2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mktemp -d)
cd "$ROOT"
# MOCK_ARGS, when set, replaces the mock's arguments (MOCK_ARGS= : the append-echo mock of `serve`).
# shellcheck disable=SC2086 # MOCK_ARGS's words are split on purpose
start_mock "$OUT" "$ROOT" -- ${MOCK_ARGS---profile nemotron --conversation default --respond-after-ms 400 --stop-after-ms 200} || exit 1
MOCK=$MOCK_PID
trap 'kill $MOCK 2>/dev/null || true' EXIT
# shellcheck disable=SC2046
timeout $((DURATION + 120)) node $(kit_words "$ROOT" probe) run --url "$MOCK_URL" --concurrency "$N" --duration "$DURATION" \
  --output "$OUT/run" --quiet "$@" > /dev/null 2>&1 &
TIMEOUT=$!
# The probe is timeout's child.
PROBE=
for _ in $(seq 100); do PROBE=$(pgrep -P $TIMEOUT -n || true); [ -n "$PROBE" ] && break; sleep 0.05; done
[ -n "$PROBE" ] || { echo "thread-cpu.sh: the probe did not start" >&2; exit 1; }
declare -A last
while kill -0 $PROBE 2>/dev/null; do
  for task in /proc/$PROBE/task/*; do
    stat=$(cat "$task/stat" 2>/dev/null) || continue
    fields=(${stat##*) })
    # After the command name: field 12 is utime, 13 stime, 17 nice (stat(5), counted from state = 1).
    last[${task##*/}]="$(( fields[11] + fields[12] )) ${fields[16]}"
  done
  sleep 0.5
done
wait $TIMEOUT || true
ticks=$(getconf CLK_TCK)
for tid in "${!last[@]}"; do
  read -r t nice <<< "${last[$tid]}"
  [ "$t" -gt 0 ] || continue
  role=helper; [ "$tid" = "$PROBE" ] && role=main; [ "$nice" -gt 0 ] && role="nice $nice"
  printf '%7.2f s  %-8s tid %s\n' "$(echo "scale=2; $t / $ticks" | bc)" "$role" "$tid"
done | sort -nr
python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print('qualified', s['qualified'], ' ', s['cpu_us_per_packet'], 'us per packet cycle (all threads),', s['packets']['sent'], 'packets')" "$OUT/run/summary.json"

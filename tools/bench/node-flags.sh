#!/bin/bash
# A steady run's CPU, GC and receive delay under Node flags of the probe's process: a native
# nemotron mock stamping its frames (one for all runs, with the kit's own flags, kit.sh), then
# `run --concurrency N --duration S --trace off` of this checkout's compiled kit (`npm run build`
# first) once per flag set per round, the sets alternating within a round; for
# each run its verdict, late packets, CPU per packet cycle, peak RSS, GC pauses (count, total ms)
# and receive delay p99 from summary.json. "default" is no flag: the kit's own flags are the
# executable's first line (bin/duplex-bench.js), so give them too to change one beside them.
#
#   tools/bench/node-flags.sh SESSIONS DURATION_S ROUNDS FLAGS... (e.g. default --max-semi-space-size=8)
#
# The mock is stopped by its PID; everything talks on 127.0.0.1; each run is bounded by `timeout`.
set -euo pipefail
. "$(dirname "$0")/kit.sh"
N=${1:?usage: node-flags.sh SESSIONS DURATION_S ROUNDS FLAGS...}
DURATION=${2:?duration}
ROUNDS=${3:?rounds}
shift 3
[ $# -gt 0 ] || { echo "node-flags.sh: give at least one flag set (default for none)" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mktemp -d)
cd "$ROOT"
start_mock "$OUT" "$ROOT" -- --profile nemotron --stamp-sends || exit 1
MOCK=$MOCK_PID
URL=$MOCK_URL
trap 'kill $MOCK 2>/dev/null || true' EXIT
for round in $(seq "$ROUNDS"); do
  for flags in "$@"; do
    [ "$flags" = default ] && set_flags=() || read -r -a set_flags <<< "$flags"
    rm -rf "$OUT/run"
    timeout $((DURATION + 120)) node ${set_flags[@]+"${set_flags[@]}"} dist/duplex-bench.js run --url "$URL" --concurrency "$N" \
      --duration "$DURATION" --output "$OUT/run" --quiet --trace off --allow-unqualified > /dev/null 2>&1 || true
    python3 - "$OUT/run/summary.json" "$round" "$flags" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
g = s['gc_pause_ms']
print(f"round {sys.argv[2]}  {sys.argv[3]:<30} qualified {s['qualified']}  late {s['packets']['late']}  "
      f"{s['cpu_us_per_packet']} us/packet cycle  peak RSS {round(s['peak_rss_bytes'] / 2**20)} MiB  GC {g['count']} pauses, {round(g['total'])} ms, max {g['max']} ms  "
      f"receive delay p99 {(s.get('receive_delay_ms') or {}).get('p99')} ms")
PY
  done
done

#!/bin/bash
# A steady run's CPU and GC under Node flags of the probe's process: a native nemotron mock (one for
# all runs), then `run --concurrency N --duration S --trace off` of this checkout's compiled kit
# (`npm run build` first) once per flag set per round, the sets alternating within a round; for
# each run its verdict, late packets, CPU per packet cycle, peak RSS and GC pauses (count, total ms)
# from summary.json. "default" is no flag.
#
#   tools/bench/node-flags.sh SESSIONS DURATION_S ROUNDS FLAGS... (e.g. default --max-semi-space-size=8)
#
# The mock is stopped by its PID; everything talks on 127.0.0.1; each run is bounded by `timeout`.
set -euo pipefail
N=${1:?usage: node-flags.sh SESSIONS DURATION_S ROUNDS FLAGS...}
DURATION=${2:?duration}
ROUNDS=${3:?rounds}
shift 3
[ $# -gt 0 ] || { echo "node-flags.sh: give at least one flag set (default for none)" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mktemp -d)
cd "$ROOT"
node dist/duplex-bench.js serve --profile nemotron --port 0 > "$OUT/mock.log" 2>&1 &
MOCK=$!
trap 'kill $MOCK 2>/dev/null || true' EXIT
URL=
for _ in $(seq 100); do URL=$(grep -o 'ws://[^ ]*' "$OUT/mock.log" | head -1 || true); [ -n "$URL" ] && break; sleep 0.1; done
[ -n "$URL" ] || { echo "node-flags.sh: the mock did not listen" >&2; exit 1; }
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
      f"{s['cpu_us_per_packet']} us/packet cycle  peak RSS {round(s['peak_rss_bytes'] / 2**20)} MiB  GC {g['count']} pauses, {round(g['total'])} ms")
PY
  done
done

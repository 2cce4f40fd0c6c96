#!/bin/bash
# Start spread A/B: RUNS runs of SESSIONS sessions for DURATION s, each spread in turn, against a
# fresh mock per run (127.0.0.1, port 0). Prints late packets, p99 and max |deviation| and the
# client's longest loop lag per run. Every run is bounded (60 s); only the mock started here is
# signalled, by PID.
#
#   tools/bench/start-spread.sh [native|openai] [SESSIONS=512] [DURATION=10] [RUNS=3] [SPREADS="80 1024"]
set -euo pipefail
cd "$(dirname "$0")/../.."
PROTOCOL=${1:-native}; SESSIONS=${2:-512}; DURATION=${3:-10}; RUNS=${4:-3}; SPREADS=${5:-"80 1024"}
OUT=$(mktemp -d /tmp/start-spread.XXXXXX)
DIALECT=(); [ "$PROTOCOL" = openai ] && DIALECT=(--protocol openai)
PACKET=(); [ "$PROTOCOL" = openai ] && PACKET=(--packet-ms 80)
echo "host: $(nproc) CPUs, $(uname -r), node $(node --version), commit $(git rev-parse --short HEAD); $PROTOCOL, $SESSIONS sessions, $DURATION s"
for run in $(seq 1 "$RUNS"); do
  for spread in $SPREADS; do
    node --import tsx apps/mock/src/main.ts serve "${DIALECT[@]}" --port 0 > "$OUT/mock.out" 2>/dev/null &
    MOCK=$!
    for _ in $(seq 1 100); do grep -q listening "$OUT/mock.out" 2>/dev/null && break; sleep 0.1; done
    URL=$(grep -o 'ws://[^ ]*' "$OUT/mock.out")
    DIR="$OUT/r$run-s$spread"
    timeout 60 node --import tsx apps/probe/src/main.ts run --url "$URL" "${DIALECT[@]}" "${PACKET[@]}" --concurrency "$SESSIONS" \
      --duration "$DURATION" --start-spread-ms "$spread" --output "$DIR" --quiet --allow-unqualified > /dev/null 2>&1 || true
    kill -INT "$MOCK"; wait "$MOCK" 2>/dev/null || true
    node -e "const s=require('$DIR/summary.json'),d=s.pacing_deviation_ms;console.log('run $run spread ${spread} ms: late',s.packets.late,'p99',d.p99,'ms max',d.max,'ms, client loop lag max',s.event_loop_lag_ms.max,'ms')"
    sleep 2
  done
done

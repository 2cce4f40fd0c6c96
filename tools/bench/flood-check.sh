#!/bin/bash
# A flood of frames against the client's cadence: vLLM-Omni's mock sends 20,000 unknown events a
# session (`--fault unknown_event_flood`), each acked, while 4 sessions stream for 3 s. Prints, per
# run, the packets late, the max |deviation| (ms), the loop lag max (ms) and the reads held back.
# Each run gets a fresh mock; only the processes started here are signalled, by PID; 127.0.0.1 only.
#
#   tools/bench/flood-check.sh [KIT=dist/duplex-bench.js] [RUNS=3]
set -euo pipefail
. "$(dirname "$0")/kit.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
KIT=$(realpath "${1:-$ROOT/dist/duplex-bench.js}")
# The Node flags of this checkout's executable (its first line), as users run the kit.
read -r -a FLAGS <<< "$(kit_flags "$ROOT")"
RUNS=${2:-3}
for _ in $(seq "$RUNS"); do
  OUT=$(mktemp -d)
  node ${FLAGS[@]+"${FLAGS[@]}"} "$KIT" serve --protocol openai --flavor vllm-omni --fault unknown_event_flood --fault-after 10 --host 127.0.0.1 --port 0 >"$OUT/mock.out" 2>&1 &
  MOCK=$!
  for _ in $(seq 100); do grep -q 'ws://' "$OUT/mock.out" && break; sleep 0.1; done
  URL=$(grep -o 'ws://[^ ]*' "$OUT/mock.out" | head -1)
  if [ -z "$URL" ]; then kill -INT "$MOCK"; echo "error: the mock did not start (see $OUT/mock.out)" >&2; exit 1; fi
  timeout 60 node ${FLAGS[@]+"${FLAGS[@]}"} "$KIT" run --url "$URL" --protocol vllm-omni --model m --audio "$ROOT/libs/audio/speech/q1.wav" \
    --concurrency 4 --duration 3 --output "$OUT/run" --json --allow-unqualified >"$OUT/run.out" 2>"$OUT/run.err" || true
  kill -INT "$MOCK"; wait "$MOCK" 2>/dev/null || true
  node -e "const s=require('$OUT/run/summary.json'); console.log('late', s.packets.late, 'max', s.pacing_deviation_ms.max, 'lag', s.event_loop_lag_ms.max, 'held back', s.reads_paused ?? 0)"
  rm -rf "$OUT"
done

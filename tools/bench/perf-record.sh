#!/bin/bash
# Where the CPU of a probe and its mock goes, steady state: both run with --perf-basic-prof (so
# perf names JIT-compiled JavaScript), and `perf record` samples each for WINDOW_S seconds from
# FROM_S after the probe starts (connects and JIT warm-up left out). Then
# tools/bench/perf-categories.ts splits the samples into kernel, V8, Node, ws, rxjs and each of our
# libs, in µs per packet cycle.
#
# A checkout with dist/ runs its compiled kit (perf-categories.ts maps bundle lines to their libs).
# CLIENT=floor samples tools/bench/ws-floor.ts in the probe's place (compiled by esbuild into
# OUT_DIR, run with the kit's Node flags, as pacing.ts runs client `floor`): OUT_DIR/floor.data.
#
# NODE_FLAGS adds Node flags to the client's (e.g. --no-turbo-inlining), beside the kit's own.
#
#   [CLIENT=probe|floor] [NODE_FLAGS=...] tools/bench/perf-record.sh OUT_DIR [SESSIONS=512] [DURATION_S=16] [FROM_S=5] [WINDOW_S=8] [CHECKOUT=.]
#   node --import tsx tools/bench/perf-categories.ts OUT_DIR/probe.data --packets-per-s 6400
#
# Needs Linux perf (Debian: linux-perf) and permission to sample (root, or perf_event_paranoid <= 1).
# Only processes this script starts are sampled or signalled, by PID; everything talks on 127.0.0.1.
set -euo pipefail
. "$(dirname "$0")/kit.sh"
CLIENT=${CLIENT:-probe}
case "$CLIENT" in probe | floor) ;; *) echo "error: CLIENT must be probe or floor, not $CLIENT" >&2; exit 2 ;; esac
OUT=${1:?usage: perf-record.sh OUT_DIR [SESSIONS] [DURATION_S] [FROM_S] [WINDOW_S] [CHECKOUT]}
N=${2:-512}
DURATION=${3:-16}
FROM=${4:-5}
WINDOW=${5:-8}
ROOT=$(cd "${6:-.}" && pwd)
if (( $(echo "$FROM + $WINDOW >= $DURATION" | bc) )); then echo "error: FROM_S + WINDOW_S must end before DURATION_S" >&2; exit 2; fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$ROOT"
start_mock "$OUT" "$ROOT" --perf-basic-prof -- --stats-output "$OUT/mock-stats.json" || exit 1
MOCK=$MOCK_PID
trap 'kill -INT $MOCK 2>/dev/null || true' EXIT

# shellcheck disable=SC2086 # NODE_FLAGS's words are split on purpose
start_client "$CLIENT" "$OUT" "$ROOT" "$MOCK_URL" "$N" "$DURATION" --perf-basic-prof ${NODE_FLAGS:-}
PROBE=$CLIENT_PID
sleep "$FROM"
perf record -q -e cpu-clock -F 2000 -g -p "$PROBE" -o "$OUT/$CLIENT.data" -- sleep "$WINDOW" >/dev/null 2>&1 &
P1=$!
perf record -q -e cpu-clock -F 2000 -g -p "$MOCK" -o "$OUT/mock.data" -- sleep "$WINDOW" >/dev/null 2>&1 &
P2=$!
wait $P1 $P2 || true
STATUS=0
wait $PROBE || STATUS=$?
kill -INT $MOCK
wait $MOCK || true
trap - EXIT
echo "$CLIENT exited $STATUS; samples in $OUT/$CLIENT.data and $OUT/mock.data ($WINDOW s from $FROM s, $N sessions)"

#!/bin/bash
# The probe's system calls and context switches per packet cycle, steady state: a probe and its
# append-echo mock from CHECKOUT, then `perf stat` on the probe's process (all threads) for
# WINDOW_S seconds from FROM_S after it starts (connects and JIT warm-up left out). Prints each
# count over the window and per packet cycle (SESSIONS × 12.5 packets a second). Both start with
# the Node flags of the checkout's executable (its first line), as its users run them (kit.sh).
# CLIENT=floor counts tools/bench/ws-floor.ts's in the probe's place (kit.sh `start_client`).
#
#   [CLIENT=probe|floor] tools/bench/syscalls.sh [SESSIONS=256] [DURATION_S=14] [FROM_S=5] [WINDOW_S=5] [CHECKOUT=.]
#
# Needs Linux perf (Debian: linux-perf) with the syscalls tracepoints (root). Only processes this
# script starts are signalled, by PID; everything talks on 127.0.0.1.
set -euo pipefail
. "$(dirname "$0")/kit.sh"
CLIENT=${CLIENT:-probe}
case "$CLIENT" in probe | floor) ;; *) echo "error: CLIENT must be probe or floor, not $CLIENT" >&2; exit 2 ;; esac
N=${1:-256}
DURATION=${2:-14}
FROM=${3:-5}
WINDOW=${4:-5}
ROOT=$(cd "${5:-.}" && pwd)
if (( FROM + WINDOW >= DURATION )); then echo "error: FROM_S + WINDOW_S must end before DURATION_S" >&2; exit 2; fi
[ -f "$ROOT/dist/duplex-bench.js" ] || { echo "error: $ROOT/dist/duplex-bench.js is missing (npm run build)" >&2; exit 2; }
OUT=$(mktemp -d)
start_mock "$OUT" "$ROOT" || exit 1
trap 'kill -INT $MOCK_PID 2>/dev/null || true; rm -rf "$OUT"' EXIT
start_client "$CLIENT" "$OUT" "$ROOT" "$MOCK_URL" "$N" "$DURATION"
PROBE=$CLIENT_PID
sleep "$FROM"
EVENTS=raw_syscalls:sys_enter,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_read,syscalls:sys_enter_futex,context-switches,task-clock
perf stat -x, -e "$EVENTS" -p "$PROBE" -- sleep "$WINDOW" 2>"$OUT/stat.csv" >/dev/null
wait "$PROBE" || true
PACKETS=$(echo "$N * 12.5 * $WINDOW" | bc)
echo "$CLIENT, $N sessions, $WINDOW s from $FROM s: $PACKETS packet cycles; late packets in the run: $(cat "$OUT/run/summary.json" "$OUT/floor.out" 2>/dev/null | grep -o '"late": *[0-9]*' | head -1 | grep -o '[0-9]*$')"
awk -F, -v p="$PACKETS" '$1 ~ /^[0-9.]+$/ { name=$3; sub(/^syscalls:sys_enter_/, "", name); if (name == "task-clock") printf "%-18s %12.0f ms   %8.1f µs per packet cycle\n", name, $1, $1 * 1000 / p; else printf "%-18s %12d      %8.3f per packet cycle\n", name, $1, $1 / p }' "$OUT/stat.csv"

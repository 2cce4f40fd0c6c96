#!/usr/bin/env bash
# The client's CPU split by thread, and how often its loop's thread was preempted, over a window of
# one pacing run: the main thread (the loop) against all the others (the collector's helpers, the
# trace writer), from /proc/PID/task/*/stat, and the main thread's context switches from
# /proc/PID/status. Every other argument goes to pacing.ts (one run of one client), so its --pin
# applies. thread-cpu.sh instead names every thread of a conversation run, over the whole run.
#
#   tools/bench/thread-split.sh [--from S] [--window S] -- --sessions 512 --duration 30 --clients probe [--pin 0:1]
#
# Prints one line: main and other threads in cores over the window, and context switches a second.
set -euo pipefail
cd "$(dirname "$0")/../.."
from=8
window=20
while [ $# -gt 0 ]; do
  case "$1" in
    --from) from=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "thread-split.sh: unknown option $1 (options before --: --from S --window S)" >&2; exit 2 ;;
  esac
done
out=$(mktemp -d)
node --import tsx tools/bench/pacing.ts --runs 1 --out "$out" "$@" > "$out/pacing.md" 2>&1 &
bench=$!
trap 'kill -INT $bench 2>/dev/null || true' INT TERM
pid=""
for _ in $(seq 300); do
  pid=$(pgrep -P "$bench" -f "duplex-bench.js run" | head -1 || true)
  [ -n "$pid" ] && break
  sleep 0.1
done
[ -n "$pid" ] || { echo "thread-split.sh: no client process started within 30 s (see $out/pacing.md)" >&2; wait $bench || true; exit 1; }
sleep "$from"
ticks() { for t in /proc/"$pid"/task/*; do awk -v tid="$(basename "$t")" '{ print tid, $14 + $15 }' "$t/stat" 2>/dev/null || true; done; }
switches() { awk '/^voluntary_ctxt_switches/ { v = $2 } /^nonvoluntary_ctxt_switches/ { n = $2 } END { print v, n }' /proc/"$pid"/status; }
a=$(ticks); sa=$(switches)
sleep "$window"
b=$(ticks); sb=$(switches)
wait $bench || true
hz=$(getconf CLK_TCK)
awk -v pid="$pid" -v hz="$hz" -v w="$window" -v sa="$sa" -v sb="$sb" -v out="$out" '
  FNR == NR { before[$1] = $2; next }
  { d = $2 - before[$1]; if ($1 == pid) main += d; else rest += d }
  END {
    split(sa, x, " "); split(sb, y, " ")
    printf "main thread %.2f cores, other threads %.2f cores, main thread switches %.0f/s voluntary, %.0f/s involuntary (over %s s; pacing output in %s)\n", main / hz / w, rest / hz / w, (y[1] - x[1]) / w, (y[2] - x[2]) / w, w, out
  }' <(echo "$a") <(echo "$b")

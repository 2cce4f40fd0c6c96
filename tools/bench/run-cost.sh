#!/bin/bash
# What a run costs besides its packets: the CPU (user + system, all threads, from bash's `time`) of whole
# `run` processes of each checkout's kit, start-up to exit, at a few session counts and a short
# duration, the checkouts alternated in every round. Count 0 is a run that cannot connect (nothing
# listens at its URL): start-up and exit alone. The others run against one append-echo mock (the
# first checkout's). Prints every run's CPU seconds, then per checkout and count the median [min–max]
# and the CPU per session added between the two largest counts, ms (opens, ends, a session's state
# and files; at 0.2 s each session sends 3 packets).
#
#   tools/bench/run-cost.sh [ROUNDS=5] [DURATION_S=0.2] [COUNTS="0 1 64 256"] CHECKOUT...
#
# Each checkout runs its compiled kit (npm run build) with its executable's Node flags (kit.sh).
# Only processes this script starts are signalled, by PID; everything talks on 127.0.0.1; each run
# is bounded by `timeout`.
set -euo pipefail
. "$(dirname "$0")/kit.sh"
ROUNDS=${1:-5}
DURATION=${2:-0.2}
COUNTS=${3:-0 1 64 256}
shift $(($# < 3 ? $# : 3))
[ $# -gt 0 ] || set -- .
ROOTS=()
for c in "$@"; do ROOTS+=("$(cd "$c" && pwd)"); done
OUT=$(mktemp -d)
start_mock "$OUT" "${ROOTS[0]}" || exit 1
trap 'kill -INT $MOCK_PID 2>/dev/null || true; rm -rf "$OUT"' EXIT
echo "round  checkout  sessions  cpu_s"
for r in $(seq "$ROUNDS"); do
  for n in $COUNTS; do
    for root in "${ROOTS[@]}"; do
      rm -rf "$OUT/run"
      if [ "$n" = 0 ]; then url=ws://127.0.0.1:9/v1/realtime; sessions=1; else url=$MOCK_URL; sessions=$n; fi
      # Bash's own `time` of the subshell (no exec in it: with one, bash reports nothing): the probe's user and system seconds.
      # shellcheck disable=SC2046 # kit_words's words are split on purpose
      cpu=$( { TIMEFORMAT='%U %S'; time (cd "$root" && timeout 120 node $(kit_words "$root" probe) run --url "$url" \
        --concurrency "$sessions" --duration "$DURATION" --output "$OUT/run" --quiet --allow-unqualified >"$OUT/probe.out" 2>&1); } 2>&1 ) || true
      echo "$r  $root  $n  $(echo "$cpu" | tail -1 | awk '{ printf "%.2f", $1 + $2 }')"
    done
  done
done | tee "$OUT/all"
echo
echo "checkout  sessions  cpu_s median [min-max]"
for root in "${ROOTS[@]}"; do
  for n in $COUNTS; do
    awk -v c="$root" -v n="$n" '$2 == c && $3 == n { print $4 }' "$OUT/all" | sort -n |
      awk -v c="$root" -v n="$n" '{ v[NR] = $1 } END { printf "%s  %s  %.2f [%.2f-%.2f]\n", c, n, (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'
  done
done | tee "$OUT/medians"
set -- $COUNTS
LAST=${!#}
PREV=$(echo "$COUNTS" | awk '{ print $(NF - 1) }')
if [ "$LAST" != "$PREV" ] && [ "$PREV" != "" ]; then
  echo
  for root in "${ROOTS[@]}"; do
    awk -v c="$root" -v a="$PREV" -v b="$LAST" '$1 == c && $2 == a { x = $3 } $1 == c && $2 == b { y = $3 } END { printf "%s: %.2f ms of CPU per session added from %s to %s sessions (medians)\n", c, (y - x) / (b - a) * 1000, a, b }' "$OUT/medians"
  done
fi

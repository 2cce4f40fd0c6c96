#!/bin/bash
# Steady-state CPU of two builds side by side: each pair runs a probe and its mock from checkout A,
# then from checkout B (A and B alternate, so both see the same machine), and reads each process's
# CPU (all threads, /proc) over a window that leaves out connects, JIT warm-up and the drain.
# Prints µs per packet cycle for the probe and per append for the mock, then the B/A ratios, and
# the B/A ratio of the probe's cost over its own mock's (with one mock build on both sides, the
# mock's cost moves with the host alone, so this ratio takes most of the host's swings out).
#
#   tools/bench/steady-cpu.sh SESSIONS PAIRS PROBE_A MOCK_A PROBE_B MOCK_B [DURATION_S=16] [FROM_S=5] [WINDOW_S=8]
#
# PROBE_* and MOCK_* are checkouts (a git worktree of another commit, node_modules linked in), each
# run as its compiled kit when it is built (dist/duplex-bench.js), else through tsx, with the Node
# flags of its own executable (kit.sh); the same checkout on both sides of one process compares the
# other. NODE_A and NODE_B name the Node executable each side's probe runs on (default: node on the
# PATH), so one checkout can be compared with itself on two Node versions; the mocks run on node.
# Only processes started here are signalled, by PID; everything talks on 127.0.0.1.
set -euo pipefail
. "$(dirname "$0")/kit.sh"
N=${1:?usage: steady-cpu.sh SESSIONS PAIRS PROBE_A MOCK_A PROBE_B MOCK_B [DURATION_S] [FROM_S] [WINDOW_S]}
PAIRS=${2:?}
PROBE_A=$(cd "${3:?}" && pwd)
MOCK_A=$(cd "${4:?}" && pwd)
PROBE_B=$(cd "${5:?}" && pwd)
MOCK_B=$(cd "${6:?}" && pwd)
DURATION=${7:-16}
FROM=${8:-5}
WINDOW=${9:-8}
OUT=$(mktemp -d)
TICK_US=$((1000000 / $(getconf CLK_TCK)))

ticks() { awk '{ s += $14 + $15 } END { print s }' /proc/"$1"/task/*/stat 2>/dev/null; }

run_one() { # probe_root mock_root node -> "probe_us mock_us"
  local probe=$1 mock=$2 node=$3
  start_mock "$OUT" "$mock" || exit 1
  local m=$MOCK_PID url=$MOCK_URL
  # shellcheck disable=SC2046
  (cd "$probe" && exec "$node" $(kit_words "$probe" probe) run --url "$url" --concurrency "$N" --duration "$DURATION" --output "$OUT/run" --quiet >"$OUT/probe.out" 2>&1) &
  local p=$!
  sleep "$FROM"
  local p1 m1 p2 m2
  p1=$(ticks $p); m1=$(ticks $m)
  sleep "$WINDOW"
  p2=$(ticks $p); m2=$(ticks $m)
  wait $p || true
  kill -INT $m; wait $m || true
  rm -rf "$OUT/run"
  # 12.5 packets a second per session at 80 ms.
  local packets
  packets=$(echo "$N * 12.5 * $WINDOW" | bc)
  echo "$(echo "($p2 - $p1) * $TICK_US / $packets" | bc -l) $(echo "($m2 - $m1) * $TICK_US / $packets" | bc -l)"
}

ratios_probe=()
ratios_mock=()
ratios_relative=()
for pair in $(seq "$PAIRS"); do
  read -r pa ma <<<"$(run_one "$PROBE_A" "$MOCK_A" "${NODE_A:-node}")"
  read -r pb mb <<<"$(run_one "$PROBE_B" "$MOCK_B" "${NODE_B:-node}")"
  printf 'pair %d: A probe %.1f µs/packet, mock %.1f µs/append; B probe %.1f, mock %.1f\n' "$pair" "$pa" "$ma" "$pb" "$mb"
  ratios_probe+=("$(echo "$pb / $pa" | bc -l)")
  ratios_mock+=("$(echo "$mb / $ma" | bc -l)")
  ratios_relative+=("$(echo "($pb / $mb) / ($pa / $ma)" | bc -l)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.2f× [%.2f×–%.2f×]", m, a[1], a[NR] }'; }
echo "B/A probe µs per packet cycle: $(median "${ratios_probe[@]}"); mock µs per append: $(median "${ratios_mock[@]}") ($PAIRS pairs, $N sessions, ${WINDOW} s from ${FROM} s)"
# With one mock build on both sides, the mock's own cost moves only with the host: the probe's cost
# over its mock's, B against A, takes most of the host's swings out of the comparison.
echo "B/A probe over its mock: $(median "${ratios_relative[@]}")"
rm -rf "$OUT"

#!/bin/bash
# Memory of a steady run: a native nemotron mock and `run --concurrency N --duration S --trace off`
# from one checkout's compiled kit (`npm run build` there first; both with its executable's Node
# flags, kit.sh), then the run's `rss` block (growth
# per minute after --warmup-s, and over its second half), peak RSS, CPU per packet cycle, GC pauses.
# Two builds are compared by giving two checkouts (a git worktree of another commit, node_modules
# linked in): they run one after the other, A then B, PAIRS times, alternating which goes first.
#
#   tools/bench/steady-memory.sh CHECKOUT_A [CHECKOUT_B] [SESSIONS=256] [DURATION_S=300] [PAIRS=1]
#
# The mock is stopped by its PID; everything talks on 127.0.0.1; each run is bounded by `timeout`.
set -euo pipefail
. "$(dirname "$0")/kit.sh"
A=$(cd "${1:?usage: steady-memory.sh CHECKOUT_A [CHECKOUT_B] [SESSIONS] [DURATION_S] [PAIRS]}" && pwd)
B=${2:-}
[ -n "$B" ] && B=$(cd "$B" && pwd)
N=${3:-256}
DURATION=${4:-300}
PAIRS=${5:-1}
OUT=$(mktemp -d)

run_one() { # checkout label
  local root=$1 dir="$OUT/$2"
  mkdir -p "$dir"
  start_mock "$dir" "$root" -- --profile nemotron || { echo "$2: the mock did not start" >&2; return 1; }
  local mock=$MOCK_PID url=$MOCK_URL
  # shellcheck disable=SC2046
  # Our mock ends no session on its own: --max-session-s lets a run pass sglang-omni's 230 s.
  timeout $((DURATION + 300)) node $(kit_words "$root" probe) run --url "$url" --concurrency "$N" --duration "$DURATION" \
    --max-session-s "$DURATION" --warmup-s 60 --trace off --output "$dir/run" --quiet --allow-unqualified >"$dir/run.log" 2>&1 || true
  kill "$mock" 2>/dev/null || true
  wait "$mock" 2>/dev/null || true
  node -e '
    const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const r = s.rss, g = s.gc_pause_ms;
    const f = (v) => (v === null || v === undefined ? "-" : v.toFixed(2));
    console.log(`| ${process.argv[2]} | ${s.qualified ? "yes" : "no"}, ${s.packets.late} late | ${f(r.growth_mib_per_min)} MiB/min (${f(r.late_growth_mib_per_min)}) | ${r.peak_mib.toFixed(0)} MiB | ${s.cpu_us_per_packet} | ${g.count}, ${(g.total / 1000).toFixed(2)} s |`);
  ' "$dir/run/summary.json" "$2"
}

echo "steady: $N sessions x $DURATION s, native nemotron mock, --trace off; $(nproc) cores, $(node --version)"
echo "| build | qualified | RSS growth after 60 s (second half) | peak RSS | µs per packet cycle | GC pauses (main thread) |"
echo "| --- | --- | --- | --- | --- | --- |"
for p in $(seq 1 "$PAIRS"); do
  if [ -z "$B" ]; then
    run_one "$A" "A $(git -C "$A" rev-parse --short HEAD), $p"
  elif [ $((p % 2)) -eq 1 ]; then
    run_one "$A" "A $(git -C "$A" rev-parse --short HEAD), $p"
    run_one "$B" "B $(git -C "$B" rev-parse --short HEAD), $p"
  else
    run_one "$B" "B $(git -C "$B" rev-parse --short HEAD), $p"
    run_one "$A" "A $(git -C "$A" rev-parse --short HEAD), $p"
  fi
done
echo "runs: $OUT"

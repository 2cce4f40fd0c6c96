# Sourced by the bench scripts: a checkout's kit started as its users start it.
#
#   . "$(dirname "$0")/kit.sh"
#   kit_flags ROOT            the Node flags of ROOT's executable's first line (bin/duplex-bench.js)
#   kit_words ROOT APP        the words after `node` that run ROOT's kit: the Node flags of its
#                             executable's first line (bin/duplex-bench.js), then its compiled bundle
#                             when it is built (npm run build), else APP's (probe|mock) sources via tsx
#   start_client CLIENT DIR ROOT URL N DURATION_S [NODE_FLAGS...]
#                             CLIENT (probe: ROOT's kit `run`; floor: tools/bench/ws-floor.ts, built by
#                             esbuild into DIR, with the kit's Node flags, as pacing.ts runs client
#                             floor) against URL in the background, N sessions for DURATION_S, output
#                             in DIR/run and DIR/CLIENT.out; sets CLIENT_PID. Returns 2 for another CLIENT.
#   start_mock DIR ROOT [NODE_FLAGS...] [-- SERVE_ARGS...]
#                             ROOT's mock on 127.0.0.1 at a free port, output in DIR/mock.out and
#                             DIR/mock.err; sets MOCK_PID (node's own PID) and MOCK_URL. Returns 1,
#                             the mock stopped, when it does not listen within 10 s.

kit_flags() {
  [ -f "$1/bin/duplex-bench.js" ] && head -1 "$1/bin/duplex-bench.js" | sed -n 's/^#!.*env -S node //p'
  return 0
}

kit_words() {
  local root=$1 app=$2 flags
  flags=$(kit_flags "$root")
  if [ -f "$root/dist/duplex-bench.js" ]; then
    echo "$flags $root/dist/duplex-bench.js"
  else
    echo "$flags --import tsx $root/apps/$app/src/main.ts"
  fi
}

start_client() {
  local client=$1 dir=$2 root=$3 url=$4 n=$5 duration=$6
  shift 6
  case "$client" in
    probe)
      # shellcheck disable=SC2046 # kit_words's words are split on purpose
      node "$@" $(kit_words "$root" probe) run --url "$url" --concurrency "$n" --duration "$duration" --output "$dir/run" --quiet >"$dir/probe.out" 2>&1 &
      ;;
    floor)
      node -e "require('esbuild').buildSync({ entryPoints: [process.argv[1]], outfile: process.argv[2], bundle: true, platform: 'node', target: 'node20', format: 'cjs', logLevel: 'error' })" \
        "$root/tools/bench/ws-floor.ts" "$dir/ws-floor.js"
      # shellcheck disable=SC2046
      node "$@" $(kit_flags "$root") "$dir/ws-floor.js" --url "$url" --concurrency "$n" --duration "$duration" --output "$dir/run" >"$dir/floor.out" 2>&1 &
      ;;
    *) echo "error: CLIENT must be probe or floor, not $client" >&2; return 2 ;;
  esac
  CLIENT_PID=$!
}

start_mock() {
  local dir=$1 root=$2
  shift 2
  local node_flags=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do node_flags+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  # A URL left from an earlier mock in DIR must not be read as this one's.
  rm -f "$dir/mock.out" "$dir/mock.err"
  # shellcheck disable=SC2046 # kit_words's words are split on purpose
  (cd "$root" && exec node ${node_flags[@]+"${node_flags[@]}"} $(kit_words "$root" mock) serve --host 127.0.0.1 --port 0 "$@" >"$dir/mock.out" 2>"$dir/mock.err") &
  MOCK_PID=$!
  MOCK_URL=
  for _ in $(seq 100); do
    MOCK_URL=$(grep -o 'ws://[^ ]*' "$dir/mock.out" 2>/dev/null | head -1 || true)
    [ -n "$MOCK_URL" ] && return 0
    kill -0 "$MOCK_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -INT "$MOCK_PID" 2>/dev/null || true
  echo "error: the mock did not listen within 10 s (see $dir/mock.err)" >&2
  return 1
}

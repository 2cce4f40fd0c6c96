#!/usr/bin/env bash
# The type check and the lint at once: each is one single-threaded process, so on two cores both
# take about as long as the longer one (29 s each alone on the 2-core host). Exits with the first
# failure's status; both always finish, so both report.
set -uo pipefail
cd "$(dirname "$0")/.."
npm run -s typecheck &
typecheck=$!
npm run -s lint
lint=$?
wait "$typecheck"
typecheck=$?
[ "$typecheck" -ne 0 ] && exit "$typecheck"
exit "$lint"

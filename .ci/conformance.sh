#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# .ci/npm/package-lock.json) against compass-mcp over streamable HTTP, in both protocol eras.
#
# Builds the binary, serves a fresh data file on a free loopback port, and runs:
# - 0.1.16 (the latest release), every active server scenario (2025-06-18 and 2025-11-25),
#   with conformance-baseline.yml as the expected failures. Prints which scenarios that
#   apply passed and which fixture-only ones (the baseline) failed as expected. Fails on any
#   scenario that fails outside the baseline, on a baseline entry that now passes or didn't
#   run, and when the suite fails.
# - 0.2.0-alpha.12 (conformance-next: the first with 2026-07-28's scenarios) with
#   --requirements 2025-11-25 and again with --requirements 2026-07-28, each with its
#   baseline (conformance-baseline-REVISION.yml: one entry a fixture's check). Fails when
#   the suite does, and on any wire-schema-valid violation (conformance-summary.mjs).
# Stops the server whatever happens. The suite's results stay in $CONFORMANCE_OUT if set.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/node.sh
ci_node_setup

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -INT "$server_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/compass-mcp" ./cmd/compass-mcp
COMPASS_LOG=info COMPASS_ME=ana "$work/compass-mcp" serve --data "$work/compass.db" --space conformance \
  --http 127.0.0.1:0 2>"$work/server.log" &
server_pid=$!

url=
for _ in $(seq 100); do
  url=$(grep -o 'url=http://[^ ]*/mcp' "$work/server.log" | head -n1 | cut -d= -f2) || true
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "compass-mcp did not start serving HTTP:"; cat "$work/server.log"; exit 1
fi
echo "compass-mcp serves $url"

out=${CONFORMANCE_OUT:-$work/results}
status=0
timeout 300 conformance server --url "$url" --expected-failures conformance-baseline.yml -o "$out" >"$work/suite.log" 2>&1 || status=$?
# A summary a reader can trust at a glance, checked here as well as by the suite: every
# scenario that applies to this server passed; every one the baseline lists (they call the
# suite's own fixtures) failed; nothing else. The suite's own words only when they disagree.
scenarios() { sed -n "s/^$1 \([a-z0-9-]*\): .*/\1/p" "$work/suite.log" | sort; }
scenarios '✓' >"$work/passed"
scenarios '✗' >"$work/failed"
sed -n 's/^  - \([a-z0-9-]*\).*/\1/p' conformance-baseline.yml | sort >"$work/baseline"
applicable=$(comm -23 "$work/passed" "$work/baseline")
fixtures=$(comm -12 "$work/failed" "$work/baseline")
unexpected=$(comm -23 "$work/failed" "$work/baseline")
now_passing=$(comm -12 "$work/passed" "$work/baseline")
unrun=$(comm -23 "$work/baseline" <(sort -u "$work/passed" "$work/failed"))
count() { if [ -z "$1" ]; then echo 0; else echo "$1" | wc -l; fi; }
list() { echo "$1" | paste -sd, - | sed 's/,/, /g'; }
echo "conformance summary (@modelcontextprotocol/conformance, over streamable HTTP):"
echo "  passed:          $(count "$applicable") scenarios that apply to compass-mcp: $(list "$applicable")"
echo "  not applicable:  $(count "$fixtures") scenarios that call the suite's own fixtures (test_..., test://...), failed as"
echo "                   conformance-baseline.yml expects, each with why: $(list "$fixtures")"
verdict=0
if [ -n "$unexpected" ]; then echo "  FAILED, not in the baseline: $(list "$unexpected")"; verdict=1; fi
if [ -n "$now_passing" ]; then echo "  PASSED, but the baseline expects a failure (take it out): $(list "$now_passing")"; verdict=1; fi
if [ -n "$unrun" ]; then echo "  in the baseline, but the suite ran no such scenario: $(list "$unrun")"; verdict=1; fi
if [ -z "$applicable" ]; then echo "  no scenario passed: the suite's results could not be read"; verdict=1; fi
if [ "$status" -ne 0 ] || [ "$verdict" -ne 0 ]; then
  echo "conformance: FAILED (suite exit $status); the suite's whole output:"
  cat "$work/suite.log"
  echo "server log:"; cat "$work/server.log"
  exit 1
fi
echo "conformance 0.1.16: passed"

# The prerelease, once for each protocol revision.
next=.ci/node/node_modules/conformance-next/dist/index.js
for revision in 2025-11-25 2026-07-28; do
  status=0
  timeout 300 node "$next" server --url "$url" --requirements "$revision" \
    --expected-failures "conformance-baseline-$revision.yml" -o "$out/$revision" >"$work/suite-$revision.log" 2>&1 || status=$?
  if ! node .ci/conformance-summary.mjs "$revision" "$out/$revision" "conformance-baseline-$revision.yml" "$status"; then
    echo "conformance $revision: FAILED (suite exit $status); the suite's whole output:"
    cat "$work/suite-$revision.log"
    echo "server log:"; cat "$work/server.log"
    exit 1
  fi
done
echo "conformance: passed in both eras"

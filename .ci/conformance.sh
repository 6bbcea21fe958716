#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# .ci/npm/package-lock.json) against compass-mcp over streamable HTTP.
#
# Builds the binary, serves a fresh data file on a free loopback port, runs every active
# server scenario with conformance-baseline.yml as the expected failures, and stops the
# server whatever happens. Fails on any scenario that fails outside the baseline, and on
# a baseline entry that now passes. The suite's results stay in $CONFORMANCE_OUT if set.
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
# The suite's summary and its verdict on the baseline; the whole log when it fails.
sed -n '/=== SUMMARY ===/,$p' "$work/suite.log"
if [ "$status" -ne 0 ]; then
  echo "conformance: exit $status; the suite's whole output:"
  cat "$work/suite.log"
  echo "server log:"; cat "$work/server.log"
  exit "$status"
fi

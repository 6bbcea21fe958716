#!/usr/bin/env bash
# The MCP Inspector's CLI (@modelcontextprotocol/inspector, pinned in .ci/npm/package-lock.json)
# against compass-mcp over stdio, which the conformance suite can't reach: see inspector.mjs
# for the steps. Builds the binary, imports testdata's conversations into a fresh data file,
# and runs the steps; fails if any does.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/node.sh
ci_node_setup

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go build -o "$work/compass-mcp" ./cmd/compass-mcp
COMPASS_LOG=warn COMPASS_ME=ana "$work/compass-mcp" import --data "$work/compass.db" --space personal testdata/import/pricing.jsonl >/dev/null
node .ci/inspector.mjs "$work/compass-mcp" "$work/compass.db"

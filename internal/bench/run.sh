#!/usr/bin/env bash
# The full benchmark: installs the reference filesystem MCP server (pinned in
# internal/bench/package-lock.json) into internal/bench/node_modules, which git ignores, then runs
# go run ./internal/bench, which writes docs/PERFORMANCE.md. Arguments go to the command:
#   internal/bench/run.sh                  # the full run, a few minutes
#   internal/bench/run.sh -profile DIR     # CPU and allocation profiles of the hot paths
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=internal/bench/node_modules
if ! cmp -s internal/bench/package-lock.json "$dir/.bench-installed.json" || [ ! -f "$dir/@modelcontextprotocol/server-filesystem/dist/index.js" ]; then
  echo "installing the filesystem server into $dir"
  (cd internal/bench && npm ci --no-audit --no-fund --loglevel=error)
  cp internal/bench/package-lock.json "$dir/.bench-installed.json"
fi
exec go run ./internal/bench "$@"

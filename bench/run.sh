#!/usr/bin/env bash
# The full benchmark: installs the reference filesystem MCP server (pinned in
# bench/package-lock.json) into bench/node_modules, which git ignores, then runs
# go run ./bench, which writes docs/PERFORMANCE.md. Arguments go to the command:
#   bench/run.sh                  # the full run, a few minutes
#   bench/run.sh -profile DIR     # CPU and allocation profiles of the hot paths
set -euo pipefail
cd "$(dirname "$0")/.."

dir=bench/node_modules
if ! cmp -s bench/package-lock.json "$dir/.bench-installed.json" || [ ! -f "$dir/@modelcontextprotocol/server-filesystem/dist/index.js" ]; then
  echo "installing the filesystem server into $dir"
  (cd bench && npm ci --no-audit --no-fund --loglevel=error)
  cp bench/package-lock.json "$dir/.bench-installed.json"
fi
exec go run ./bench "$@"

#!/usr/bin/env bash
# The full benchmark: installs the reference filesystem MCP server (pinned in
# internal/cmd/bench/package-lock.json) into internal/cmd/bench/node_modules, which git ignores, then runs
# go run ./internal/cmd/bench, which prints its report (-o FILE writes it). Arguments go to the command:
#   internal/cmd/bench/run.sh                  # the full run, a few minutes
#   internal/cmd/bench/run.sh -profile DIR     # CPU and allocation profiles of the hot paths
set -euo pipefail
cd "$(dirname "$0")/../../.."

dir=internal/cmd/bench/node_modules
if ! cmp -s internal/cmd/bench/package-lock.json "$dir/.bench-installed.json" || [ ! -f "$dir/@modelcontextprotocol/server-filesystem/dist/index.js" ]; then
  echo "installing the filesystem server into $dir"
  (cd internal/cmd/bench && npm ci --no-audit --no-fund --loglevel=error)
  cp internal/cmd/bench/package-lock.json "$dir/.bench-installed.json"
fi
exec go run ./internal/cmd/bench "$@"

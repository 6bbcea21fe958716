#!/usr/bin/env bash
# The MCP Bundle, checked as Claude Desktop meets it. Builds this machine's release (go run
# ./internal/cmd/release -targets host: the full six-platform release is a command people run,
# too slow for CI), then with the mcpb CLI (@anthropic-ai/mcpb, pinned in
# .ci/npm/package-lock.json): validates the manifest (and the full release's, with every
# platform's command), packs the bundle's folder, and unpacks both that bundle and the one
# the release builder wrote itself. On each unpacked bundle,
# internal/cmd/bundlecheck starts the server from the manifest's mcp_config for this platform,
# with ${__dirname} and ${user_config.*} substituted as Claude Desktop does, and runs an MCP
# session over stdio: initialize, tools/list, write_document, read_document.
#
# web=off: the person's page is off, so that the check binds no port (before --web exists
# the server ignores COMPASS_WEB).
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/node.sh
ci_node_setup

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# -allow-dirty: CI checks the bundle, it does not publish it.
go run ./internal/cmd/release -targets host -allow-dirty -out "$work/dist" > /dev/null
released=$(ls "$work"/dist/compass-mcp_*.mcpb)

mcpb validate "$work/dist/bundle/manifest.json"
# The full release's manifest (every platform's command), which CI builds no binaries for.
go run ./internal/cmd/release -manifest-only "$work/release-manifest" > /dev/null
mcpb validate "$work/release-manifest/manifest.json"
mcpb pack "$work/dist/bundle" "$work/packed.mcpb" > /dev/null
mcpb info "$released"

for bundle in "$work/packed.mcpb" "$released"; do
  name=$(basename "$bundle" .mcpb)
  mcpb unpack "$bundle" "$work/installed/$name"
  go run ./internal/cmd/bundlecheck "$work/installed/$name" \
    me=ana space=bundle-check data="$work/data/$name/compass.db" web=off
done

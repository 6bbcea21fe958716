#!/usr/bin/env bash
# Run by .ci/run from the repository's root: prints the path of Claude Code's CLI (npm's
# @anthropic-ai/claude-code, pinned with the other clients in .ci/npm/package-lock.json and
# installed with them into .ci/node by npm ci: see .ci/node.sh), and only that on stdout.
# cmd/compass-mcp's tests run it (COMPASS_TEST_CLAUDE): TestInstallClaudeCode (install adds
# the server with claude mcp add) and TestClaudeCodeConnects (claude mcp list reports the
# stdio server, the HTTP server with a bearer token and the OAuth one), and
# e2e/claudecode's TestWhatTheModelReads (claude -p against a scripted Messages API: what
# the model reads of each tool, against golden transcripts). Offline, in a temporary HOME
# and without a login, all work (FACTS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/node.sh
ci_node_setup >&2
claude="$PWD/.ci/node/node_modules/.bin/claude"
if ! "$claude" --version >/dev/null; then
  echo "$claude does not run" >&2
  exit 1
fi
echo "$claude"

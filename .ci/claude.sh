#!/usr/bin/env bash
# Run by .ci/run from the repository's root: installs Claude Code's CLI (npm's
# @anthropic-ai/claude-code, at the version checked in FACTS) into .ci/claude, which git
# ignores, unless that version is there already, and prints the path of its claude.
# cmd/compass-mcp's TestInstallClaudeCode runs it (COMPASS_TEST_CLAUDE): install adds the
# server with claude mcp add, and claude mcp list connects to it. Offline, in a temporary
# HOME and without a login, both work.
set -euo pipefail
dir=.ci/claude
version=2.1.328
if [ ! -x "$dir/node_modules/.bin/claude" ] || [ "$(cat "$dir/.version" 2>/dev/null)" != "$version" ]; then
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$dir" && npm install --no-audit --no-fund --no-save --loglevel=error "@anthropic-ai/claude-code@$version" >&2)
  echo "$version" > "$dir/.version"
fi
echo "$PWD/$dir/node_modules/.bin/claude"

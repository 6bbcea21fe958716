#!/usr/bin/env bash
# A server shared by a team, driven by clients nobody here wrote: the official TypeScript
# SDK's client and the MCP Inspector's CLI (both pinned in .ci/npm/package-lock.json), each
# with "Authorization: Bearer <token>" against /spaces/{space}/mcp. See team.mjs for the
# steps. Builds the binary, makes members and tokens in a fresh data file, serves it on a
# free loopback port, runs the steps, stops the server; fails if any step does.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/node.sh
ci_node_setup

work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/compass-mcp" ./cmd/compass-mcp
bin="$work/compass-mcp"
export COMPASS_DATA="$work/compass.db" COMPASS_ME=ana COMPASS_SPACE=personal COMPASS_LOG=warn TZ=UTC
"$bin" people set ana Ana >/dev/null
"$bin" people set ben Ben >/dev/null
"$bin" members add launch ana >/dev/null
"$bin" members add launch ben >/dev/null
echo "marker-personal" | "$bin" docs save --new "Personal plan" >/dev/null
echo "marker-launch" | "$bin" docs save --new "Launch plan" --space launch >/dev/null
TEAM_ANA=$("$bin" tokens add --for ana --agent north 2>/dev/null)
TEAM_BEN_READ_ONLY=$("$bin" tokens add --for ben --read-only 2>/dev/null)
TEAM_REVOKED=$("$bin" tokens add --for ben 2>/dev/null)
"$bin" tokens revoke "$("$bin" tokens list --for ben | grep read-write | cut -d' ' -f1)" >/dev/null
export TEAM_ANA TEAM_BEN_READ_ONLY TEAM_REVOKED

COMPASS_LOG=info "$bin" serve --http 127.0.0.1:0 2>"$work/server.log" &
pid=$!
url=
for _ in $(seq 100); do
  url=$(grep -o 'url=http://[^ ]*/mcp' "$work/server.log" | head -1 | cut -d= -f2) || true
  [ -n "$url" ] && break
  sleep 0.1
done
if [ -z "$url" ]; then echo "the server said no URL:"; cat "$work/server.log"; exit 1; fi

node .ci/team.mjs "${url%/mcp}" || { echo "server log:"; cat "$work/server.log"; exit 1; }

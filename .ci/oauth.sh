#!/usr/bin/env bash
# The OAuth sign-in end to end (e2e/oauth): the official TypeScript SDK's client OAuth
# (.ci/oauth-client.mjs) signs in to compass-mcp, with the person in headless chromium,
# then the Inspector's CLI uses the token. Installs the pinned npm packages first (Node 22,
# the SDK, the Inspector: .ci/node.sh); the test must then run, not skip.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/node.sh
ci_node_setup
COMPASS_OAUTH_E2E=1 go test -race -count=1 ./e2e/oauth

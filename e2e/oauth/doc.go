// Package oauth holds the OAuth sign-in's end-to-end test: the official TypeScript SDK's
// client OAuth (.ci/oauth-client.mjs, Node and the SDK installed by .ci/node.sh) signs in to
// the compass-mcp binary serving a real data file, with the person played in headless
// chromium on the consent page.
//
// go test ./e2e/oauth runs it when .ci/node is installed (bash .ci/oauth.sh installs it and
// runs the test, as CI does); without it the test is skipped, unless COMPASS_OAUTH_E2E=1
// says it must run. -screenshots writes the consent page to docs/screenshots.
package oauth

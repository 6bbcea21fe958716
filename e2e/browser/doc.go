// Package browser holds the person's page's tests in a real browser: Debian's chromium,
// driven headless by chromedp, against the compass-mcp binary serving a real data file,
// with the agent's side played by "compass-mcp call" in other processes.
//
// Run them with go test ./web/browser; -screenshots also writes the README's
// screenshots into docs/screenshots. CI installs chromium with apt-get when it's missing.
package browser

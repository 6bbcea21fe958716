// Package claudecode records what a model reads from compass-mcp in the client most people
// use: the pinned Claude Code CLI (.ci/npm, COMPASS_TEST_CLAUDE) runs against a scripted
// Messages API on loopback, and the next request it sends after each tool call is exactly
// what the model would read (FACTS.md, "What a model sees in Claude Code, offline").
//
// Its tests compare those requests' compass parts (the server's instructions as the system
// text has them, the deferred tools' names, the schemas ToolSearch loads, and each tool
// result) with golden transcripts in testdata, over stdio (protocol 2026-07-28) and over
// streamable HTTP (2025-11-25); go test ./e2e/claudecode -update writes them again.
package claudecode

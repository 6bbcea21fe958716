// Package interop checks the built compass-mcp with a client nobody here wrote: the official
// Go SDK's (github.com/modelcontextprotocol/go-sdk), over stdio and streamable HTTP, at the
// oldest and the newest protocol version the server negotiates.
//
// It is a package of its own so that the server's packages never depend on a second MCP
// library; only its tests import the SDK. Run it with go test ./e2e/interop (it builds the
// binary first, as a person would).
package interop

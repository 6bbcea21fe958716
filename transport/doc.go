// Package transport carries MCP requests to the tools: the stdio loop, the HTTP guard and
// limits, and MCP sessions.
//
// Over stdio, ServeStdio reads one JSON-RPC message a line and answers every request it
// read, however the input ends. Over HTTP, NewHTTP is mcp-go's streamable HTTP server with
// its sessions kept in the store (access.Sessions), so that every server on a store
// answers every session; Guard sits in front of it, and of every other route that takes a
// body: it bounds what a request may hold (MaxBody, and the bytes of large bodies held at
// once), refuses browser pages of other origins, and answers a tools/call holding a text
// longer than any may be before anything decodes it.
//
// # Caveats
//
// Who is asking is not decided here: the routes sit behind access.Gate (Route puts them
// there), and Guard comes after it, so that a request without a good token is refused
// before its body is read. A loopback server answers only to a loopback Host (DNS
// rebinding): mcp-go checks it for the requests it reads itself, and Direct for the ones
// Guard has read for it.
package transport

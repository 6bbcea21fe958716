package main

import (
	"net/http"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/transport"
)

// registerTeam serves MCP on mux at /mcp (the configured space, as always) and at
// /spaces/{space}/mcp (any space the request's token allows and its person is a member
// of), every request behind the gate: it acts as its token's person and agent, or as the
// configured ones for --token and an open loopback server; a session stays with the token
// that began it (mcpHTTP is behind transport.Sessions.Check). It returns the gate, for other
// routes that must know who is asking (gate.Require, then gate.RequireSpace).
func registerTeam(mux *http.ServeMux, db kv.DB, c config, token string, mcpHTTP http.Handler) *access.Gate {
	gate := &access.Gate{Store: access.New(db).WithOwner(c.space, c.me), Static: token, Agent: c.agent}
	transport.Route(mux, gate, c.space, mcpHTTP)
	return gate
}

// hasTokenRows reports whether c's data file has any token row (if it can't be read, the
// server's own opening of it says why).
func hasTokenRows(c config) bool {
	db, err := c.open()
	if err != nil {
		return false
	}
	defer db.Close()
	has, err := access.New(db).HasTokens()
	return err == nil && has
}

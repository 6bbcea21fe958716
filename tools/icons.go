package tools

import (
	"context"
	"strings"

	"github.com/compass-mcp/compass-mcp/internal/icon"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Website is the server's home, as initialize's serverInfo tells clients.
const Website = "https://github.com/compass-mcp/compass-mcp"

// serverIcons are serverInfo's icons in initialize (2025-11-25) and server/discover
// (2026-07-28): the icon itself, as data URIs, so that every client can show it whatever
// the transport, with nothing to fetch (about 2.5 KB, sent once a session). Not in every
// other result: see plainServerInfo.
var serverIcons = []mcp.Icon{
	{Src: icon.DataURI("image/svg+xml", icon.SVG), MIMEType: "image/svg+xml", Sizes: []string{"any"}},
	{Src: icon.DataURI("image/png", icon.PNG48), MIMEType: "image/png", Sizes: []string{"48x48"}},
}

// plainServerInfo puts serverInfo without its icons into a 2026-07-28 result's _meta,
// before mcp-go would put its own there: mcp-go identifies the server in every result of
// that era, icons included, which made a one-line tools/call answer some 2.9 KB on the
// wire, 2.5 KB of it icons the client had from server/discover. An OnSuccess hook: mcp-go
// keeps a serverInfo a result already has. server/discover keeps the icons; tools/list
// gets its tools' own (withIcons) and stays under its 6 KB.
func (s *Server) plainServerInfo(ctx context.Context, _ any, method mcp.MCPMethod, _ any, result any) {
	if method == mcp.MethodServerDiscover || !mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
		return
	}
	if r, ok := result.(mcp.ResultMetadata); ok {
		if meta := r.EnsureResultMeta(); meta.ServerInfo() == nil {
			meta.SetServerInfo(s.info)
		}
	}
}

// withIcons gives each tool the icon as the person's page serves it, when the page's
// address (the link base) is https: the spec has clients take icons only from https: and
// data: URIs, from the server's own origin, and a hosted server's page is on its origin.
// A URL costs some 40 bytes a tool in tools/list, which every conversation reads and which
// must stay under 6 KB; the icon as a data URI would cost 600 (SVG) to 1,800 (PNG) bytes a
// tool, 4 to 12 KB for the seven. So a local server (stdio, or http on loopback) lists its
// tools without icons of their own, and clients show the server's (serverIcons).
func (s *Server) withIcons(_ context.Context, ts []mcp.Tool) []mcp.Tool {
	base := s.linkBase()
	if !strings.HasPrefix(base, "https://") {
		return ts
	}
	icons := []mcp.Icon{{Src: base + icon.PNGPath}}
	out := make([]mcp.Tool, len(ts))
	for i, t := range ts {
		t.Icons = icons
		out[i] = t
	}
	return out
}

package tools_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/icon"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// initialized is an in-process client of srv, closed when t ends, that has said initialize
// at protocol as the client name, with the server's answer.
func initialized(t *testing.T, srv *server.MCPServer, protocol, name string) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = protocol
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	init, err := c.Initialize(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return c, init
}

// listTools is tools/list and initialize's serverInfo of a server whose links start with
// base, to a client of protocol.
func listTools(t *testing.T, base, protocol string) ([]mcp.Tool, mcp.Implementation) {
	t.Helper()
	srv, err := tools.New(kvtest.Open(t), tools.Config{Space: "personal", For: "ana", LinkBase: base, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	c, init := initialized(t, srv, protocol, "t")
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools, init.ServerInfo
}

// Every tool has a title for people, in the tool and, for clients before 2026-07-28, in its
// annotations (that era's read only title: the repeat is left out); the server has
// the icon as data URIs (SVG and PNG) in serverInfo, whatever the transport; each tool has
// it as the page serves it when the page's address is https (clients take no http: icon),
// and none (clients show the server's) otherwise; and tools/list stays within its 6 KB
// with a public URL of a realistic length.
func TestTitlesAndIcons(t *testing.T) {
	for _, tc := range []struct {
		base string
		icon string // each tool's icon's src, "" for none
	}{
		{"", ""},
		{"compass:/", ""},
		{"/", ""},
		{"http://127.0.0.1:7411", ""},
		{"https://compass.example-company.com", "https://compass.example-company.com/icon.png"},
	} {
		ts, info := listTools(t, tc.base, mcp.LATEST_PROTOCOL_VERSION)
		legacy, _ := listTools(t, tc.base, mcp.LATEST_LEGACY_PROTOCOL_VERSION)
		for i, tl := range ts {
			if tl.Title == "" || tl.Annotations.Title != "" || legacy[i].Annotations.Title != tl.Title || len(tl.Title) > 20 {
				t.Errorf("%s: title %q, annotations.title %q (%q before 2026-07-28): want one short title, in both before 2026-07-28", tl.Name, tl.Title, tl.Annotations.Title, legacy[i].Annotations.Title)
			}
			var got string
			if len(tl.Icons) > 0 {
				got = tl.Icons[0].Src
			}
			if len(tl.Icons) > 1 || got != tc.icon {
				t.Errorf("link base %q: %s's icons %+v, want %q", tc.base, tl.Name, tl.Icons, tc.icon)
			}
		}
		if info.Title != "Compass" || info.WebsiteURL != tools.Website || len(info.Icons) != 2 ||
			info.Icons[0].Src != icon.DataURI("image/svg+xml", icon.SVG) || info.Icons[0].MIMEType != "image/svg+xml" ||
			info.Icons[1].Src != icon.DataURI("image/png", icon.PNG48) || info.Icons[1].Sizes[0] != "48x48" {
			t.Errorf("serverInfo: %+v", info)
		}
		raw, err := json.Marshal(ts)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) > 6<<10 {
			t.Errorf("link base %q: tools/list has %d bytes, want at most 6 KB", tc.base, len(raw))
		}
		t.Logf("link base %q: tools/list %d bytes", tc.base, len(raw))
		if strings.Contains(string(raw), "data:") {
			t.Errorf("tools/list carries a data URI")
		}
	}
}

package command

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// What a client is told of the server and its tools, as the built binary says it over stdio
// and over HTTP: initialize's serverInfo (its icons' data URIs shortened to their size) and
// tools/list, each tool's title, annotations, description, schema and icons, in
// testdata/sessions/tools-list.txtar (tools-list-http.txtar over HTTP), so that a change to any of it shows in review. Then
// the icons the tools get when the page is at an https address, and the size of tools/list,
// which must stay within 6 KB.
func TestToolsListGolden(t *testing.T) {
	t.Parallel()
	data := newData(t)
	url, _ := httpServer(t, data)
	stdio, err := client.NewStdioMCPClient(testbin.Path, testEnv(data), "serve")
	if err != nil {
		t.Fatal(err)
	}
	overHTTP, err := client.NewStreamableHttpClient(url)
	if err != nil {
		t.Fatal(err)
	}
	if err := overHTTP.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Over stdio the tools offer list_documents' sign_in (a one-person server's page); over
	// HTTP they don't: a golden each.
	for i, c := range []*client.Client{stdio, overHTTP} {
		t.Cleanup(func() { c.Close() })
		init := initialize(t, c, "test-client")
		list := listTools(t, c)
		hosted := listTools(t, stdioClient(t, data, "--link-base", "https://compass.example.com"))
		var b strings.Builder
		fmt.Fprintf(&b, "-- initialize serverInfo --\n%s\n", dataURIs.ReplaceAllStringFunc(indent(t, init.ServerInfo), func(s string) string {
			m := dataURIs.FindStringSubmatch(s)
			return fmt.Sprintf("data:%s;base64,(%d bytes)", m[1], len(m[2]))
		}))
		fmt.Fprintf(&b, "-- tools/list --\n%s\n", indent(t, list))
		b.WriteString("-- tools/list's icons, the page at https://compass.example.com --\n")
		for _, tl := range hosted {
			icons, _ := json.Marshal(tl.Icons)
			fmt.Fprintf(&b, "%s: %s\n", tl.Name, icons)
		}
		golden(t, [...]string{"tools-list.txtar", "tools-list-http.txtar"}[i], b.String())

		for _, ts := range [][]mcp.Tool{list, hosted} {
			raw, err := json.Marshal(ts)
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) > 6<<10 {
				t.Errorf("tools/list has %d bytes, want at most 6 KB", len(raw))
			}
		}
	}
}

var dataURIs = regexp.MustCompile(`data:([a-z+/]+);base64,([A-Za-z0-9+/=]+)`)

func listTools(t *testing.T, c *client.Client) []mcp.Tool {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// indent is v as the JSON a client gets, indented to be read.
func indent(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

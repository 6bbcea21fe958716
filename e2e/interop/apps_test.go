package interop

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official Go SDK's client, declaring the MCP Apps extension in its capabilities (in
// initialize, or in each request's _meta at 2026-07-28), gets the writing tools linked to
// the change view and the view's data in their results; without it, neither. Over stdio,
// the built binary as a host starts it.
func TestGoSDKApps(t *testing.T) {
	for _, version := range []string{newestLegacy, newest} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			data := seeded(t)
			for _, apps := range []bool{false, true} {
				cs := appsSession(t, data, version, apps)
				checkApps(t, cs, apps)
			}
		})
	}
}

func appsSession(t *testing.T, data, version string, apps bool) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(testbin.Path, "serve")
	cmd.Env = serverEnv(data)
	cmd.Stderr = &logWriter{t: t}
	opts := &mcp.ClientOptions{}
	if apps {
		caps := &mcp.ClientCapabilities{}
		caps.AddExtension("io.modelcontextprotocol/ui", map[string]any{"mimeTypes": []string{"text/html;profile=mcp-app"}})
		opts.Capabilities = caps
	}
	c := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1.0.0"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting with protocol %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func checkApps(t *testing.T, cs *mcp.ClientSession, apps bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var linked, undo bool
	for _, tl := range list.Tools {
		if tl.Name == "undo_change" {
			undo = true
		}
		if tl.Name == "write_document" {
			ui, _ := tl.Meta["ui"].(map[string]any)
			linked = ui["resourceUri"] == "ui://compass/change" && tl.Meta["ui/resourceUri"] == "ui://compass/change"
		}
	}
	if linked != apps || undo != apps {
		t.Errorf("apps %v: write_document linked %v, undo_change listed %v", apps, linked, undo)
	}
	title := "Apps " + map[bool]string{false: "off", true: "on"}[apps]
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_document", Arguments: map[string]any{"title": title, "text": "one\n"}})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if !strings.HasPrefix(text, "Saved ["+title+"](") || !strings.HasSuffix(text, " as version 1: +1 \u22120 lines.") {
		t.Errorf("apps %v: the answer %q", apps, text)
	}
	raw, _ := json.Marshal(res.Meta)
	if got := strings.Contains(string(raw), `"compass/change"`); got != apps {
		t.Errorf("apps %v: the result's _meta %s", apps, raw)
	}
	if res.StructuredContent != nil {
		t.Errorf("apps %v: structuredContent %v", apps, res.StructuredContent)
	}
	if !apps {
		return
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://compass/change"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].MIMEType != "text/html;profile=mcp-app" || !strings.HasPrefix(rr.Contents[0].Text, "<!DOCTYPE html>") {
		t.Errorf("the view: %d contents", len(rr.Contents))
	}
}

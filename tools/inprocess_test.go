package tools_test

import (
	"log/slog"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// inProcess starts a real in-process MCP session with the tools on db (cfg's space
// "personal" when unset, its logs discarded), closed when the test ends, and initializes it
// as clientName with the extensions given (nil: none); it returns the client and
// initialize's answer.
func inProcess(t testing.TB, db kv.DB, cfg tools.Config, clientName string, extensions map[string]any) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	if cfg.Space == "" {
		cfg.Space = "personal"
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	srv, err := tools.New(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := t.Context()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: clientName, Version: "1"}
	init.Params.Capabilities.Extensions = extensions
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	return c, res
}

package tools

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// undo_change widens nothing: a read-only token may not call it, a reviewed token (review
// mode asked for by the token, not the server) may not either, and forApps lists it to
// neither, whatever path the call comes by.
func TestUndoWidensNothing(t *testing.T) {
	db := kvtest.Open(t)
	ctx := t.Context()
	docs := docstore.New(db, "personal")
	north := docstore.Author{By: "agent:north", For: "person:ana"}
	if _, err := docs.Create(ctx, "Plan", "one\n", docstore.KindWrite, north); err != nil {
		t.Fatal(err)
	}
	if _, err := docs.Append(ctx, "Plan", "two", north); err != nil {
		t.Fatal(err)
	}
	s := &Server{cfg: Config{Space: "personal", For: "ana"}, db: db, docs: docs, log: slog.New(slog.DiscardHandler)}
	var undo tool
	for _, tl := range s.tools() {
		if tl.def.Name == UndoTool {
			undo = tl
		}
	}
	call := func(ctx context.Context) (string, bool) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = UndoTool, map[string]any{"document": "Plan", "version": 2}
		res, err := undo.handler(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(mcp.TextContent).Text, res.IsError
	}
	for _, c := range []struct {
		who  access.Principal
		says string
	}{
		{access.Principal{Person: "ana", Spaces: []string{"personal"}, ReadOnly: true}, "read-only"},
		{access.Principal{Person: "ana", Spaces: []string{"personal"}, Review: true}, "review mode"},
		{access.Principal{Person: "cyd", Spaces: []string{"design"}}, "does not reach"},
	} {
		pctx := access.WithPrincipal(ctx, c.who)
		if text, isErr := call(pctx); !isErr || !strings.Contains(text, c.says) {
			t.Errorf("%+v undoing: %v %q", c.who, isErr, text)
		}
		// As a client that declared apps (the 2026-07-28 form) lists the tools.
		apps := server.WithRequestProtocolInfo(pctx, &server.RequestProtocolInfo{Modern: true,
			ClientCapabilities: &mcp.ClientCapabilities{Extensions: map[string]any{AppsExtension: map[string]any{}}}})
		if listed := s.forApps(apps, readOnlyFilter(apps, []mcp.Tool{undo.def})); (c.who.ReadOnly || c.who.Review) && len(listed) != 0 {
			t.Errorf("%+v is offered %s", c.who, UndoTool)
		}
	}
	if listed := s.forApps(server.WithRequestProtocolInfo(ctx, &server.RequestProtocolInfo{Modern: true,
		ClientCapabilities: &mcp.ClientCapabilities{Extensions: map[string]any{AppsExtension: map[string]any{}}}}), []mcp.Tool{undo.def}); len(listed) != 1 {
		t.Errorf("an apps client without a token is not offered %s", UndoTool)
	}
	v, err := docstore.ReadIn(ctx, docs, func(r *docstore.Reader) (docstore.Version, error) { _, v, err := r.Read("Plan", 0); return v, err })
	if err != nil {
		t.Fatal(err)
	}
	if v.Number != 2 {
		t.Errorf("refused undos made version %d", v.Number)
	}
}

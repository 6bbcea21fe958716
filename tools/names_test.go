package tools

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/mark3labs/mcp-go/mcp"
)

// Each call reads people's names in the snapshot it reads the rest of what it shows
// (Server.read), so that calls at once on one server share nothing they write (go test -race
// sees it), and a name changed between calls shows in the next.
func TestEachCallReadsTheNamesItShows(t *testing.T) {
	db := kvtest.Open(t)
	ctx := t.Context()
	if err := spaces.SetName(ctx, db, "ana", "Ana"); err != nil {
		t.Fatal(err)
	}
	s := reviewServer(t, db, false)
	call := handlersOf(t, s)
	call(ctx, "write_document", map[string]any{"title": "Other", "text": "# Other\n"})
	call(ctx, "write_document", map[string]any{"title": "Plan", "text": "# Plan\n\nSee [[Other]].\nRecord the trailer.\nBook the studio.\n"})
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"read_document", map[string]any{"document": "Plan"}},
		{"read_document", map[string]any{"document": "Plan", "section": "Plan"}},
		{"read_document", map[string]any{"document": "Plan", "lines": "1-3"}},
		{"list_documents", map[string]any{}},
		{"list_documents", map[string]any{"links_to": "Other"}},
		{"list_documents", map[string]any{"linked_from": "Plan"}},
		{"comment_document", map[string]any{"document": "Plan", "lines": "4", "text": "Which trailer?"}},
	}
	handlers := map[string]func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error){}
	for _, tl := range s.tools() {
		handlers[tl.def.Name] = tl.handler
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				c := calls[(w+i)%len(calls)]
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = c.tool, c.args
				res, err := handlers[c.tool](ctx, req)
				if err != nil || res.IsError {
					t.Errorf("%s %v: %v %+v", c.tool, c.args, err, res)
					return
				}
				if text := res.Content[0].(mcp.TextContent).Text; !strings.Contains(text, "Ana") {
					t.Errorf("%s %v doesn't name Ana:\n%s", c.tool, c.args, text)
				}
			}
		}()
	}
	wg.Wait()
	if err := spaces.SetName(ctx, db, "ana", "Ana María"); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		got, isErr := call(ctx, c.tool, c.args)
		if isErr || !strings.Contains(got, "Ana María") {
			t.Errorf("%s %v after the rename (error %v):\n%s", c.tool, c.args, isErr, got)
		}
	}
	if got, _ := call(ctx, "read_document", map[string]any{"document": "Plan"}); !strings.Contains(got, "Which trailer? · ") && !strings.Contains(got, "· north for Ana María: Which trailer?") {
		t.Errorf("the comments made don't show:\n%s", got)
	}
}

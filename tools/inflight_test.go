package tools_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/inflight"
	"github.com/compass-mcp/compass-mcp/internal/testkit/wait"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/tools"
)

// A call on a large document holds room in the budget for work in flight while it runs:
// with the budget in use, it waits its turn, and is answered busy (a tool result a model
// can act on, not a JSON-RPC error) when it would wait too long; a call on a small
// document, a listing, goes on meanwhile; once the room is given back the large call runs.
func TestLargeCallsWaitForTheBudget(t *testing.T) {
	db := kvtest.Open(t)
	author := docstore.Author{By: "agent:north", For: "person:ana"}
	docs := docstore.New(db, "personal")
	large := strings.Repeat("A line of a large document.\n", 4<<20/28)
	for title, text := range map[string]string{"Large": large, "Small": "two\nlines\n"} {
		if _, err := docs.Create(t.Context(), title, text, docstore.KindWrite, author); err != nil {
			t.Fatal(err)
		}
	}
	budget := inflight.New(16 << 20) // a 4 MiB document: 4 MiB to read lines of, 24 MiB to append to (all 16, alone)
	budget.Wait = 50 * time.Millisecond
	srv, err := tools.New(db, tools.Config{Space: "personal", Agent: "north", For: "ana", Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := initialized(t, srv, mcp.LATEST_LEGACY_PROTOCOL_VERSION, "north")
	call := func(ctx context.Context, tool string, args map[string]any) (string, bool) {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: the call failed, where a tool result was wanted: %v", tool, err)
		}
		return res.Content[0].(mcp.TextContent).Text, res.IsError
	}

	hold, err := budget.Acquire(t.Context(), 14<<20) // another call holds most of it
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []map[string]any{
		{"document": "Large", "lines": "1-2"},
		{"document": "Large", "version": 1, "lines": "1-2"},
	} {
		text, isError := call(t.Context(), "read_document", args)
		if want := "busy: 1 call is waiting; retry in a few seconds"; !isError || text != want {
			t.Errorf("read_document %v with the budget in use: %q (isError %v), want %q", args, text, isError, want)
		}
	}
	if text, isError := call(t.Context(), "append_document", map[string]any{"document": "Large", "text": "More."}); !isError || !strings.HasPrefix(text, "busy: ") {
		t.Errorf("append_document with the budget in use: %q (isError %v), want busy", text, isError)
	}
	if text, isError := call(t.Context(), "read_document", map[string]any{"document": "Small"}); isError || !strings.Contains(text, "lines") {
		t.Errorf("a small document's read with the budget in use: %q (isError %v)", text, isError)
	}
	if text, isError := call(t.Context(), "list_documents", nil); isError || !strings.Contains(text, "Large") {
		t.Errorf("list_documents with the budget in use: %q (isError %v)", text, isError)
	}
	// A canceled wait answers canceled, and holds nothing.
	budget.Wait = time.Minute
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan string, 1)
	go func() {
		text, _ := call(ctx, "read_document", map[string]any{"document": "Large", "lines": "1"})
		done <- text
	}()
	wait.Until(t, 10*time.Second, "the read waiting for its turn", func() bool { return budget.Stats().Waiting > 0 })
	cancel()
	if text := <-done; !strings.Contains(text, "canceled") {
		t.Errorf("a call canceled while it waited answered %q, want that it was canceled", text)
	}
	// Room given back: the large call runs, and gives its room back in turn.
	hold()
	if text, isError := call(t.Context(), "read_document", map[string]any{"document": "Large", "version": 1, "lines": "1-2"}); isError || !strings.Contains(text, "A line of a large document.") {
		t.Errorf("read_document once the budget is free: %q (isError %v)", text, isError)
	}
	if text, isError := call(t.Context(), "append_document", map[string]any{"document": "Large", "text": "More."}); isError || !strings.HasPrefix(text, "Saved ") {
		t.Errorf("append_document once the budget is free: %q (isError %v)", text, isError)
	}
	if s := budget.Stats(); s.Held != 0 || s.Waiting != 0 || s.Refused != 3 || s.Peak != 16<<20 {
		t.Errorf("budget %+v, want nothing held or waiting at the end, 3 refused, a peak of 16 MiB (the append, alone)", s)
	}
}

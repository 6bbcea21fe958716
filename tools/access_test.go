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
)

// Whatever path a call comes by, a tool refuses a principal that may not reach the space,
// and a writing tool refuses a read-only one; nothing is changed. (Over HTTP the gate and
// the tool filter refuse first: see cmd/compass-mcp's team tests.)
func TestToolsAskThePrincipal(t *testing.T) {
	db := kvtest.Open(t)
	ctx := t.Context()
	docs := docstore.New(db, "launch")
	if _, err := docs.Create(ctx, "Plan", "one\n", docstore.KindWrite, docstore.Author{By: "person:ana"}); err != nil {
		t.Fatal(err)
	}
	s := &Server{cfg: Config{Space: "personal", For: "ana"}, db: db, docs: docstore.New(db, "personal"), log: slog.Default()}
	handlers := map[string]func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error){}
	for _, tl := range s.tools() {
		handlers[tl.def.Name] = tl.handler
	}
	call := func(ctx context.Context, tool string, args map[string]any) (string, bool) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool, args
		res, err := handlers[tool](ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(mcp.TextContent).Text, res.IsError
	}
	inLaunch := access.WithSpace(ctx, "launch")
	reader := access.WithPrincipal(inLaunch, access.Principal{Person: "ben", Spaces: []string{"launch"}, ReadOnly: true})
	if text, isErr := call(reader, "read_document", map[string]any{"document": "Plan"}); isErr || !strings.Contains(text, "one") {
		t.Errorf("a read-only principal reading: %v %q", isErr, text)
	}
	if text, isErr := call(reader, "append_document", map[string]any{"document": "Plan", "text": "two"}); !isErr || !strings.Contains(text, "read-only") {
		t.Errorf("a read-only principal appending: %v %q", isErr, text)
	}
	outsider := access.WithPrincipal(inLaunch, access.Principal{Person: "cyd", Spaces: []string{"design"}})
	if text, isErr := call(outsider, "list_documents", nil); !isErr || strings.Contains(text, "Plan") {
		t.Errorf("a principal without launch listing it: %v %q", isErr, text)
	}
	if vs, _ := view(t, docs, planLog); len(vs) != 1 {
		t.Errorf("Plan has %d versions, want 1", len(vs))
	}
	writer := access.WithPrincipal(inLaunch, access.Principal{Person: "ben", Agent: "scribe", Spaces: []string{"launch"}})
	if text, isErr := call(writer, "append_document", map[string]any{"document": "Plan", "text": "two"}); isErr {
		t.Errorf("a principal that may write: %q", text)
	}
	if vs, _ := view(t, docs, planLog); len(vs) != 2 || vs[0].Author.By != "agent:scribe" || vs[0].Author.For != "person:ben" || vs[0].Author.Door != docstore.DoorMCP {
		t.Errorf("after ben's scribe appended: %+v", vs)
	}
}

// planLog is the versions of Plan, newest first.
func planLog(r *docstore.Reader) ([]docstore.Version, error) {
	_, vs, err := r.Log("Plan")
	return vs, err
}

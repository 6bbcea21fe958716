package tools

import (
	"context"
	"reflect"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// tools/list gives the tools in the order a model should meet them, each with the hints a
// client may act on (idempotentHint where the same call again changes nothing more).
func TestToolsListOrderAndHints(t *testing.T) {
	f := newResourceFixture(t, 0)
	res, err := f.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	type hint struct {
		Name                              string
		ReadOnly, Destructive, Idempotent bool
	}
	var got []hint
	for _, tl := range res.Tools {
		a := tl.Annotations
		got = append(got, hint{tl.Name, *a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint})
	}
	want := []hint{
		{"list_documents", true, false, true},
		{"read_document", true, false, true},
		{"write_document", false, true, true},
		{"append_document", false, false, false},
		{"edit_document", false, true, false},
		{"comment_document", false, false, false},
		{"list_conversations", true, false, true},
		{"read_conversation", true, false, true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tools/list gives\n%+v\nwant\n%+v", got, want)
	}
	// The filter that orders the list must not hide a tool from tools/call.
	req := mcp.CallToolRequest{}
	req.Params.Name = "read_conversation"
	req.Params.Arguments = map[string]any{"conversation": "nothing"}
	call, err := f.c.CallTool(context.Background(), req)
	if err != nil || !call.IsError {
		t.Errorf("read_conversation of an unknown id: %v, %+v; want a refusal", err, call)
	}
}

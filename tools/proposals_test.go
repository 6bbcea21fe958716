package tools

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/mark3labs/mcp-go/mcp"
)

// handlersOf calls s's tools as mcp-go would, with ctx.
func handlersOf(t *testing.T, s *Server) func(ctx context.Context, tool string, args map[string]any) (string, bool) {
	handlers := map[string]func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error){}
	for _, tl := range s.tools() {
		handlers[tl.def.Name] = tl.handler
	}
	return func(ctx context.Context, tool string, args map[string]any) (string, bool) {
		t.Helper()
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool, args
		res, err := handlers[tool](ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(mcp.TextContent).Text, res.IsError
	}
}

func reviewServer(t *testing.T, db kv.DB, review bool) *Server {
	return &Server{cfg: Config{Space: "personal", Agent: "north", For: "ana", Review: review}, db: db, docs: docstore.New(db, "personal"), log: slog.Default()}
}

// In review mode the writing tools propose, the text stays, and read_document lists what
// waits; a proposal reads as a diff; the agent's next read says what the person decided.
// A token can ask for review mode on a server that isn't in it.
func TestReviewModeThroughTheTools(t *testing.T) {
	db := kvtest.Open(t)
	if err := spaces.SetName(db, "ana", "Ana"); err != nil {
		t.Fatal(err)
	}
	call := handlersOf(t, reviewServer(t, db, true))
	ctx := context.Background()
	made, isErr := call(ctx, "write_document", map[string]any{"title": "Plan", "text": "# Plan\n\nRecord the trailer.\n"})
	if isErr || !strings.HasPrefix(made, "Saved [Plan](") {
		t.Fatalf("a new document in review mode: %q", made)
	}
	got, isErr := call(ctx, "edit_document", map[string]any{"document": "Plan", "old": "Record the trailer.", "new": "Record the trailer on Monday."})
	if isErr || !strings.HasPrefix(got, "Proposed [Plan](") || !strings.HasSuffix(got, " change 1: +1 \u22121 lines, waiting for Ana's review.") {
		t.Fatalf("edit in review mode: %q", got)
	}
	got, _ = call(ctx, "append_document", map[string]any{"document": "Plan", "text": "- book the studio"})
	if !strings.Contains(got, "change 2: +2 \u22120 lines") {
		t.Errorf("append in review mode: %q", got)
	}
	if got, isErr := call(ctx, "edit_document", map[string]any{"document": "Plan", "old": "podcast", "new": "x"}); !isErr || !strings.Contains(got, "isn't in") {
		t.Errorf("an edit that misses, in review mode: %v %q", isErr, got)
	}
	read, _ := call(ctx, "read_document", map[string]any{"document": "Plan"})
	for _, want := range []string{"version 1 of 1", "\n\nRecord the trailer.\n\nOpen proposals (2):\n- change 2 by north for Ana · +2 \u22120 lines · just now\n- change 1 by north for Ana · +1 \u22121 lines · just now\nread_document with proposal: N shows one as a diff."} {
		if !strings.Contains(read, want) {
			t.Errorf("read_document lacks %q:\n%s", want, read)
		}
	}
	one, _ := call(ctx, "read_document", map[string]any{"document": "Plan", "proposal": 1})
	for _, want := range []string{"· change 1 by north for Ana ", "+1 \u22121 lines against version 1 · open, waiting for Ana's review", "-Record the trailer.\n+Record the trailer on Monday.", "--- Plan v1\n+++ Plan change 1"} {
		if !strings.Contains(one, want) {
			t.Errorf("proposal 1 lacks %q:\n%s", want, one)
		}
	}
	if got, isErr := call(ctx, "read_document", map[string]any{"document": "Plan", "proposal": 9}); !isErr || !strings.Contains(got, "has proposals 1 to 2: there's no change 9.") {
		t.Errorf("proposal 9: %v %q", isErr, got)
	}
	if got, isErr := call(ctx, "read_document", map[string]any{"document": "Plan", "proposal": 1, "version": 1}); !isErr || !strings.Contains(got, "proposal alone") {
		t.Errorf("proposal with version: %v %q", isErr, got)
	}
	docs := docstore.New(db, "personal")
	if _, err := docs.Decline("Plan", 1, docstore.Author{By: "person:ana"}, "Monday is taken."); err != nil {
		t.Fatal(err)
	}
	if _, _, err := docs.Accept("Plan", 2, docstore.Author{By: "person:ana"}, nil, linediff.Clash); err != nil {
		t.Fatal(err)
	}
	read, _ = call(ctx, "read_document", map[string]any{"document": "Plan"})
	for _, want := range []string{"version 2 of 2 · saved by north for Ana, accepted by Ana", "- book the studio", "What became of your proposals:\n- change 2 was accepted by Ana ", ", as version 2.\n- change 1 was declined by Ana ", ": “Monday is taken.”"} {
		if !strings.Contains(read, want) {
			t.Errorf("read_document after the decisions lacks %q:\n%s", want, read)
		}
	}
	if strings.Contains(read, "Open proposals") {
		t.Errorf("nothing is open, yet:\n%s", read)
	}
	declined, _ := call(ctx, "read_document", map[string]any{"document": "Plan", "proposal": 1})
	if !strings.Contains(declined, "· declined by Ana ") || !strings.Contains(declined, "“Monday is taken.”") {
		t.Errorf("a declined proposal reads:\n%s", declined)
	}

	// Not in review mode, a token asks for it; another doesn't.
	plain := handlersOf(t, reviewServer(t, db, false))
	reviewed := access.WithPrincipal(ctx, access.Principal{Person: "ana", Agent: "south", Spaces: []string{"personal"}, Review: true})
	if got, _ := plain(reviewed, "append_document", map[string]any{"document": "Plan", "text": "- south's"}); !strings.HasPrefix(got, "Proposed ") {
		t.Errorf("a review token's append: %q", got)
	}
	free := access.WithPrincipal(ctx, access.Principal{Person: "ana", Agent: "south", Spaces: []string{"personal"}})
	if got, _ := plain(free, "append_document", map[string]any{"document": "Plan", "text": "- south's"}); !strings.HasPrefix(got, "Saved ") {
		t.Errorf("a token's append without review: %q", got)
	}
	readOnly := access.WithPrincipal(ctx, access.Principal{Person: "ana", Spaces: []string{"personal"}, ReadOnly: true, Review: true})
	if got, isErr := plain(readOnly, "append_document", map[string]any{"document": "Plan", "text": "x"}); !isErr || !strings.Contains(got, "read-only") {
		t.Errorf("a read-only review token: %v %q", isErr, got)
	}
	if d, _ := docs.Find("Plan"); d.Review.Proposals != 3 {
		t.Errorf("proposals made: %d, want 3", d.Review.Proposals)
	}
}

package tools

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
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

// view gives what fn reads in one snapshot of s (docstore.Store.View), read afresh on each
// run of fn, as View may run it more than once.
func view[T any](t testing.TB, s *docstore.Store, fn func(*docstore.Reader) (T, error)) (T, error) {
	return docstore.ReadIn(t.Context(), s, fn)
}

func reviewServer(t *testing.T, db kv.DB, review bool) *Server {
	return &Server{cfg: Config{Space: "personal", Agent: "north", For: "ana", Review: review}, db: db, docs: docstore.New(db, "personal"), threads: threads.New(db, "personal"), log: slog.Default()}
}

// In review mode the writing tools propose, the text stays, and read_document lists what
// waits; a proposal reads as a diff; the agent's next read says what the person decided.
// A token can ask for review mode on a server that isn't in it.
func TestReviewModeThroughTheTools(t *testing.T) {
	db := kvtest.Open(t)
	ctx := t.Context()
	if err := spaces.SetName(ctx, db, "ana", "Ana"); err != nil {
		t.Fatal(err)
	}
	call := handlersOf(t, reviewServer(t, db, true))
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
			t.Errorf("change 1 lacks %q:\n%s", want, one)
		}
	}
	if got, isErr := call(ctx, "read_document", map[string]any{"document": "Plan", "proposal": 9}); !isErr || !strings.Contains(got, "has proposals 1 to 2: there's no change 9.") {
		t.Errorf("change 9: %v %q", isErr, got)
	}
	if got, isErr := call(ctx, "read_document", map[string]any{"document": "Plan", "proposal": 1, "version": 1}); !isErr || !strings.Contains(got, "proposal alone") {
		t.Errorf("proposal with version: %v %q", isErr, got)
	}
	docs := docstore.New(db, "personal")
	if _, err := docs.Decline(ctx, "Plan", 1, docstore.Author{By: "person:ana"}, "Monday is taken."); err != nil {
		t.Fatal(err)
	}
	if _, _, err := docs.Accept(ctx, "Plan", 2, docstore.Author{By: "person:ana"}, nil, linediff.Clash); err != nil {
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
	if d, _ := view(t, docs, func(r *docstore.Reader) (docstore.Document, error) { return r.Find("Plan") }); d.Review.Proposals != 3 {
		t.Errorf("proposals made: %d, want 3", d.Review.Proposals)
	}
}

// comment_document comments on lines, replies and resolves; read_document lists the open
// comments after the text at their lines as of the version read, replies under each, and
// the outdated with what their lines said; the refusals say what to do.
func TestCommentsThroughTheTools(t *testing.T) {
	db := kvtest.Open(t)
	ctx := t.Context()
	if err := spaces.SetName(ctx, db, "ana", "Ana"); err != nil {
		t.Fatal(err)
	}
	call := handlersOf(t, reviewServer(t, db, false))
	call(ctx, "write_document", map[string]any{"title": "Plan", "text": "# Plan\n\nRecord the trailer.\nBook the studio.\n"})
	docs := docstore.New(db, "personal")
	ana := docstore.Author{By: "person:ana"}
	if _, err := docs.Comment(ctx, "Plan", docstore.NewComment{Lines: docstore.LineRange{From: 3, To: 4}, Text: "Which day?", Author: ana}); err != nil {
		t.Fatal(err)
	}
	got, isErr := call(ctx, "comment_document", map[string]any{"document": "Plan", "reply_to": 1, "text": "Monday: the studio is free then."})
	if isErr || !strings.HasPrefix(got, "Replied to comment 1 of [Plan](") || !strings.HasSuffix(got, " (as comment 2).") {
		t.Fatalf("reply: %v %q", isErr, got)
	}
	got, _ = call(ctx, "comment_document", map[string]any{"document": "Plan", "lines": "4", "text": "Big or small studio?"})
	if !strings.HasPrefix(got, "Comment 3 on line 4 of [Plan](") || !strings.HasSuffix(got, ", for Ana to answer; the answers show in read_document.") {
		t.Errorf("a comment on line 4: %q", got)
	}
	call(ctx, "edit_document", map[string]any{"document": "Plan", "old": "# Plan\n", "new": "# Plan\n\nFor May.\n"})
	read, _ := call(ctx, "read_document", map[string]any{"document": "Plan"})
	want := "Book the studio.\n\nOpen comments (2):\n- comment 1 on lines 5-6 · Ana: Which day?\n  - comment 2 · north for Ana: Monday: the studio is free then.\n- comment 3 on line 6 · north for Ana: Big or small studio?\ncomment_document replies to one (reply_to: N), or resolves one of yours (resolve: N)."
	if !strings.HasSuffix(read, want) {
		t.Errorf("read_document's comments:\n%s\nwant it to end:\n%s", read, want)
	}
	old, _ := call(ctx, "read_document", map[string]any{"document": "Plan", "version": 1})
	if !strings.Contains(old, "- comment 1 on lines 3-4 · Ana: Which day?") {
		t.Errorf("read_document of version 1 gives the lines as of version 1:\n%s", old)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"document": "Plan", "lines": "2", "reply_to": 1, "text": "x"}, "takes one of lines"},
		{map[string]any{"document": "Plan", "lines": "2"}, "needs text for a comment on lines"},
		{map[string]any{"document": "Plan", "lines": "x-", "text": "x"}, `comment_document's lines "x" is not a line number`},
		{map[string]any{"document": "Plan", "lines": "40", "text": "x"}, "has 6 lines: there's no line 40."},
		{map[string]any{"document": "Plan", "reply_to": 9, "text": "x"}, "has no comment 9: read_document lists the open ones."},
		{map[string]any{"document": "Plan", "reply_to": 1, "text": strings.Repeat("x", docstore.MaxComment+1)}, "That comment won't do: a comment is at most 4000 bytes"},
		{map[string]any{"document": "Nothing", "resolve": 1}, `No document "Nothing"`},
	} {
		if got, isErr := call(ctx, "comment_document", tc.args); !isErr || !strings.Contains(got, tc.want) {
			t.Errorf("comment_document %v: %v %q, want %q", tc.args, isErr, got, tc.want)
		}
	}
	// Another agent may not resolve what north asked Ana; north may, or Ana.
	south := access.WithPrincipal(ctx, access.Principal{Person: "ana", Agent: "south", Spaces: []string{"personal"}})
	if got, isErr := call(south, "comment_document", map[string]any{"document": "Plan", "resolve": 3}); !isErr || !strings.Contains(got, "Comment 3 of [Plan](") || !strings.Contains(got, "isn't yours to resolve") {
		t.Errorf("south resolving north's question: %v %q", isErr, got)
	}
	if got, _ := call(ctx, "comment_document", map[string]any{"document": "Plan", "resolve": 3, "text": "The big one, Ana said."}); !strings.HasPrefix(got, "Replied to comment 3 of [Plan](") || !strings.HasSuffix(got, " and resolved it.") {
		t.Errorf("north resolving its own: %q", got)
	}
	if got, isErr := call(ctx, "comment_document", map[string]any{"document": "Plan", "resolve": 3}); !isErr || !strings.Contains(got, "comment 3 was resolved already") {
		t.Errorf("resolving twice: %v %q", isErr, got)
	}
	// Its lines changed: outdated, with what they said.
	call(ctx, "write_document", map[string]any{"document": "Plan", "text": "# Plan\n\nFor May.\n\nAll new.\n"})
	read, _ = call(ctx, "read_document", map[string]any{"document": "Plan"})
	if !strings.Contains(read, "- comment 1 outdated (its lines were changed in version 3; they said “Record the trailer. Book the studio.”) · Ana: Which day?") {
		t.Errorf("an outdated comment:\n%s", read)
	}
	readOnly := access.WithPrincipal(ctx, access.Principal{Person: "ana", Spaces: []string{"personal"}, ReadOnly: true})
	if got, isErr := call(readOnly, "comment_document", map[string]any{"document": "Plan", "reply_to": 1, "text": "x"}); !isErr || !strings.Contains(got, "read-only") {
		t.Errorf("a read-only token commenting: %v %q", isErr, got)
	}
}

// Hostile sizes: 10,000 open proposals on one document, and a comment on 8 MiB of lines,
// through the tools: read_document's answer stays short, each call cheap.
func TestReviewIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 10,000 proposals")
	}
	db := kvtest.Open(t)
	ctx := t.Context()
	if err := spaces.SetName(ctx, db, "ana", "Ana"); err != nil {
		t.Fatal(err)
	}
	call := handlersOf(t, reviewServer(t, db, true))
	call(ctx, "write_document", map[string]any{"title": "Plan", "text": "# Plan\n"})
	docs := docstore.New(db, "personal").Proposing()
	north := docstore.Author{By: "agent:north", For: "person:ana"}
	var wg sync.WaitGroup
	for w := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if _, err := docs.Append(ctx, "Plan", fmt.Sprintf("- item %d.%d", w, i), north); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	start := time.Now()
	read, _ := call(ctx, "read_document", map[string]any{"document": "Plan"})
	took := time.Since(start)
	if !strings.Contains(read, "Open proposals (5 of 10000, newest first):\n- change 10000 by north for Ana") || !strings.Contains(read, "9995 more: the person's page lists them all.") || len(read) > 1000 {
		t.Errorf("read_document with 10,000 open proposals (%d bytes):\n%s", len(read), read)
	}
	one, _ := call(ctx, "read_document", map[string]any{"document": "Plan", "proposal": 5000})
	if !strings.Contains(one, "change 5000 by north for Ana") {
		t.Errorf("change 5000:\n%s", one)
	}
	t.Logf("read_document with 10,000 open proposals: %d bytes in %s", len(read), took)

	huge := strings.Repeat("a line of text, forty bytes in all, ok.\n", docstore.MaxText/40)
	call(ctx, "write_document", map[string]any{"title": "Huge", "text": huge})
	start = time.Now()
	got, isErr := call(ctx, "comment_document", map[string]any{"document": "Huge", "lines": "1-", "text": "All of it?"})
	commented := time.Since(start)
	if isErr || !strings.HasPrefix(got, "Comment 1 on lines 1-209715 of [Huge](") {
		t.Fatalf("a comment on 8 MiB of lines: %q", got)
	}
	start = time.Now()
	read, _ = call(ctx, "read_document", map[string]any{"document": "Huge"})
	readTook := time.Since(start)
	if !strings.HasSuffix(read, "- comment 1 on lines 1-209715 · north for Ana: All of it?\ncomment_document replies to one (reply_to: N), or resolves one of yours (resolve: N).") {
		t.Errorf("the read of 8 MiB with its comment ends:\n%s", read[max(0, len(read)-300):])
	}
	t.Logf("8 MiB of lines: comment_document on all of them %s, read_document %s", commented, readTook)
}

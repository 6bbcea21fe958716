package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/mark3labs/mcp-go/mcp"
)

// No tool decides for the person (issue 48): whatever an agent calls, in any mode (the
// server's review mode, a reviewed or read-only token, a client of MCP Apps that is
// offered the app-only undo_change, and none of these), a proposal stays open and a
// person's comment unresolved; the person decides on the page or the command line.
//
// Every tool the session lists is called with its arguments filled in for the document,
// and again with each argument that could name a decision (a proposal's or a comment's
// number, accept, decline, resolve, status, a version) set to each value that would name
// one; then the store is read: the proposals are still open and the person's comments
// unresolved. comment_document's resolve of a person's comment is refused, saying why.
func TestNoToolDecidesForThePerson(t *testing.T) {
	apps := `"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`
	for _, mode := range []struct {
		name      string
		review    bool
		principal *access.Principal
	}{
		{"as configured", false, nil},
		{"review mode", true, nil},
		{"a reviewed token", false, &access.Principal{Person: "ana", Agent: "north", Spaces: []string{"personal"}, Review: true}},
		{"a read-only token", false, &access.Principal{Person: "ana", Agent: "north", Spaces: []string{"personal"}, ReadOnly: true}},
		{"a token", false, &access.Principal{Person: "ana", Agent: "north", Spaces: []string{"personal"}}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			db := kvtest.Open(t)
			ctx := t.Context()
			docs := docstore.New(db, "personal")
			ana := docstore.Author{By: "person:ana"}
			north := docstore.Author{By: "agent:north", For: "person:ana"}
			made, err := docs.Create(ctx, "Plan", "# Plan\n\nRecord the trailer.\nBook the studio.\nTell Ben.\n", docstore.KindSave, ana)
			if err != nil {
				t.Fatal(err)
			}
			id := made.Document.ID
			// Two open proposals of north's, and two comments of Ana's: one asking any agent,
			// one asking north.
			for _, c := range [][2]string{{"Record the trailer.", "Record the trailer on Monday."}, {"Tell Ben.", "Tell Ben and Cy."}} {
				if _, err := docs.Proposing().Edit(ctx, id, c[0], c[1], north); err != nil {
					t.Fatal(err)
				}
			}
			var comments []int
			for _, c := range []docstore.NewComment{
				{Lines: docstore.LineRange{From: 3, To: 3}, Text: "Which day?", Author: ana},
				{Lines: docstore.LineRange{From: 4, To: 4}, Text: "North, which studio?", Author: ana, Asks: "agent:north"},
			} {
				cm, err := docs.Comment(ctx, id, c)
				if err != nil {
					t.Fatal(err)
				}
				comments = append(comments, cm.Comment.Number)
			}
			srv, err := New(db, Config{Space: "personal", For: "ana", Agent: "north", Review: mode.review})
			if err != nil {
				t.Fatal(err)
			}
			cctx := context.Background()
			if mode.principal != nil {
				cctx = access.WithPrincipal(cctx, *mode.principal)
			}
			n := 0
			send := func(method, params string) []byte {
				n++
				meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"north","version":"1"},"io.modelcontextprotocol/clientCapabilities":{` + apps + `}}`
				if params != "" {
					meta += ","
				}
				raw, _ := json.Marshal(srv.HandleMessage(cctx, json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s%s}}`, n, method, meta, params))))
				return raw
			}
			var list struct{ Result struct{ Tools []mcp.Tool } }
			if err := json.Unmarshal(send("tools/list", ""), &list); err != nil || len(list.Result.Tools) == 0 {
				t.Fatalf("tools/list: %v", err)
			}
			offered := map[string]bool{}
			calls := 0
			for _, tl := range list.Result.Tools {
				offered[tl.Name] = true
				base := map[string]any{}
				for name := range tl.InputSchema.Properties {
					if v, ok := plausible[name]; ok {
						base[name] = v
					}
				}
				base["document"] = id
				tries := []map[string]any{base}
				for _, name := range deciding {
					for _, v := range decidingValues {
						try := map[string]any{}
						for k, bv := range base {
							try[k] = bv
						}
						try[name] = v
						tries = append(tries, try)
					}
				}
				for _, args := range tries {
					a, _ := json.Marshal(args)
					send("tools/call", fmt.Sprintf(`"name":%q,"arguments":%s`, tl.Name, a))
					calls++
				}
			}
			if !offered["undo_change"] && !mode.review && (mode.principal == nil || !mode.principal.Review && !mode.principal.ReadOnly) {
				t.Errorf("undo_change was not offered to a client of MCP Apps: %v", offered)
			}
			for _, c := range comments {
				raw := send("tools/call", fmt.Sprintf(`"name":"comment_document","arguments":{"document":%q,"resolve":%d}`, id, c))
				if offered["comment_document"] && !strings.Contains(string(raw), "isn't yours to resolve") {
					t.Errorf("resolving Ana's comment %d: %s", c, raw)
				}
			}
			// The person's decisions are where they were.
			r := func(fn func(*docstore.Reader) error) {
				if err := docs.View(ctx, fn); err != nil {
					t.Fatal(err)
				}
			}
			r(func(rd *docstore.Reader) error {
				_, ps, err := rd.Proposals(id, 0, 10)
				if err != nil {
					return err
				}
				// The calls went through to what they do: a proposal more for each write in review
				// mode, a version more otherwise; nothing with a read-only token.
				d, _, err := rd.Read(id, 0)
				if err != nil {
					return err
				}
				reviewed := mode.review || mode.principal != nil && mode.principal.Review
				readOnly := mode.principal != nil && mode.principal.ReadOnly
				switch {
				case readOnly && (len(ps) != 2 || d.Version != 1):
					t.Errorf("a read-only session: %d proposals, version %d; want 2 and 1", len(ps), d.Version)
				case !readOnly && reviewed && (len(ps) <= 2 || d.Version != 1):
					t.Errorf("a reviewed session: %d proposals, version %d; want more than 2, and 1", len(ps), d.Version)
				case !readOnly && !reviewed && d.Version == 1:
					t.Errorf("no call wrote: the calls didn't get through")
				}
				for _, p := range ps {
					if p.Status != docstore.StatusOpen || p.Decided != nil {
						t.Errorf("after %d calls, proposal %d is %s (%+v): a tool decided it", calls, p.Number, p.Status, p.Decided)
					}
				}
				for _, c := range comments {
					_, th, err := rd.CommentThread(id, c)
					if err != nil {
						return err
					}
					if th.Resolved != nil {
						t.Errorf("after %d calls, Ana's comment %d was resolved by %s", calls, c, th.Resolved.By)
					}
				}
				return nil
			})
			t.Logf("%d calls of %d tools", calls, len(offered))
		})
	}
}

// plausible fills in a tool's arguments for the test's document, so that each call gets
// past its checks to what it would do.
var plausible = map[string]any{
	"title": "Plan", "text": "# Plan\n\nAll new.\n", "old": "Book the studio.", "new": "Book the big studio.",
	"lines": "3", "version": 1, "since": 1,
}

// deciding are argument names that could name a decision, whether a tool has them or not
// (a tool refuses one it hasn't); decidingValues what they could be set to.
var (
	deciding       = []string{"proposal", "change", "accept", "decline", "resolve", "reply_to", "status", "decision", "choose", "version"}
	decidingValues = []any{1, 2, 3, "1", true, "accept", "accepted", "decline", "declined", "mine", "theirs"}
)

package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/compass-mcp/compass-mcp/web"
)

// The three holes of issue 45, each as a hostile client would try it against the real
// handler of serve --http on 127.0.0.1 (Server): each request is refused (403) and the
// store is as it was.

// served starts a Server on db (the space personal, for ana) with token (--token, "" for
// none) and review (--review), and returns its base URL.
func served(t *testing.T, db kv.DB, token string, review bool) string {
	t.Helper()
	srv, err := tools.New(db, tools.Config{Space: "personal", For: "ana", Review: review})
	if err != nil {
		t.Fatal(err)
	}
	site, err := web.New(t.Context(), db, web.Config{Space: "personal", Me: "ana", Review: review, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return serveAll(t, Server{MCP: srv, DB: db, Space: "personal", For: "ana", Token: token, Review: review,
		Idle: time.Hour, Page: site, PageAt: "/", Links: web.NewLinks("", db, "")})
}

// storeState is what a hostile request must not change: every document of the space
// personal with its version, title, deletion and proposals, and every conversation's
// message count.
func storeState(t *testing.T, db kv.DB) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	docs, err := docstore.ReadIn(ctx, docstore.New(db, "personal"), (*docstore.Reader).Documents)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		var review docstore.Review
		if d.Review != nil {
			review = *d.Review
		}
		b.WriteString(fmt.Sprintf("%s %s v%d p%d open%d decided%d c%d u%d", d.ID, d.Title, d.Version, review.Proposals, review.Open, review.Decided, review.Comments, review.Unresolved))
		if d.Deleted != nil {
			b.WriteString(" deleted")
		}
		b.WriteString("\n")
	}
	err = threads.New(db, "personal").View(ctx, func(r *threads.Reader) error {
		convs, err := r.Recent(1000, "")
		for _, c := range convs {
			b.WriteString(c.ID + " m" + strconv.Itoa(c.Count) + "\n")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// seed makes the document "Plan" (text "a\n") by ana in personal and returns its id.
func seed(t *testing.T, db kv.DB) string {
	t.Helper()
	saved, err := docstore.New(db, "personal").Create(context.Background(), "Plan", "a\n", docstore.KindSave, docstore.Author{By: spaces.Person("ana").String()})
	if err != nil {
		t.Fatal(err)
	}
	return saved.Document.ID
}

// Hole 1: on a loopback server with no token, a page that rebinds its name to 127.0.0.1
// and adds any Authorization header (same-origin fetch: no preflight) read and wrote as
// the person through the sync's and the messages' endpoints.
func TestRebindingWithAnyAuthorizationIsRefused(t *testing.T) {
	db := kvtest.Open(t)
	id := seed(t, db)
	base := served(t, db, "", false)
	port := base[strings.LastIndex(base, ":")+1:]
	evil := "evil.example:" + port
	before := storeState(t, db)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/spaces/personal/sync/documents", ""},
		{"GET", "/spaces/personal/sync/version?id=" + id + "&n=0", ""},
		{"POST", "/spaces/personal/sync/save", `{"id":"` + id + `","base":1,"text":"owned\n","prefer":1}`},
		{"POST", "/spaces/personal/sync/create", `{"title":"Planted","text":"x\n"}`},
		{"POST", "/spaces/personal/sync/rename", `{"id":"` + id + `","title":"Renamed"}`},
		{"POST", "/spaces/personal/sync/delete", `{"id":"` + id + `"}`},
		{"POST", "/spaces/personal/conversations/x/messages", `{"from":"person:ana","text":"planted"}`},
	} {
		code, _, body := send(t, c.method, base+c.path, "", c.body, "Host", evil, "Origin", "http://"+evil, "Authorization", "Bearer x")
		if code != http.StatusForbidden {
			t.Errorf("%s %s from a rebound page with Authorization: Bearer x: %d %s; want 403", c.method, c.path, code, clip(body))
		}
	}
	if after := storeState(t, db); after != before {
		t.Errorf("the store changed:\nbefore:\n%safter:\n%s", before, after)
	}
}

// Hole 2: on serve --http --review, the sync saved as the person, with the static token
// or (tokenless) with nothing at all, and said writable:true.
func TestReviewHoldsAtTheSync(t *testing.T) {
	for _, token := range []string{"s3cret-static-token", ""} {
		t.Run("token="+token, func(t *testing.T) {
			db := kvtest.Open(t)
			id := seed(t, db)
			base := served(t, db, token, true)
			var auth []string
			if token != "" {
				auth = []string{"Authorization", "Bearer " + token}
			}
			code, _, body := send(t, "GET", base+"/spaces/personal/sync/documents", "", "", auth...)
			var l struct{ Writable bool }
			if err := json.Unmarshal([]byte(body), &l); code != http.StatusOK || err != nil || l.Writable {
				t.Errorf("the listing under review: %d %s; want 200 with writable:false", code, clip(body))
			}
			before := storeState(t, db)
			for _, c := range []struct{ op, body string }{
				{"save", `{"id":"` + id + `","base":1,"text":"direct\n","prefer":1}`},
				{"create", `{"title":"Direct","text":"x\n"}`},
				{"rename", `{"id":"` + id + `","title":"Renamed"}`},
				{"delete", `{"id":"` + id + `"}`},
			} {
				code, _, body := send(t, "POST", base+"/spaces/personal/sync/"+c.op, "", c.body, auth...)
				if code != http.StatusForbidden || !strings.Contains(body, "review") {
					t.Errorf("sync %s under --review: %d %s; want 403 saying the space is under review", c.op, code, clip(body))
				}
			}
			if after := storeState(t, db); after != before {
				t.Errorf("the store changed:\nbefore:\n%safter:\n%s", before, after)
			}
		})
	}
}

// Hole 3: a writing token made a proposal "by" another member's agent, of any old version,
// through sync/propose. The op is gone (issue 46: the sync keeps a clash's other side in the
// save's own commit, SaveKeeping): the same requests make nothing.
func TestSyncProposesOnlyTheOtherSideOfItsOwnSave(t *testing.T) {
	ctx := context.Background()
	db := kvtest.Open(t)
	a := access.New(db).WithOwner("personal", "ana")
	for _, p := range []string{"ana", "ben"} {
		if _, err := a.AddMember(ctx, "personal", p); err != nil {
			t.Fatal(err)
		}
	}
	anaToken, _, err := a.AddToken(ctx, access.NewToken{Person: "ana", Agent: "north"})
	if err != nil {
		t.Fatal(err)
	}
	s := docstore.New(db, "personal")
	benAgent := docstore.Author{By: spaces.Agent("scout").String(), For: spaces.Person("ben").String()}
	north := docstore.Author{By: spaces.Agent("north").String(), For: spaces.Person("ana").String()}
	made, err := s.Create(ctx, "Plan", "one\ntwo\nthree\n", docstore.KindWrite, benAgent) // v1 by ben's agent
	if err != nil {
		t.Fatal(err)
	}
	id := made.Document.ID
	for _, step := range []struct {
		by   docstore.Author
		text string
	}{
		{north, "one\ntwo\nthree\nfour\n"},       // v2 by ana's agent
		{benAgent, "ONE\ntwo\nthree\nfour\n"},    // v3 by ben's agent
		{north, "ONE\ntwo\nthree\nfour\nfive\n"}, // v4 by ana's agent
	} {
		if _, err := s.Write(ctx, id, "", step.text, 0, step.by); err != nil {
			t.Fatal(err)
		}
	}
	base := served(t, db, "", false)
	before := storeState(t, db)
	for _, c := range []string{
		`{"clash":{"id":"` + id + `","base":1,"join":true}}`, // v1 whole, reverting v3, "by" scout
		`{"clash":{"id":"` + id + `","base":2,"join":true}}`,
		`{"clash":{"id":"` + id + `","base":3,"join":true}}`,
	} {
		code, _, body := send(t, "POST", base+"/spaces/personal/sync/propose", "", c, "Authorization", "Bearer "+anaToken)
		if code != http.StatusNotFound {
			t.Errorf("propose %s: %d %s; want 404 (no such op)", c, code, clip(body))
		}
	}
	if after := storeState(t, db); after != before {
		t.Errorf("a proposal was made:\nbefore:\n%safter:\n%s", before, after)
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

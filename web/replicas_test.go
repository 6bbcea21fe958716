package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// replica is one server's page on a PostgreSQL store that another server shares.
type replica struct {
	db     kv.DB
	site   *Site
	cookie *http.Cookie
}

// replicas opens two servers' pages on one fresh PostgreSQL schema, each with its own
// pool and its own LISTEN connection, as two compass-mcp processes would have, and makes
// the document "Launch plan" (version 1). Without COMPASS_TEST_DATA, tb is skipped.
func replicas(tb testing.TB) (a, b replica, id string) {
	tb.Helper()
	ctx := tb.Context()
	u := kvtest.URL(tb)
	open := func() replica {
		db, err := pg.Open(context.Background(), u)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { db.Close() })
		// No poll to speak of: only the database's signals can wake the page.
		site, err := New(ctx, db, Config{Space: "personal", Me: "ana", Poll: time.Hour})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(site.Close)
		return replica{db: db, site: site}
	}
	a = open()
	if err := spaces.SetName(ctx, a.db, "ana", "Ana"); err != nil {
		tb.Fatal(err)
	}
	saved, err := docstore.New(a.db, "personal").Create(ctx, "Launch plan", "one\n", docstore.KindWrite, agent)
	if err != nil {
		tb.Fatal(err)
	}
	b = open()
	for _, r := range []*replica{&a, &b} {
		code, err := access.New(r.db).NewSignInCode(ctx, "ana", "personal", "/")
		if err != nil {
			tb.Fatal(err)
		}
		w := httptest.NewRecorder()
		r.site.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/signin?code="+code, nil))
		if cookies := w.Result().Cookies(); len(cookies) == 1 {
			r.cookie = cookies[0]
		} else {
			tb.Fatalf("signing in: %d %s", w.Code, w.Body)
		}
	}
	return a, b, saved.Document.ID
}

// A page open on one server hears of a save made through the other server's page, told by
// the database (LISTEN/NOTIFY), with no data file to watch; and of an agent's save there.
func TestLiveAcrossReplicas(t *testing.T) {
	ctx := t.Context()
	a, b, id := replicas(t)
	srvB := httptest.NewServer(b.site)
	defer srvB.Close()
	docs := docstore.New(b.db, "personal")
	text := "one\n"
	took := follow(t, a.site, a.cookie, id, 1, func(i int) bool { return i < 40 }, func(i int) {
		if i%2 == 1 {
			if _, err := docs.Append(ctx, id, fmt.Sprintf("agent %d", i), agent); err != nil {
				t.Fatal(err)
			}
			text += fmt.Sprintf("\nagent %d\n", i)
			return
		}
		text += fmt.Sprintf("person %d\n", i)
		form := url.Values{"base": {fmt.Sprint(i + 1)}, "text": {text}, "form_token": {formToken(b.cookie.Value)}}
		req, _ := http.NewRequest(http.MethodPost, srvB.URL+"/document/"+id+"/edit", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", srvB.URL)
		req.AddCookie(b.cookie)
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("saving version %d through the other server's page: %d", i+2, resp.StatusCode)
		}
	})
	mean, worst := meanMax(took)
	t.Logf("%d saves on one server, each seen by a page on the other: %.1f ms mean, %.1f ms slowest", len(took), mean, worst)

	// A browser signed in on one server is signed in on the other: the sign-in is the
	// store's, and so is the cookie's name.
	req, _ := http.NewRequest(http.MethodGet, srvB.URL+"/document/"+id, nil)
	req.AddCookie(a.cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if page := body(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(page, "agent 39") {
		t.Errorf("the other server's page with this one's cookie: %d", resp.StatusCode)
	}
}

// BenchmarkLiveUpdateAcrossReplicas is BenchmarkLiveUpdate with the save made by another
// server on the same PostgreSQL database: ms/update is the mean time from the save's
// return to the event on the page open on the first server, max-ms the slowest.
// COMPASS_TEST_DATA=postgres://... go test -run '^$' -bench AcrossReplicas ./web
func BenchmarkLiveUpdateAcrossReplicas(b *testing.B) {
	ctx := b.Context()
	a, other, id := replicas(b)
	docs := docstore.New(other.db, "personal")
	reportLive(b, follow(b, a.site, a.cookie, id, 1, func(int) bool { return b.Loop() }, func(i int) {
		if _, err := docs.Append(ctx, id, fmt.Sprintf("line %d", i), agent); err != nil {
			b.Fatal(err)
		}
	}))
}

// kv/pg's DB is a store that tells of its commits, as the hub asks.
var _ Changes = (*pg.DB)(nil)

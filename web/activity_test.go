package web

import (
	"bufio"
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// /activity shows what happened in every space the person sees, newest first, a line a
// session with its events under it, each leading to its version, proposal or comment;
// every page's header links to it; its filters keep what they name; bad ones are refused.
func TestActivityPage(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t) // one person's store: every space is Ana's
	north := docstore.Author{By: "agent:north", For: "person:ana", Door: docstore.DoorMCP, Client: "Claude Code", Session: "m1"}
	launch := docstore.New(f.db, "launch")
	made, err := launch.Create(ctx, "Launch <plan>", "one\ntwo\n", docstore.KindWrite, north)
	if err != nil {
		t.Fatal(err)
	}
	id := made.Document.ID
	if _, err := launch.Append(ctx, id, "three", north); err != nil {
		t.Fatal(err)
	}
	if _, err := launch.Proposing().Edit(ctx, id, "two", "TWO", north); err != nil {
		t.Fatal(err)
	}
	if _, err := f.docs.Create(ctx, "Diary", "today\n", docstore.KindSave, docstore.Author{By: "person:ana"}); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	f.signIn(c, "/")
	page := body(t, f.get(c, "/activity"))
	for _, want := range []string{
		`<a href="/activity" id="activity-link" aria-current="page">Activity</a>`,
		`Ana before sessions were recorded, `,
		`north for Ana via Claude Code, `,
		`: 2 changes to 1 document, 1 proposal</span>`,
		`<a class="quiet" href="/activity?session=m1">session m1</a>`,
		`<a href="/document/` + id + `/v/2">Launch &lt;plan&gt;: version 2, append &#43;2 −0</a>`,
		`<a href="/document/` + id + `/proposal/1">Launch &lt;plan&gt;: change 1 proposed, edit &#43;1 −1</a>`,
		`<span class="quiet">launch</span>`,
		`<script src="/static/activity.js" defer></script>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/activity lacks %q:\n%s", want, page)
		}
	}
	if i, j := strings.Index(page, "Diary"), strings.Index(page, "version 1, write"); i < 0 || j < 0 || i > j {
		t.Errorf("/activity is not newest first")
	}
	if got := body(t, f.get(c, "/")); !strings.Contains(got, `<a href="/activity" id="activity-link">Activity</a>`) {
		t.Errorf("the documents list's header has no link to /activity")
	}
	for path, want := range map[string][2]string{
		"/activity?space=personal":     {"Diary", "Launch"},
		"/activity?agent=north":        {"Launch", "Diary"},
		"/activity?session=m1":         {"version 1, write", "Diary"},
		"/activity?document=" + id:     {"change 1 proposed", "Diary"},
		"/activity?since=2999-01-01":   {"Nothing happened yet", "Launch"},
		"/activity?agent=person%3Aana": {"Diary", "Launch"},
	} {
		got := body(t, f.get(c, path))
		if !strings.Contains(got, want[0]) || strings.Contains(got, want[1]) {
			t.Errorf("%s: has %q %v, has %q %v", path, want[0], strings.Contains(got, want[0]), want[1], strings.Contains(got, want[1]))
		}
	}
	for _, path := range []string{"/activity?space=nowhere", "/activity?agent=a:b:c", "/activity?since=soon", "/activity?after=zz", "/activity?document=..%2F..", "/activity?session=" + strings.Repeat("x", 100)} {
		if resp := f.get(c, path); resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}

	// Pages of the activity: one older page with the rest.
	for i := range ActivityPage {
		if _, err := f.docs.Append(ctx, "Diary", "line", docstore.Author{By: "person:ana", Door: docstore.DoorPage, Session: "p1"}); err != nil {
			t.Fatal(i, err)
		}
	}
	first := body(t, f.get(c, "/activity"))
	m := regexp.MustCompile(`href="/activity\?after=([0-9a-f]+)">Older`).FindStringSubmatch(first)
	if m == nil || len(first) > 256<<10 {
		t.Fatalf("the first of two pages (%d bytes) has no link to the older one", len(first))
	}
	if older := body(t, f.get(c, "/activity?after="+m[1])); !strings.Contains(older, "version 1, write") || !strings.Contains(older, "← Newest") {
		t.Errorf("the older page:\n%s", older)
	}
}

// An open activity page is told when something happens in the person's spaces.
func TestActivityIsLive(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	c := f.client()
	f.signIn(c, "/")
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+"/activity/events?mark=0", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("events: %d", resp.StatusCode)
	}
	if _, err := f.docs.Create(ctx, "Plan", "one\n", docstore.KindWrite, agent); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if sc.Text() == "event: activity" {
			return
		}
	}
	t.Fatalf("no event: %v", sc.Err())
}

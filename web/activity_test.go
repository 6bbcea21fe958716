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
	"github.com/compass-mcp/compass-mcp/threads"
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
		`<script src="/static/follow.js" defer></script>`,
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
	resp := openStream(t, ctx, c, f.srv.URL+"/activity/events?mark=0")
	defer resp.Body.Close()
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

// The Undo on a session's line takes back what it did, as the person, merged with what
// changed since, and says what it undid and what clashed; without the browser's proof it
// does nothing.
func TestActivityUndoSession(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	north := docstore.Author{By: "agent:north", For: "person:ana", Door: docstore.DoorMCP, Client: "Claude Code", Session: "m1"}
	ben := docstore.Author{By: "agent:south", For: "person:ana", Door: docstore.DoorMCP, Session: "m2"}
	made, err := f.docs.Create(ctx, "Plan", "1 a\n2 b\n3 c\n4 d\n5 e\n", docstore.KindSave, docstore.Author{By: "person:ana"})
	if err != nil {
		t.Fatal(err)
	}
	id := made.Document.ID
	for _, e := range [][2]string{{"2 b", "2 B"}, {"4 d", "4 D"}} {
		if _, err := f.docs.Edit(ctx, id, e[0], e[1], north); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.docs.Edit(ctx, id, "4 D", "4 d, south's", ben); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	f.signIn(c, "/")
	page := body(t, f.get(c, "/activity"))
	if !strings.Contains(page, `<form class="undo" method="post" action="/activity/session/m1/undo">`) {
		t.Fatalf("no Undo on session m1's line:\n%s", page)
	}
	// No proof (a form from elsewhere): refused, nothing undone.
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/activity/session/m1/undo", strings.NewReader(""))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err := c.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("an Undo without the form token: %v %v", resp.StatusCode, err)
	}
	if v, _ := view(t, f.docs, newest(id)); v.Number != 4 {
		t.Fatalf("refused, yet Plan is at version %d", v.Number)
	}
	got := body(t, f.post(c, "/activity/session/m1/undo", nil))
	for _, want := range []string{"Session m1 undone:", "Plan: 2 of the session&#39;s versions taken back, as version 5", "line 4:", "4 d, south&#39;s"} {
		if !strings.Contains(got, want) {
			t.Errorf("the undo's answer lacks %q:\n%s", want, got)
		}
	}
	v, _ := view(t, f.docs, newest(id))
	if v.Text != "1 a\n2 b\n3 c\n4 d, south's\n5 e\n" || v.Author.By != "person:ana" || v.Author.Door != docstore.DoorPage {
		t.Errorf("Plan after the undo: %q by %+v", v.Text, v.Author)
	}
	if resp := f.post(c, "/activity/session/m9/undo", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown session's undo: %d", resp.StatusCode)
	}
}

// A version's own page says why an agent made it: the conversation of its space whose
// tool answer saved it, and the person's message before, linked; another space's
// conversation is never named.
func TestVersionPageWhy(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	made, err := f.docs.Create(ctx, "Plan", "Launch on the 2nd.\n", docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	id := made.Document.ID
	if _, err := f.docs.Edit(ctx, id, "the 2nd", "the 9th", agent); err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	part := func(conv string) []threads.Part {
		return []threads.Part{{Conversation: conv, Title: "Launch <date>", Messages: []threads.Message{
			{At: at, From: "person:ana", To: "agent:claude-code", Text: "Move the launch to the 9th.", External: conv + "-1"},
			{At: at.Add(time.Second), From: "agent:claude-code", Private: true, Text: "tool_use mcp__compass__edit_document {}", External: conv + "-2"},
			{At: at.Add(2 * time.Second), From: "agent:claude-code", Private: true, Text: "tool_result Saved [Plan](http://127.0.0.1:7411/document/" + id + ") as version 2: +1 −1 lines.", External: conv + "-3"},
		}}}
	}
	origin := threads.Origin{Name: "claude-code"}
	if _, err := threads.New(f.db, "elsewhere").ImportParts(ctx, origin, part("5d0c7e21-9a4b-4c3d-8e2f-1a6b7c8d9e09"), nil); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	f.signIn(c, "/")
	if got := body(t, f.get(c, "/document/"+id+"/v/2")); strings.Contains(got, `class="why"`) {
		t.Errorf("another space's conversation named:\n%s", got)
	}
	if _, err := threads.New(f.db, "personal").ImportParts(ctx, origin, part("5d0c7e21-9a4b-4c3d-8e2f-1a6b7c8d9e01"), nil); err != nil {
		t.Fatal(err)
	}
	got := body(t, f.get(c, "/document/"+id+"/v/2"))
	if want := `<p class="why">Why: <a href="/conversation/5d0c7e21-9a4b-4c3d-8e2f-1a6b7c8d9e01?space=personal">from conversation “Launch &lt;date&gt;” (5d0c7e21-9a4b-4c3d-8e2f-1a6b7c8d9e01): Ana: Move the launch to the 9th.</a></p>`; !strings.Contains(got, want) {
		t.Errorf("version 2's page lacks %s:\n%s", want, got)
	}
	if got := body(t, f.get(c, "/document/"+id+"/blame")); !strings.Contains(got, `<li>v2 why: <a href="/conversation/5d0c7e21-9a4b-4c3d-8e2f-1a6b7c8d9e01?space=personal">from conversation “Launch &lt;date&gt;”`) || strings.Contains(got, "v1 why") {
		t.Errorf("the blame lacks version 2's why:\n%s", got)
	}
	if got := body(t, f.get(c, "/document/"+id+"/v/1")); strings.Contains(got, `class="why"`) {
		t.Errorf("version 1, made by no tool call of the conversation, has a why")
	}
}

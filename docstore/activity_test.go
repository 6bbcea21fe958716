package docstore_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/spaces"
)

func activity(t testing.TB, db kv.DB, in []string, f docstore.ActivityFilter, after string, limit int) docstore.Activity {
	t.Helper()
	a, err := docstore.ReadIn(t.Context(), docstore.New(db, in[0]), func(r *docstore.Reader) (docstore.Activity, error) {
		return r.Activity(in, f, after, limit)
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func whats(a docstore.Activity) string {
	var b strings.Builder
	for _, e := range a.Events {
		fmt.Fprintf(&b, "%s:%c%d ", e.Space, e.What, e.N)
	}
	return strings.TrimSpace(b.String())
}

// The activity lists, newest first and across spaces, every version, proposal opened and
// decided, comment, delete and bring-back, each with its author's door and session; pages
// go on where the one before ended; filters keep what they name; events group by session.
func TestActivity(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	// Each write is a minute after the one before, however often it reads the clock (a
	// write's function may run again, and read it again).
	clock := time.Date(2026, 12, 6, 14, 2, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	tick := func() { clock = clock.Add(time.Minute) }
	north := docstore.Author{By: "agent:north", For: "person:ana", Door: docstore.DoorMCP, Client: "Claude Code", Session: "m1"}
	south := docstore.Author{By: "agent:south", For: "person:ana", Door: docstore.DoorMCP, Client: "Codex", Session: "m2"}
	ana := docstore.Author{By: "person:ana", Door: docstore.DoorCLI}
	personal := docstore.New(db, "personal").WithClock(now)
	launch := docstore.New(db, "launch").WithClock(now)

	tick()
	plan, err := launch.Create(ctx, "Launch plan", "one\ntwo\n", docstore.KindWrite, north) // launch:v1
	if err != nil {
		t.Fatal(err)
	}
	id := plan.Document.ID
	tick()
	if _, err := launch.Append(ctx, id, "three", north); err != nil { // launch:v2
		t.Fatal(err)
	}
	tick()
	if _, err := personal.Create(ctx, "Diary", "today\n", docstore.KindSave, ana); err != nil { // personal:v1
		t.Fatal(err)
	}
	tick()
	if _, err := launch.Proposing().Edit(ctx, id, "two", "TWO", south); err != nil { // launch:p1
		t.Fatal(err)
	}
	tick()
	if _, err := launch.Comment(ctx, id, docstore.NewComment{Lines: docstore.LineRange{From: 1, To: 1}, Text: "why?", Author: north}); err != nil { // launch:c1
		t.Fatal(err)
	}
	tick()
	if _, err := launch.Decline(ctx, id, 1, ana, "no"); err != nil { // launch:d1
		t.Fatal(err)
	}
	tick()
	if _, err := launch.Delete(ctx, id, ana); err != nil { // launch:x0
		t.Fatal(err)
	}
	tick()
	if _, err := launch.Undelete(ctx, id); err != nil { // launch:u0
		t.Fatal(err)
	}
	both := []string{"launch", "personal"}
	all := activity(t, db, both, docstore.ActivityFilter{}, "", 50)
	if got, want := whats(all), "launch:u0 launch:x0 launch:d1 launch:c1 launch:p1 personal:v1 launch:v2 launch:v1"; got != want {
		t.Errorf("the activity: %s, want %s", got, want)
	}
	if e := all.Events[len(all.Events)-1]; e.Title != "Launch plan" || e.Author != north || e.Added != 2 || e.Kind != docstore.KindWrite {
		t.Errorf("the first version's event: %+v", e)
	}
	if d := all.Events[2]; d.Status != docstore.StatusDeclined || d.Author.By != "person:ana" || d.By != "agent:south" {
		t.Errorf("the decision's event: %+v", d)
	}
	if all.Next != "" {
		t.Errorf("one page has a next: %q", all.Next)
	}

	// Pages of three, each going on where the one before ended, across both spaces.
	var pages []string
	for after, i := "", 0; i < 10; i++ {
		p := activity(t, db, both, docstore.ActivityFilter{}, after, 3)
		pages = append(pages, whats(p))
		if after = p.Next; after == "" {
			break
		}
	}
	if got := strings.Join(pages, " | "); got != "launch:u0 launch:x0 launch:d1 | launch:c1 launch:p1 personal:v1 | launch:v2 launch:v1" {
		t.Errorf("pages of three: %s", got)
	}

	for _, c := range []struct {
		f    docstore.ActivityFilter
		in   []string
		want string
	}{
		{docstore.ActivityFilter{Agent: "agent:north"}, both, "launch:c1 launch:v2 launch:v1"},
		{docstore.ActivityFilter{Session: "m2"}, both, "launch:p1"},
		{docstore.ActivityFilter{Document: id}, both, "launch:u0 launch:x0 launch:d1 launch:c1 launch:p1 launch:v2 launch:v1"},
		{docstore.ActivityFilter{Since: time.Date(2026, 12, 6, 14, 6, 0, 0, time.UTC)}, both, "launch:u0 launch:x0 launch:d1 launch:c1 launch:p1"},
		{docstore.ActivityFilter{}, []string{"personal"}, "personal:v1"},
	} {
		if got := whats(activity(t, db, c.in, c.f, "", 50)); got != c.want {
			t.Errorf("%+v in %v: %s, want %s", c.f, c.in, got, c.want)
		}
	}

	groups := docstore.Sessions(all.Events)
	var said []string
	for _, g := range groups {
		said = append(said, g.ID+": "+g.Counts())
	}
	if got, want := strings.Join(said, " | "), ": 1 delete or bring-back | : 1 delete or bring-back | : 1 decision | m1: 2 changes to 1 document, 1 comment | m2: 1 proposal | : 1 change to 1 document"; got != want {
		t.Errorf("sessions: %s\nwant       %s", got, want)
	}
	if _, err := docstore.ReadIn(ctx, launch, func(r *docstore.Reader) (docstore.Activity, error) {
		return r.Activity(both, docstore.ActivityFilter{}, "zz", 3)
	}); err != docstore.ErrBadPosition {
		t.Errorf("a made-up position: %v", err)
	}
}

// A store written before the activity index has it built from its versions on the first
// read; a purged document leaves nothing of it in the activity.
func TestActivityBuiltAndPurged(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	s := docstore.New(db, "personal")
	a, _ := s.Create(ctx, "A", "a\n", docstore.KindWrite, docstore.Author{By: "agent:north"})
	s.Append(ctx, a.Document.ID, "b", docstore.Author{By: "agent:north"})
	b, _ := s.Create(ctx, "B", "b\n", docstore.KindWrite, docstore.Author{By: "agent:north"})
	// As a store written before the index: its bucket gone.
	if err := db.Update(ctx, func(tx kv.Tx) error { return spaces.Bucket(tx, "personal").DeleteBucket([]byte("doc_activity")) }); err != nil {
		t.Fatal(err)
	}
	if got := whats(activity(t, db, []string{"personal"}, docstore.ActivityFilter{}, "", 50)); got != "personal:v1 personal:v2 personal:v1" {
		t.Errorf("built from the versions: %s", got)
	}
	s.Delete(ctx, b.Document.ID, docstore.Author{By: "person:ana"})
	if _, err := s.Purge(ctx, b.Document.ID); err != nil {
		t.Fatal(err)
	}
	got := activity(t, db, []string{"personal"}, docstore.ActivityFilter{}, "", 50)
	for _, e := range got.Events {
		if e.Doc == b.Document.ID {
			t.Errorf("the purged document's %c%d is in the activity", e.What, e.N)
		}
	}
}

// A filter that leaves most entries out reads at most a bounded number of them a page,
// and says where it stopped: the pages after find what is older.
func TestActivityFilterIsBounded(t *testing.T) {
	defer docstore.SetActivityScan(100)()
	ctx := t.Context()
	db := kvtest.Open(t)
	s := docstore.New(db, "personal")
	old, _ := s.Create(ctx, "Old", "x\n", docstore.KindWrite, docstore.Author{By: "agent:rare"})
	d, _ := s.Create(ctx, "Busy", "x\n", docstore.KindWrite, docstore.Author{By: "agent:busy"})
	for i := range 250 {
		if _, err := s.Append(ctx, d.Document.ID, fmt.Sprint(i), docstore.Author{By: "agent:busy"}); err != nil {
			t.Fatal(err)
		}
	}
	f := docstore.ActivityFilter{Agent: "agent:rare"}
	var pages []string
	for after, i := "", 0; i < 10; i++ {
		p := activity(t, db, []string{"personal"}, f, after, 50)
		pages = append(pages, whats(p))
		if after = p.Next; after == "" {
			break
		}
	}
	if got := strings.Join(pages, "|"); got != "||personal:v1" {
		t.Errorf("pages of a rare agent, 100 entries read a page: %q", got)
	}
	if first := activity(t, db, []string{"personal"}, f, "", 50); len(first.Events) != 0 || first.Next == "" {
		t.Errorf("the first page: %s", whats(first))
	}
	_ = old
}

package threads

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// openDB opens a fresh store on whichever store the tests run on (kvtest.Open).
func openDB(tb testing.TB) kv.DB { return kvtest.Open(tb) }

// clock gives t0, then each call a second later.
func clock(t0 time.Time) func() time.Time {
	n := -1
	return func() time.Time {
		n++
		return t0.Add(time.Duration(n) * time.Second)
	}
}

var t0 = time.Date(2026, 11, 8, 10, 0, 0, 0, time.UTC)

func say(t *testing.T, s *Store, conv, title string, m Message) Message {
	t.Helper()
	ctx := t.Context()
	got, err := s.Say(ctx, conv, title, m)
	if err != nil {
		t.Fatalf("Say(%q, %q): %v", conv, m.Text, err)
	}
	return got
}

func ids(convs []Conversation) []string {
	var out []string
	for _, c := range convs {
		out = append(out, c.ID)
	}
	return out
}

func TestRecent(t *testing.T) {
	db := openDB(t)
	s := New(db, "personal").WithClock(clock(t0))
	launch := New(db, "launch").WithClock(clock(t0.Add(time.Hour)))

	say(t, s, "pricing", "Pricing", Message{From: "person:ana", To: "agent:north", Text: "Pricing: we settled on 12 a month."})
	say(t, s, "pricing", "", Message{From: "agent:north", Text: "list_documents → ...", Private: true})
	say(t, s, "trailer", "Trailer", Message{From: "person:ana", Text: "Record the trailer."})
	latest := say(t, s, "pricing", "", Message{From: "agent:north", Text: "You said: Ana: Pricing: we settled on 12 a month."})
	say(t, s, "pricing", "", Message{From: "agent:north", Text: "edit_document → ...", Private: true})
	say(t, s, "steps", "Only steps", Message{From: "agent:north", Text: "recall → nothing", Private: true})
	say(t, launch, "secret", "Launch plans", Message{From: "person:bo", Text: "Not for personal."})

	got, err := readRecent(t, s, 20, "")
	if err != nil {
		t.Fatal(err)
	}
	// "steps" has only private steps: nothing to read, so it is not listed.
	if want := []string{"pricing", "trailer"}; !slices.Equal(ids(got), want) {
		t.Fatalf("Recent = %v, want %v", ids(got), want)
	}
	p := got[0]
	if p.Title != "Pricing" || p.Count != 2 {
		t.Errorf("pricing: title %q, count %d; want Pricing, 2 (private steps not counted)", p.Title, p.Count)
	}
	if p.First.Text != "Pricing: we settled on 12 a month." || p.First.From != "person:ana" || p.First.To != "agent:north" {
		t.Errorf("pricing First = %+v", p.First)
	}
	if p.Latest.ID != latest.ID || p.Latest.Text != latest.Text || !p.Last.Equal(latest.At) {
		t.Errorf("pricing Latest = %+v, Last %s; want %+v", p.Latest, p.Last, latest)
	}
	if !p.Created.Equal(t0) {
		t.Errorf("pricing Created = %s, want %s", p.Created, t0)
	}
	if st, err := readGet(t, s, "steps"); err != nil || st.Count != 0 || st.First.ID != "" || st.Latest.ID != "" || !st.Last.IsZero() {
		t.Errorf("a conversation of private steps only = %+v, %v; want nothing counted or shown", st, err)
	}

	// The newest, "steps", is passed: the limit is still filled, from the ones after it.
	for limit, want := range map[int][]string{1: {"pricing"}, 2: {"pricing", "trailer"}} {
		if got, err := readRecent(t, s, limit, ""); err != nil || !slices.Equal(ids(got), want) {
			t.Errorf("Recent(%d) = %v, %v; want %v", limit, ids(got), err, want)
		}
	}

	got, err = readRecent(t, s, 2, "pricing")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"trailer"}; !slices.Equal(ids(got), want) {
		t.Errorf("Recent(2, except pricing) = %v, want %v", ids(got), want)
	}

	// Another space's conversation is not there, by any way of asking.
	if _, err := readGet(t, s, "secret"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of another space's conversation: %v, want ErrNotFound", err)
	}
	if _, _, err := readPage(t, s, "secret", 30, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("Page of another space's conversation: %v, want ErrNotFound", err)
	}
	if got, _ := readRecent(t, launch, 20, ""); !slices.Equal(ids(got), []string{"secret"}) {
		t.Errorf("launch Recent = %v, want [secret]", ids(got))
	}
	if _, err := readGet(t, launch, "pricing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get from launch of personal's conversation: %v, want ErrNotFound", err)
	}
	if got, err := readRecent(t, New(db, "empty"), 20, ""); err != nil || len(got) != 0 {
		t.Errorf("Recent of a space never written = %v, %v; want nothing", got, err)
	}

	// Private steps are never in a page.
	msgs, more, err := readPage(t, s, "pricing", 30, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || more || msgs[0].Private || msgs[1].Private {
		t.Errorf("Page(pricing) = %+v, more %v; want the 2 said messages", msgs, more)
	}
	if msgs, more, err := readPage(t, s, "steps", 30, ""); err != nil || len(msgs) != 0 || more {
		t.Errorf("Page(steps) = %v, %v, %v; want nothing", msgs, more, err)
	}
}

func TestSay(t *testing.T) {
	ctx := t.Context()
	s := New(openDB(t), "personal").WithClock(clock(t0))
	first := say(t, s, "c", "Title", Message{From: "ana", Text: "hello", External: "x1"})
	if first.From != "person:ana" || first.ID == "" || !first.At.Equal(t0) {
		t.Errorf("Say = %+v, want from person:ana at %s with an id", first, t0)
	}
	again := say(t, s, "c", "", Message{From: "ana", Text: "hello", External: "x1"})
	if again.ID != first.ID {
		t.Errorf("Say with a known external id made %s, want %s again", again.ID, first.ID)
	}
	say(t, s, "c", "", Message{From: "agent:north", Text: "hi"})
	c, err := readGet(t, s, "c")
	if err != nil {
		t.Fatal(err)
	}
	if c.Title != "Title" || c.Count != 2 {
		t.Errorf("Get = %+v, want title kept and 2 messages", c)
	}
	say(t, s, "c", "New title", Message{From: "agent:north", Text: "renamed", At: t0.Add(-time.Hour)})
	c, _ = readGet(t, s, "c")
	if c.Title != "New title" || c.First.Text != "renamed" || c.Latest.Text != "hi" || !c.Created.Equal(t0.Add(-time.Hour)) {
		t.Errorf("after an earlier message: %+v, want it first and created then", c)
	}

	for _, tc := range []struct {
		id   string
		m    Message
		want error
	}{
		{"", Message{From: "ana", Text: "x"}, ErrBadID},
		{"a\nb", Message{From: "ana", Text: "x"}, ErrBadID},
		{string(make([]byte, 201)), Message{From: "ana", Text: "x"}, ErrBadID},
		{"c", Message{From: "robot:x", Text: "x"}, spaces.ErrBadActor},
		{"c", Message{From: "ana", Text: ""}, ErrBadText},
		{"c", Message{From: "ana", Text: "x", At: time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC)}, ErrBadTime},
	} {
		_, err := s.Say(ctx, tc.id, "", tc.m)
		if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("Say(%q, %+v) = %v, want %v", tc.id, tc.m, err, tc.want)
		}
	}
}

func TestPage(t *testing.T) {
	ctx := t.Context()
	s := New(openDB(t), "personal").WithClock(clock(t0))
	var said []Message
	for i := 1; i <= 45; i++ {
		said = append(said, say(t, s, "long", "", Message{From: "person:ana", Text: fmt.Sprintf("message %d", i)}))
		say(t, s, "long", "", Message{From: "agent:north", Text: fmt.Sprintf("step %d", i), Private: true})
	}
	other := say(t, s, "other", "", Message{From: "person:ana", Text: "elsewhere"})

	page, more, err := readPage(t, s, "long", 30, "")
	if err != nil {
		t.Fatal(err)
	}
	if !more || len(page) != 30 || page[0].Text != "message 16" || page[29].Text != "message 45" {
		t.Fatalf("first page: %d messages from %q to %q, more %v; want 16..45 and more", len(page), page[0].Text, page[len(page)-1].Text, more)
	}
	if !slices.Equal(texts(page), texts(said[15:])) {
		t.Errorf("first page = %v", texts(page))
	}
	older, more, err := readPage(t, s, "long", 30, page[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if more || !slices.Equal(texts(older), texts(said[:15])) {
		t.Errorf("page before %s = %v, more %v; want messages 1..15 and no more", page[0].ID, texts(older), more)
	}
	if got, more, _ := readPage(t, s, "long", 30, said[0].ID); len(got) != 0 || more {
		t.Errorf("page before the first message = %v, more %v; want nothing", got, more)
	}

	private, err := s.Say(ctx, "long", "", Message{From: "agent:north", Text: "a step", Private: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, before := range []string{private.ID, other.ID, "nonsense", "01JDX0000000000000000000000"} {
		if _, _, err := readPage(t, s, "long", 30, before); !errors.Is(err, ErrBadBefore) {
			t.Errorf("Page before %q = %v, want ErrBadBefore", before, err)
		}
	}
}

func texts(msgs []Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Text)
	}
	return out
}

func TestSameMillisecond(t *testing.T) {
	db := openDB(t)
	at := time.Date(2026, 11, 8, 10, 42, 0, 123456789, time.UTC)
	s := New(db, "personal").WithClock(func() time.Time { return at })
	var said []string
	for i := range 300 {
		m := say(t, s, "burst", "", Message{From: "agent:north", Text: fmt.Sprint(i), Private: i%3 == 0})
		if !m.At.Equal(at) {
			t.Fatalf("message %d at %s, want %s", i, m.At, at)
		}
		if n := len(said); n > 0 && m.ID <= said[n-1] {
			t.Fatalf("message %d has id %s, not after %s", i, m.ID, said[n-1])
		}
		said = append(said, m.ID)
	}
	page, _, err := readPage(t, s, "burst", 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range page {
		if want := fmt.Sprint(i/2*3 + i%2 + 1); m.Text != want {
			t.Fatalf("page[%d] = %q, want %q: messages of one millisecond out of order", i, m.Text, want)
		}
	}
}

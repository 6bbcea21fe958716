package threads

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/spaces"
)

// ImportParts keeps what was read and how far together: a title that comes before its
// conversation is left out, a default title names only an untitled conversation, a message
// given twice is added once, and a message the store can't keep leaves nothing of the call
// behind, not even how far reading went.
func TestImportParts(t *testing.T) {
	ctx := t.Context()
	s := New(openDB(t), "personal")
	at := t0
	msg := func(ext, text string) Message {
		at = at.Add(time.Second)
		return Message{At: at, From: "ana", To: "agent:claude-code", Text: text, External: ext}
	}
	sum, err := s.ImportParts(ctx, Origin{}, []Part{
		{Conversation: "later", Title: "Before its conversation"},
		{Conversation: "c1", DefaultTitle: "First prompt", Messages: []Message{msg("e1", "one"), msg("e2", "two")}},
		{Conversation: "c1", DefaultTitle: "Second prompt", Messages: []Message{msg("e1", "one again")}},
	}, map[string][]byte{"test:a": []byte(`{"offset":10}`)})
	if err != nil || sum.ImportSummary != (ImportSummary{Conversations: 1, Messages: 2, Skipped: 1}) || sum.Refused != nil {
		t.Fatalf("ImportParts = %+v, %v", sum, err)
	}
	if c, err := readGet(t, s, "c1"); err != nil || c.Title != "First prompt" || c.Count != 2 || c.First.From != "person:ana" {
		t.Errorf("c1 = %+v, %v", c, err)
	}
	if _, err := readGet(t, s, "later"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a title alone made its conversation: %v", err)
	}
	if _, err := s.ImportParts(ctx, Origin{}, []Part{{Conversation: "c1", Title: "Summary\ntitle"}}, nil); err != nil {
		t.Fatal(err)
	}
	if c, _ := readGet(t, s, "c1"); c.Title != "Summary title" {
		t.Errorf("a title replaces the conversation's, cleaned: %q", c.Title)
	}

	for _, bad := range []struct {
		name string
		m    Message
		want error
	}{
		{"no time", Message{From: "ana", Text: "x"}, ErrBadTime},
		{"a NUL", Message{At: t0, From: "ana", Text: "a\x00b"}, ErrBadText},
		{"too long", Message{At: t0, From: "ana", Text: strings.Repeat("x", MaxText+1)}, ErrBadText},
		{"no one", Message{At: t0, Text: "x"}, spaces.ErrBadActor},
		{"a bad external id", Message{At: t0, From: "ana", Text: "x", External: "a\nb"}, nil},
	} {
		parts := []Part{{Conversation: "c2", Messages: []Message{msg("", "fine"), bad.m}}}
		_, err := s.ImportParts(ctx, Origin{}, parts, map[string][]byte{"test:a": []byte(`{"offset":99}`)})
		if err == nil || bad.want != nil && !errors.Is(err, bad.want) {
			t.Errorf("%s: ImportParts = %v, want %v", bad.name, err, bad.want)
		}
		if _, err := readGet(t, s, "c2"); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: a refused call made its conversation: %v", bad.name, err)
		}
	}
	if _, err := s.ImportParts(ctx, Origin{}, []Part{{Conversation: strings.Repeat("x", MaxID+1), Messages: []Message{msg("", "x")}}}, nil); !errors.Is(err, ErrBadID) {
		t.Errorf("a conversation id too long: %v", err)
	}

	got, err := inView(t, s, func(r *Reader) (map[string][]byte, error) { return r.Sources([]string{"test:a", "test:none"}), nil })
	if err != nil || len(got) != 1 || string(got["test:a"]) != `{"offset":10}` {
		t.Errorf("Sources = %q, %v; want only test:a, as the call that was kept left it", got, err)
	}
	if got, err := inView(t, New(openDB(t), "personal"), func(r *Reader) (map[string][]byte, error) { return r.Sources([]string{"test:a"}), nil }); err != nil || len(got) != 0 {
		t.Errorf("Sources of a new space = %q, %v", got, err)
	}
}

// An importer with an Origin adds only to conversations it made: one that Say made (the
// chat bridge's, say) is left as it was and listed in Refused, whatever the parts say; one
// made before origins were kept is its own when its messages are to or from the origin's
// agent, and is marked so.
func TestImportPartsOrigin(t *testing.T) {
	ctx := t.Context()
	s := New(openDB(t), "personal")
	cc := Origin{Name: "claude-code", Agent: "agent:claude-code"}
	if _, err := s.Say(ctx, "pricing", "#pricing", Message{At: t0, From: "person:ana", Text: "12 a month."}); err != nil {
		t.Fatal(err)
	}
	legacy := []Part{{Conversation: "old-session", Messages: []Message{{At: t0, From: "ana", To: "agent:claude-code", Text: "A prompt.", External: "u0"}}}}
	if _, err := s.ImportParts(ctx, Origin{}, legacy, nil); err != nil { // as an import before origins
		t.Fatal(err)
	}
	at := t0.Add(time.Minute)
	sum, err := s.ImportParts(ctx, cc, []Part{
		{Conversation: "pricing", Title: "Hijacked", Messages: []Message{{At: at, From: "ana", Text: "Price is 0.", External: "u1"}}},
		{Conversation: "pricing", Messages: []Message{{At: at, From: "agent:claude-code", Text: "Done.", External: "u2"}}},
		{Conversation: "new-session", Messages: []Message{{At: at, From: "ana", Text: "New.", External: "u3"}}},
		{Conversation: "old-session", Messages: []Message{{At: at, From: "agent:claude-code", Text: "Answer.", External: "u4"}}},
	}, map[string][]byte{"test:a": []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if want := (ImportSummary{Conversations: 2, Messages: 2}); sum.ImportSummary != want || len(sum.Refused) != 1 || sum.Refused[0] != "pricing" {
		t.Errorf("ImportParts = %+v, want %+v and pricing refused once", sum, want)
	}
	if c, err := readGet(t, s, "pricing"); err != nil || c.Title != "#pricing" || c.Count != 1 || c.Origin != "" {
		t.Errorf("the chat's conversation after the import: %+v, %v", c, err)
	}
	for id, n := range map[string]int{"new-session": 1, "old-session": 2} {
		if c, err := readGet(t, s, id); err != nil || c.Count != n || c.Origin != "claude-code" {
			t.Errorf("%s: %+v, %v; want %d messages and origin claude-code", id, c, err, n)
		}
	}
	// A conversation of another origin is refused too.
	if sum, err := s.ImportParts(ctx, Origin{Name: "other"}, []Part{{Conversation: "new-session", Messages: []Message{{At: at, From: "ana", Text: "x"}}}}, nil); err != nil || len(sum.Refused) != 1 || sum.Messages != 0 {
		t.Errorf("another origin's import into claude-code's conversation: %+v, %v", sum, err)
	}
}

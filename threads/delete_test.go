package threads

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
)

// left counts what the space's buckets still hold of conversation id: its summary, its
// entries in recent, and the keys of its messages, private steps and external ids.
func left(t *testing.T, db kv.DB, space, id string) int {
	t.Helper()
	n := 0
	err := db.View(t.Context(), func(tx kv.Tx) error {
		v := readView(tx, space)
		if v.summaries != nil && v.summaries.Get([]byte(id)) != nil {
			n++
		}
		if v.recent != nil {
			v.recent.ForEach(func(k, _ []byte) error {
				if string(k[activitySize:]) == id {
					n++
				}
				return nil
			})
		}
		for _, b := range []kv.Bucket{v.messages, v.private, v.external} {
			if b != nil && b.Bucket([]byte(id)) != nil {
				n += b.Bucket([]byte(id)).KeyN()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Delete takes a conversation away whole, its private steps and imported ids too, and its
// words out of the search index (which stays what a rebuild would make); the space's other
// conversations, and another space's of the same id, stay; an import of the same lines
// brings it back.
func TestDeleteConversation(t *testing.T) {
	ctx := t.Context()
	db := openDB(t)
	s := New(db, "personal").WithClock(clock(t0))
	other := New(db, "launch").WithClock(clock(t0))
	lines := `{"conversation":"pricing","title":"Pricing","from":"person:ana","to":"agent:north","text":"We settled on twelve a month."}
{"conversation":"pricing","from":"agent:north","text":"list_documents → zebra","private":true}
{"conversation":"pricing","from":"agent:north","text":"Noted: twelve."}
`
	if _, err := s.Import(ctx, strings.NewReader(lines), "ana", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Import(ctx, strings.NewReader(lines), "ana", nil); err != nil {
		t.Fatal(err)
	}
	say(t, s, "standup", "Standup", Message{From: "person:ana", Text: "Twelve people came."})
	if err := s.EnsureIndex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if left(t, db, "personal", "pricing") == 0 {
		t.Fatal("nothing of the conversation was stored")
	}

	gone, err := s.Delete(ctx, "pricing")
	if err != nil || gone.ID != "pricing" || gone.Title != "Pricing" || gone.Count != 2 {
		t.Fatalf("Delete: %+v, %v", gone, err)
	}
	if n := left(t, db, "personal", "pricing"); n != 0 {
		t.Errorf("%d keys of the conversation are left", n)
	}
	if _, err := readGet(t, s, "pricing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: %v", err)
	}
	if _, _, err := readPage(t, s, "pricing", 10, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("Page after Delete: %v", err)
	}
	if convs, _ := readRecent(t, s, 10, ""); !slices.Equal(ids(convs), []string{"standup"}) {
		t.Errorf("Recent after Delete: %v", ids(convs))
	}
	if r, err := readSearch(t, s, "twelve", 10, ""); err != nil || len(r.Found) != 1 || r.Found[0].Conversation.ID != "standup" {
		t.Errorf("Search after Delete: %+v, %v", r, err)
	}
	if err := s.CheckIndex(ctx); err != nil {
		t.Errorf("the index after Delete: %v", err)
	}
	if _, err := s.Delete(ctx, "pricing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete again: %v", err)
	}
	if c, err := readGet(t, other, "pricing"); err != nil || c.Count != 2 {
		t.Errorf("launch's pricing after personal's was deleted: %+v, %v", c, err)
	}

	sum, err := s.Import(ctx, strings.NewReader(lines), "ana", nil)
	if err != nil || sum.Messages != 3 {
		t.Fatalf("import again: %+v, %v", sum, err)
	}
	if c, err := readGet(t, s, "pricing"); err != nil || c.Count != 2 || c.First.Text != "We settled on twelve a month." {
		t.Errorf("pricing imported again: %+v, %v", c, err)
	}
	if err := s.CheckIndex(ctx); err != nil {
		t.Errorf("the index after importing again: %v", err)
	}
}

// DeleteAll empties the space's conversations and no other space's.
func TestDeleteAllConversations(t *testing.T) {
	ctx := t.Context()
	db := openDB(t)
	s := New(db, "personal").WithClock(clock(t0))
	if n, err := s.DeleteAll(ctx); err != nil || n != 0 {
		t.Fatalf("DeleteAll of a space never written: %d, %v", n, err)
	}
	for _, id := range []string{"a", "b", "c"} {
		say(t, s, id, "", Message{From: "person:ana", Text: "hello from " + id})
		say(t, s, id, "", Message{From: "agent:north", Text: "a step", Private: true})
	}
	say(t, New(db, "launch"), "a", "", Message{From: "person:ana", Text: "launch's own"})
	if err := s.EnsureIndex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	n, err := s.DeleteAll(ctx)
	if err != nil || n != 3 {
		t.Fatalf("DeleteAll: %d, %v", n, err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if k := left(t, db, "personal", id); k != 0 {
			t.Errorf("%s: %d keys left", id, k)
		}
	}
	if convs, _ := readRecent(t, s, 10, ""); len(convs) != 0 {
		t.Errorf("Recent after DeleteAll: %v", ids(convs))
	}
	if err := s.CheckIndex(ctx); err != nil {
		t.Errorf("the index after DeleteAll: %v", err)
	}
	if convs, _ := readRecent(t, New(db, "launch"), 10, ""); !slices.Equal(ids(convs), []string{"a"}) {
		t.Errorf("launch after personal's DeleteAll: %v", ids(convs))
	}
	// Written to again, an id deleted is a new conversation.
	say(t, s, "a", "Again", Message{From: "person:ana", Text: "new"})
	if c, err := readGet(t, s, "a"); err != nil || c.Count != 1 || c.Title != "Again" {
		t.Errorf("a, written again: %+v, %v", c, err)
	}
}

package docstore_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// Log lists a history without reading a text: 20 versions of 1 MiB cost it less than one text
// on bbolt (27 KiB) and less than three on PostgreSQL, whose driver copies out the latest
// version's whole record (2 MiB), where rebuilding every text, as a history page once did,
// allocated 28 MiB. Walk hands each text over.
func TestLogReadsNoText(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	big := strings.Repeat("a line of the plan that is long enough\n", (1<<20)/40)
	d := mustCreate(t, s, "Plan", big)
	const versions = 20
	for i := 2; i <= versions; i++ {
		if _, err := s.Append(ctx, d.ID, fmt.Sprintf("step %d", i), north); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, vs, err := view2(t, s, func(r *docstore.Reader) (docstore.Document, []docstore.Version, error) { return r.Log("plan") })
	runtime.ReadMemStats(&after)
	if err != nil || got.ID != d.ID || len(vs) != versions {
		t.Fatalf("Log = %v, %d versions, %v", got.ID, len(vs), err)
	}
	for i, v := range vs {
		if v.Number != versions-i || v.Text != "" || v.Title != "Plan" {
			t.Fatalf("header %d: version %d titled %q with %d bytes of text", i, v.Number, v.Title, len(v.Text))
		}
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*uint64(len(big)) {
		t.Errorf("Log of %d versions of %d KiB allocated %d KiB: more than three texts", versions, len(big)>>10, alloc>>10)
	}
	n := 0
	err = s.Walk(ctx, d.ID, func(v docstore.Version) error {
		last := "long enough"
		if v.Number > 1 {
			last = fmt.Sprintf("step %d", v.Number)
		}
		if v.Number != versions-n || !strings.HasPrefix(v.Text, big) || !strings.HasSuffix(strings.TrimSpace(v.Text), last) {
			t.Fatalf("Walk's %dth is version %d with %d bytes", n, v.Number, len(v.Text))
		}
		n++
		return nil
	})
	if err != nil || n != versions {
		t.Errorf("Walk gave %d versions, %v", n, err)
	}
}

// ByID and Walk reach a deleted document by its id, never by its title; Log, like Find,
// lists only the documents in lookups.
func TestDeletedDocumentsVersions(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	d := mustCreate(t, s, "Plan", "one\n")
	if _, err := s.Write(ctx, d.ID, "", "two\n", 0, north); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, d.ID, ana); err != nil {
		t.Fatal(err)
	}
	if got, err := view(t, s, func(r *docstore.Reader) (docstore.Document, error) { return r.ByID(d.ID) }); err != nil || got.Deleted == nil || got.Version != 2 {
		t.Errorf("ByID of a deleted document = %+v, %v", got, err)
	}
	var texts []string
	if err := s.Walk(ctx, d.ID, func(v docstore.Version) error { texts = append(texts, v.Text); return nil }); err != nil || strings.Join(texts, "") != "two\none\n" {
		t.Errorf("Walk of a deleted document = %q, %v", texts, err)
	}
	if _, _, err := view2(t, s, func(r *docstore.Reader) (docstore.Document, []docstore.Version, error) { return r.Log(d.ID) }); !errors.Is(err, docstore.ErrNotFound) {
		t.Errorf("Log of a deleted document = %v, want ErrNotFound", err)
	}
	for _, name := range []string{"Plan", "plan", strings.ToLower(d.ID), "NOPE"} {
		if _, err := view(t, s, func(r *docstore.Reader) (docstore.Document, error) { return r.ByID(name) }); !errors.Is(err, docstore.ErrNotFound) {
			t.Errorf("ByID(%q) = %v, want ErrNotFound", name, err)
		}
		if err := s.Walk(ctx, name, func(docstore.Version) error { return nil }); !errors.Is(err, docstore.ErrNotFound) {
			t.Errorf("Walk(%q) = %v, want ErrNotFound", name, err)
		}
	}
}

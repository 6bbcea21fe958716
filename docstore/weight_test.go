package docstore_test

import (
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// A document that shrank is weighed, for its older versions, by the largest it was:
// rebuilding one of them starts from a version kept whole that may be that large.
func TestWeightOfOldVersionsIsTheLargest(t *testing.T) {
	s := open(t, "personal")
	big := strings.Repeat("a line of the large version\n", 1000)
	d := mustCreate(t, s, "Shrinking", big)
	saved, err := s.Write(t.Context(), d.ID, "", "short now\n", 0, north)
	if err != nil {
		t.Fatal(err)
	}
	d = saved.Document
	if d.Bytes != 10 || d.Largest != len(big) {
		t.Fatalf("Bytes %d, Largest %d; want 10 and %d", d.Bytes, d.Largest, len(big))
	}
	if got := d.Weight(docstore.WorkLines, false); got != 10 {
		t.Errorf("lines of the latest weigh %d, want 10", got)
	}
	if got, want := d.Weight(docstore.WorkDiff, true), int64(3*len(big)); got != want {
		t.Errorf("a diff of an older version weighs %d, want %d", got, want)
	}
	// The record as read again says the same.
	got, err := docstore.ReadIn(t.Context(), s, func(r *docstore.Reader) (docstore.Document, error) { return r.ByID(d.ID) })
	if err != nil || got.Largest != len(big) {
		t.Fatalf("read again: Largest %d, %v", got.Largest, err)
	}
}

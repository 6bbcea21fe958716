package docstore_test

import (
	"fmt"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

func TestRecentWalksEveryDocumentOnce(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	by := docstore.Author{By: "person:ana"}
	for i := range 120 {
		if _, err := s.Create(ctx, fmt.Sprintf("Doc %03d", i), "text\n", docstore.KindSave, by); err != nil {
			t.Fatal(err)
		}
	}
	var titles []string
	after := ""
	for pages := 0; ; pages++ {
		docs, next, total, err := recent(t, s, after, 50)
		if err != nil {
			t.Fatal(err)
		}
		if total != 120 {
			t.Fatalf("total %d, want 120", total)
		}
		for _, d := range docs {
			titles = append(titles, d.Title)
		}
		if next == "" {
			if pages != 2 {
				t.Fatalf("%d pages, want 3", pages+1)
			}
			break
		}
		after = next
	}
	if len(titles) != 120 {
		t.Fatalf("saw %d documents, want 120", len(titles))
	}
	for i, title := range titles {
		if want := fmt.Sprintf("Doc %03d", 119-i); title != want {
			t.Fatalf("document %d is %q, want %q (latest saved first)", i, title, want)
		}
	}
	if _, _, _, err := recent(t, s, "zz", 50); err == nil {
		t.Fatal("a cursor Recent never gave was taken")
	}
}

package docstore_test

import (
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// Appending leaves one blank line between the text and what is added, and its version counts
// only the added lines, whatever blank lines the text ends with or the addition starts with.
func TestAppendBlankLines(t *testing.T) {
	for _, c := range []struct {
		name, text, add, want string
		added, removed        int
	}{
		{"no final line break", "one", "two", "one\n\ntwo", 2, 0},
		{"final line break", "one\n", "two", "one\n\ntwo\n", 2, 0},
		{"one blank line", "one\n\n", "two", "one\n\ntwo\n", 1, 0},
		{"three blank lines", "one\n\n\n\n", "two", "one\n\ntwo\n\n\n", 1, 0},
		{"blank lines of spaces", "one\n  \n\t\n", "two", "one\n  \ntwo\n\t\n", 1, 0},
		{"addition opens and ends with blank lines", "one\n", "\n\n  \ntwo\n\n\n", "one\n\ntwo\n", 2, 0},
		{"both", "one\n\n\n", "\n\ntwo\nthree\n", "one\n\ntwo\nthree\n\n", 2, 0},
		{"blank lines inside the addition stay", "one\n", "two\n\n\nthree", "one\n\ntwo\n\n\nthree\n", 5, 0},
		{"indented first line", "one\n", "    code", "one\n\n    code\n", 2, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := open(t, "personal")
			d, err := s.Create("Plan", c.text, docstore.KindWrite, north)
			if err != nil {
				t.Fatal(err)
			}
			saved, err := s.Append(d.Document.ID, c.add, north)
			if err != nil {
				t.Fatal(err)
			}
			_, v, err := s.Read(d.Document.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			if v.Text != c.want {
				t.Errorf("text after appending %q to %q = %q, want %q", c.add, c.text, v.Text, c.want)
			}
			if saved.Added != c.added || saved.Removed != c.removed {
				t.Errorf("counted +%d −%d, want +%d −%d", saved.Added, saved.Removed, c.added, c.removed)
			}
		})
	}
}

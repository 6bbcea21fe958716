package docstore_test

import (
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// Appending leaves one blank line between the text and what is added, and ends as the text
// ended: with one line break if it had any, never with a blank line (issue 23.18: "a\n\n\n"
// and "b" made "a\n\nb\n\n"). Its version counts the added lines, and the blank lines the
// text ended with beyond the one between, which are gone.
func TestAppendBlankLines(t *testing.T) {
	ctx := t.Context()
	for _, c := range []struct {
		name, text, add, want string
		added, removed        int
	}{
		{"no final line break", "one", "two", "one\n\ntwo", 2, 0},
		{"final line break", "one\n", "two", "one\n\ntwo\n", 2, 0},
		{"one blank line", "one\n\n", "two", "one\n\ntwo\n", 1, 0},
		{"two blank lines", "a\n\n\n", "b", "a\n\nb\n", 1, 1},
		{"three blank lines", "one\n\n\n\n", "two", "one\n\ntwo\n", 1, 2},
		{"blank lines of spaces", "one\n  \n\t\n", "two", "one\n  \ntwo\n", 1, 1},
		{"a last blank line without a break", "one\n  ", "two", "one\n\ntwo", 2, 1},
		{"CRLF", "one\r\n", "two", "one\r\n\r\ntwo\r\n", 2, 0},
		{"CRLF and blank lines", "one\r\n\r\n\r\n", "two", "one\r\n\r\ntwo\r\n", 1, 1},
		// Line counts take a line's CR as part of it: "more" became "more\r", so −1 +1.
		{"CRLF without a final break", "one\r\nmore", "two", "one\r\nmore\r\n\r\ntwo", 3, 1},
		{"CRLF addition", "one\n", "two\r\n", "one\n\ntwo\r\n", 2, 0},
		{"only blank lines", "\n\n", "two", "two\n", 1, 2},
		{"only white space", "  \t", "two", "two", 1, 1},
		{"empty text", "", "two", "two", 1, 0},
		{"empty text, addition with a break", "", "two\n", "two\n", 1, 0},
		{"addition opens and ends with blank lines", "one\n", "\n\n  \ntwo\n\n\n", "one\n\ntwo\n", 2, 0},
		{"both", "one\n\n\n", "\n\ntwo\nthree\n", "one\n\ntwo\nthree\n", 2, 1},
		{"blank lines inside the addition stay", "one\n", "two\n\n\nthree", "one\n\ntwo\n\n\nthree\n", 5, 0},
		{"indented first line", "one\n", "    code", "one\n\n    code\n", 2, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := open(t, "personal")
			d, err := s.Create(ctx, "Plan", c.text, docstore.KindWrite, north)
			if err != nil {
				t.Fatal(err)
			}
			saved, err := s.Append(ctx, d.Document.ID, c.add, north)
			if err != nil {
				t.Fatal(err)
			}
			_, v, err := read(t, s, d.Document.ID, 0)
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

package docstore_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// FuzzReplaceOnce checks edit_document's replacement on any text: it never panics; on
// success exactly one occurrence of old was replaced; when old occurs several times the
// lines given are those of the occurrences; when it doesn't occur, each near match is whole
// lines of the text, at the line said, that hold old once white space is folded.
//
// Occurrences are counted with overlaps: in "aaa", "aa" occurs twice, and is refused.
//
// go test -fuzz=FuzzReplaceOnce ./docstore
func FuzzReplaceOnce(f *testing.F) {
	for _, s := range [][3]string{
		{"Record the trailer.\n\nBook the studio.\n", "trailer", "teaser"},
		{"a\nb\na\nb\n", "a\nb", "c"},
		{"  indented\n\tline  \r\nend\n", "indented line", "x"},
		{"one  two\nthree\n", "one two three", "y"},
		{"- [ ] task\n- [ ] task\n", "- [ ] task", "- [x] task"},
		{"aaa", "aa", "b"},
		{"é\u00a0ü\n", "é ü", "x"},
		{"", "x", "y"},
		{"x", "", "y"},
		{"line\r\n", "line\n", "z"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, text, old, new string) {
		if !utf8.ValidString(text) || !utf8.ValidString(old) {
			t.Skip("documents and tool arguments are valid UTF-8")
		}
		got, err := docstore.ReplaceOnce(text, old, new)
		var (
			miss *docstore.EditMissError
			many *docstore.EditManyError
		)
		switch {
		case old == "":
			if !errors.Is(err, docstore.ErrEmptyOld) {
				t.Fatalf("empty old: %v, want ErrEmptyOld", err)
			}
		case err == nil:
			at := strings.Index(text, old)
			if n := overlapping(text, old); n != 1 {
				t.Fatalf("replaced, but old occurs %d times", n)
			}
			if want := text[:at] + new + text[at+len(old):]; got != want {
				t.Fatalf("ReplaceOnce(%q, %q, %q) = %q, want %q", text, old, new, got, want)
			}
		case errors.As(err, &many):
			if n := overlapping(text, old); n < 2 || len(many.Lines) != n {
				t.Fatalf("old occurs %d times, the error gives lines %v", n, many.Lines)
			}
			i := 0
			for k, line := range many.Lines {
				j := strings.Index(text[i:], old)
				if want := strings.Count(text[:i+j], "\n") + 1; line != want {
					t.Fatalf("occurrence %d is on line %d, the error says %d", k+1, want, line)
				}
				i += j + 1
			}
		case errors.As(err, &miss):
			if strings.Contains(text, old) {
				t.Fatalf("old is in the text, but ReplaceOnce says it isn't")
			}
			if len(miss.Near) > 3 {
				t.Fatalf("%d near matches, want at most 3", len(miss.Near))
			}
			lines := strings.Split(text, "\n")
			want := strings.Join(strings.Fields(old), " ")
			for _, n := range miss.Near {
				k := strings.Count(n.Text, "\n") + 1
				if n.Line < 1 || n.Line-1+k > len(lines) {
					t.Fatalf("near match at line %d of %d lines: %q", n.Line, len(lines), n.Text)
				}
				if whole := strings.TrimRight(strings.Join(lines[n.Line-1:n.Line-1+k], "\n"), "\r"); whole != n.Text {
					t.Fatalf("near match at line %d is %q, but those lines are %q", n.Line, n.Text, whole)
				}
				if folded := strings.Join(strings.Fields(n.Text), " "); !strings.Contains(folded, want) {
					t.Fatalf("near match %q folds to %q, which doesn't hold %q", n.Text, folded, want)
				}
			}
		default:
			t.Fatalf("ReplaceOnce: unexpected error %v", err)
		}
	})
}

// overlapping counts where old starts in text, the slow way.
func overlapping(text, old string) int {
	n := 0
	for i := 0; i+len(old) <= len(text); i++ {
		if text[i:i+len(old)] == old {
			n++
		}
	}
	return n
}

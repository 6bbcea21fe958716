package docstore_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// FuzzReplaceOnce checks edit_document's replacement on any text: it never panics; on
// success exactly one occurrence of old was replaced; when old occurs several times the
// count is of occurrences that don't overlap and the lines given are theirs, each once;
// when it doesn't occur, each near match is whole lines of the text, at the line said, that
// hold old once white space is folded.
//
// An occurrence that overlaps the only other one still makes old ambiguous: in "aaa", "aa"
// occurs once without overlap, twice with, and is refused as occurring more than once.
//
// Each input is also tried repeated to 256 KB, with a time budget of 1 s (the quadratic
// search of before took seconds on such a text: "aa" in 256 KB of "a"), and the refusal's
// size bounded: at most MaxManyLines lines, near matches of at most MaxNear bytes.
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
		{"aaaa\naaaa\n", "aa", "b"},
		{"a b c d e f g h i j k l\n", " ", "_"},
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
			if n := overlapping(text, old); n < 2 {
				t.Fatalf("old occurs %d times, overlaps counted, but the error says more than once", n)
			}
			if many.Count != strings.Count(text, old) {
				t.Fatalf("the error counts %d, but old occurs %d times without overlaps", many.Count, strings.Count(text, old))
			}
			var want []int
			for i := 0; ; {
				j := strings.Index(text[i:], old)
				if j < 0 {
					break
				}
				if line := strings.Count(text[:i+j], "\n") + 1; len(want) == 0 || want[len(want)-1] != line {
					want = append(want, line)
				}
				i += j + len(old)
			}
			more := len(want) > docstore.MaxManyLines
			if more {
				want = want[:docstore.MaxManyLines]
			}
			if fmt.Sprint(many.Lines) != fmt.Sprint(want) || many.More != more {
				t.Fatalf("the error gives lines %v (more: %v), want %v (more: %v)", many.Lines, many.More, want, more)
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
				if n.Cut || len(n.Text) > docstore.MaxNear {
					if len(n.Text) > docstore.MaxNear {
						t.Fatalf("near match of %d bytes, want at most %d", len(n.Text), docstore.MaxNear)
					}
					continue
				}
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
		if text == "" || old == "" {
			return
		}
		big := strings.Repeat(text, (256<<10)/len(text)+1)
		start := time.Now()
		_, err = docstore.ReplaceOnce(big, old, new)
		if took := time.Since(start); took > time.Second {
			t.Fatalf("ReplaceOnce on %d bytes took %s, want at most 1 s", len(big), took)
		}
		if errors.As(err, &many) && len(many.Lines) > docstore.MaxManyLines {
			t.Fatalf("%d lines in the refusal, want at most %d", len(many.Lines), docstore.MaxManyLines)
		}
		if errors.As(err, &miss) {
			for _, n := range miss.Near {
				if len(n.Text) > docstore.MaxNear {
					t.Fatalf("near match of %d bytes, want at most %d", len(n.Text), docstore.MaxNear)
				}
			}
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

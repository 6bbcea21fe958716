package docstore

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/compass-mcp/compass-mcp/linediff"
)

// Write replaces the whole text of a named document, and its title when title is not "".
// base, when not 0, is the version text was made from: if the document has moved on since,
// text is merged line by line with the versions since (kind merge), and a *ClashError is
// returned, with nothing saved, when both changed the same lines.
func (s *Store) Write(name, title, text string, base int, by Author) (Saved, error) {
	return s.fromBase(name, KindWrite, title, text, base, by, linediff.Clash)
}

// Append adds text at the end of a named document, after one blank line.
func (s *Store) Append(name, text string, by Author) (Saved, error) {
	return s.Change(name, KindAppend, by, func(d Document, latest Version, _ func(int) (Version, error)) (Next, error) {
		return Next{Title: latest.Title, Text: appended(latest.Text, text)}, nil
	})
}

// appended puts add after text with one blank line between, and removes none of the text's
// lines, so that a version says only what was added. The text's own blank lines at its end
// give the one between (any more stay after add, where they were: at the end); add's blank
// lines at its start and end are dropped, so an append never piles up blank lines. The text's
// final line break is kept if it had one.
func appended(text, add string) string {
	add = trimBlankLines(add)
	if add == "" {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	last := len(lines) - 1 // the last line that isn't blank
	for last >= 0 && strings.TrimSpace(lines[last]) == "" {
		last--
	}
	if last < 0 {
		return add
	}
	head, tail := strings.Join(lines[:last+1], ""), strings.Join(lines[last+1:], "")
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	sep, rest, _ := strings.Cut(tail, "\n")
	sep += "\n"
	if rest != "" || strings.HasSuffix(text, "\n") {
		add = strings.TrimSuffix(add, "\n") + "\n"
	}
	return head + sep + add + rest
}

// trimBlankLines drops the blank lines at the start and end of s, keeping the line break of
// its last line if it has one.
func trimBlankLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	first, last := 0, len(lines)-1
	for first <= last && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	for last >= first && strings.TrimSpace(lines[last]) == "" {
		last--
	}
	return strings.Join(lines[first:last+1], "")
}

// Edit replaces old, which must occur exactly once in a named document's text, with new.
// It returns ErrEmptyOld, an *EditMissError or an *EditManyError when old isn't there once.
func (s *Store) Edit(name, old, new string, by Author) (Saved, error) {
	if old == "" {
		return Saved{}, ErrEmptyOld
	}
	return s.Change(name, KindEdit, by, func(d Document, latest Version, _ func(int) (Version, error)) (Next, error) {
		text, err := ReplaceOnce(latest.Text, old, new)
		if err != nil {
			if miss, ok := err.(*EditMissError); ok {
				miss.Document = d
			}
			if many, ok := err.(*EditManyError); ok {
				many.Document = d
			}
			return Next{}, err
		}
		return Next{Title: latest.Title, Text: text}, nil
	})
}

// EditMissError is returned when the text to replace isn't in the document. Near holds
// the places where it is but for white space (indentation, line ends, trailing blanks).
type EditMissError struct {
	Document Document
	Near     []Near
}

// Near is a place in a text that matches the text to replace but for white space.
type Near struct {
	Line int    // 1-based line it starts on
	Text string // the text as it actually is there
}

func (e *EditMissError) Error() string {
	return fmt.Sprintf("the text to replace isn't in %s (%d near matches)", e.Document.ID, len(e.Near))
}

// EditManyError is returned when the text to replace occurs more than once.
type EditManyError struct {
	Document Document
	Lines    []int // 1-based line of each occurrence
}

func (e *EditManyError) Error() string {
	return fmt.Sprintf("the text to replace occurs %d times in %s", len(e.Lines), e.Document.ID)
}

// ReplaceOnce replaces the one occurrence of old in text with new. It returns an
// *EditManyError when old occurs more than once, overlapping occurrences counted (in
// "aaa", "aa" occurs twice: which one was meant can't be known), and an *EditMissError
// when it doesn't occur, with the places it occurs but for white space.
func ReplaceOnce(text, old, new string) (string, error) {
	if old == "" {
		return "", ErrEmptyOld
	}
	at := Occurrences(text, old, 2)
	switch len(at) {
	case 0:
		return "", &EditMissError{Near: nearMatches(text, old, 3)}
	case 1:
		return text[:at[0]] + new + text[at[0]+len(old):], nil
	}
	at = Occurrences(text, old, -1)
	lines := make([]int, len(at))
	for i, a := range at {
		lines[i] = lineOf(text, a)
	}
	return "", &EditManyError{Lines: lines}
}

// Occurrences gives the offsets where old starts in text, overlapping ones included, at
// most most of them (all when most < 0).
func Occurrences(text, old string, most int) []int {
	var at []int
	for i := 0; most < 0 || len(at) < most; {
		j := strings.Index(text[i:], old)
		if j < 0 {
			break
		}
		at = append(at, i+j)
		i += j + 1
	}
	return at
}

func lineOf(text string, at int) int { return strings.Count(text[:at], "\n") + 1 }

// nearMatches finds up to most places where old occurs in text once runs of white space
// are folded to one space and white space at line ends is ignored. Each is given whole
// lines, as they are in text, so a model can copy them.
func nearMatches(text, old string, most int) []Near {
	want := fold(old)
	if want == "" {
		return nil
	}
	// folded holds text folded; offset[i] is where folded[i] came from in text.
	var folded strings.Builder
	offset := make([]int, 0, len(text))
	space := false
	for i, r := range text {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && folded.Len() > 0 {
			folded.WriteByte(' ')
			offset = append(offset, i)
		}
		space = false
		n := folded.Len()
		folded.WriteRune(r)
		for range folded.Len() - n {
			offset = append(offset, i)
		}
	}
	f := folded.String()
	var near []Near
	for i := 0; len(near) < most; {
		j := strings.Index(f[i:], want)
		if j < 0 {
			break
		}
		start, end := offset[i+j], offset[i+j+len(want)-1]
		ls := strings.LastIndexByte(text[:start], '\n') + 1
		le := strings.IndexByte(text[end:], '\n')
		if le < 0 {
			le = len(text)
		} else {
			le += end
		}
		near = append(near, Near{Line: lineOf(text, ls), Text: strings.TrimRight(text[ls:le], "\r")})
		i += j + len(want)
	}
	return near
}

// fold trims s and folds every run of white space in it to one space.
func fold(s string) string { return strings.Join(strings.Fields(s), " ") }

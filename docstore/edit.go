package docstore

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/linediff"
)

// Write replaces the whole text of a named document, and its title when title is not "".
// base, when not 0, is the version text was made from: if the document has moved on since,
// text is merged line by line with the versions since (kind merge), and a *ClashError is
// returned, with nothing saved, when both changed the same lines.
func (s *Store) Write(ctx context.Context, name, title, text string, base int, by Author) (Saved, error) {
	return s.fromBase(ctx, name, KindWrite, title, text, base, by, linediff.Clash)
}

// Append adds text at the end of a named document, after one blank line.
func (s *Store) Append(ctx context.Context, name, text string, by Author) (Saved, error) {
	return s.Change(ctx, name, KindAppend, by, func(d Document, latest Version, _ func(int) (Version, error)) (Next, error) {
		return Next{Title: latest.Title, Text: appended(latest.Text, text)}, nil
	})
}

// appended puts add after text with one blank line between and ends where the text ended:
// with a line break if it had one, and no blank line after add. The text's own blank lines
// at its end give the one between (the first of them, as it is); the others go, since they
// would end up after add. add's blank lines at its start and end are dropped, so an append
// never piles up blank lines. A text of CRLF lines gets CRLF where a line break is added.
func appended(text, add string) string {
	add = trimBlankLines(add)
	if add == "" {
		return text
	}
	eol := "\n"
	if i := strings.LastIndexByte(text, '\n'); i > 0 && text[i-1] == '\r' {
		eol = "\r\n"
	}
	if strings.HasSuffix(text, "\n") && !strings.HasSuffix(add, "\n") {
		add += eol
	}
	// The text's lines as strings.SplitAfter(text, "\n") cuts them, read from the end (a
	// text of megabytes is neither split nor copied but once, into the result): head is
	// the text up to its last line that isn't blank, and after the first of the lines
	// after it (the empty one after a final line break counts).
	end, after := len(text), ""
	for end > 0 {
		start := strings.LastIndexByte(text[:end-1], '\n') + 1
		if strings.TrimSpace(text[start:end]) != "" {
			break
		}
		end, after = start, text[start:end]
	}
	if end == 0 {
		return add // only blank lines, or nothing: add takes their place
	}
	head, headEOL := text[:end], ""
	if !strings.HasSuffix(head, "\n") {
		headEOL = eol // the text's last line, which had no line break
	}
	between := eol
	if strings.HasSuffix(after, "\n") {
		between = after
	}
	var b strings.Builder
	b.Grow(len(head) + len(headEOL) + len(between) + len(add))
	b.WriteString(head)
	b.WriteString(headEOL)
	b.WriteString(between)
	b.WriteString(add)
	return b.String()
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
func (s *Store) Edit(ctx context.Context, name, old, new string, by Author) (Saved, error) {
	if old == "" {
		return Saved{}, ErrEmptyOld
	}
	return s.Change(ctx, name, KindEdit, by, func(d Document, latest Version, _ func(int) (Version, error)) (Next, error) {
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
	Text string // the whole lines as they are there; the match alone when they are longer than MaxNear
	Cut  bool   // Text is the first MaxNear bytes of the match, which is longer
}

// MaxNear is the most bytes of text a Near gives, so that a refusal stays short.
const MaxNear = 2000

func (e *EditMissError) Error() string {
	return fmt.Sprintf("the text to replace isn't in %s (%d near matches)", e.Document.ID, len(e.Near))
}

// EditManyError is returned when the text to replace occurs more than once.
type EditManyError struct {
	Document Document
	// Count is how many times it occurs without overlapping (as strings.Count counts):
	// 1 when it repeats only by overlapping itself ("aa" in "aaa"), which is still more
	// than once.
	Count int
	Lines []int // 1-based lines it occurs on, each once, at most MaxManyLines of them
	More  bool  // it occurs on more lines than Lines gives
}

// MaxManyLines is how many lines an EditManyError gives at most, so that a refusal stays
// short however often the text occurs.
const MaxManyLines = 10

func (e *EditManyError) Error() string {
	return fmt.Sprintf("the text to replace occurs %d times in %s", e.Count, e.Document.ID)
}

// ReplaceOnce replaces the one occurrence of old in text with new. It returns an
// *EditManyError when old occurs more than once: counted without overlaps, as the origin
// system counts them, but an occurrence that overlaps the only other one still makes it
// ambiguous (in "aaa", "aa" occurs once without overlap and twice with: which was meant
// can't be known). It returns an *EditMissError when old doesn't occur, with the places
// it occurs but for white space.
//
// Its work is linear in len(text) + len(old), whatever the two hold.
func ReplaceOnce(text, old, new string) (string, error) {
	if old == "" {
		return "", ErrEmptyOld
	}
	at := strings.Index(text, old)
	if at < 0 {
		return "", &EditMissError{Near: nearMatches(text, old, 3)}
	}
	// Any other occurrence starts after at: if it starts before at+len(old) it overlaps.
	if !strings.Contains(text[at+1:], old) {
		return text[:at] + new + text[at+len(old):], nil
	}
	many := &EditManyError{Count: strings.Count(text, old)}
	line, from := 1, 0
	for i := 0; ; {
		j := strings.Index(text[i:], old)
		if j < 0 {
			break
		}
		line += strings.Count(text[from:i+j], "\n")
		from = i + j
		if n := len(many.Lines); n == 0 || many.Lines[n-1] != line {
			if n == MaxManyLines {
				many.More = true
				break
			}
			many.Lines = append(many.Lines, line)
		}
		i += j + len(old)
	}
	return "", many
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
	folded.Grow(len(text))
	offset := make([]int32, 0, len(text))
	space := false
	for i, r := range text {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && folded.Len() > 0 {
			folded.WriteByte(' ')
			offset = append(offset, int32(i))
		}
		space = false
		n := folded.Len()
		folded.WriteRune(r)
		for range folded.Len() - n {
			offset = append(offset, int32(i))
		}
	}
	f := folded.String()
	var near []Near
	for i := 0; len(near) < most; {
		j := strings.Index(f[i:], want)
		if j < 0 {
			break
		}
		start, end := int(offset[i+j]), int(offset[i+j+len(want)-1])
		ls := strings.LastIndexByte(text[:start], '\n') + 1
		le := strings.IndexByte(text[end:], '\n')
		if le < 0 {
			le = len(text)
		} else {
			le += end
		}
		n := Near{Line: lineOf(text, ls), Text: strings.TrimRight(text[ls:le], "\r")}
		if len(n.Text) > MaxNear {
			_, size := utf8.DecodeRuneInString(text[end:])
			n.Line, n.Text = lineOf(text, start), text[start:end+size]
			if len(n.Text) > MaxNear {
				cut := MaxNear
				for !utf8.RuneStart(n.Text[cut]) {
					cut--
				}
				n.Text, n.Cut = n.Text[:cut], true
			}
		}
		near = append(near, n)
		i += j + len(want)
	}
	return near
}

// fold trims s and folds every run of white space in it to one space.
func fold(s string) string { return strings.Join(strings.Fields(s), " ") }

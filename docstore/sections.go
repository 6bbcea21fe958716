package docstore

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/compass-mcp/compass-mcp/mdscan"
)

// A section is a heading's part of a text: from the heading's line to the line before the
// next heading of its level or above, or to the end. Headings are ATX (# FAQ) and setext
// (FAQ, then === or ---), outside code blocks, lists and quotes (package mdscan).

// HeadingAt is a heading of a text, named by its path: its text after those of the headings
// it is under, with "/" between (Launch/Pricing).
type HeadingAt struct {
	Path  string
	Level int
	Line  int
}

// MaxNamedHeadings is how many headings a *NoSectionError names.
const MaxNamedHeadings = 20

// NoSectionError is returned by ReadSection when no heading, or more than one, is the
// section asked for: Headings are the text's first MaxNamedHeadings headings (of Total), or,
// when several match, Matches are those (at most MaxNamedHeadings, of Matched).
type NoSectionError struct {
	Document Document
	Version  int
	Asked    string
	Headings []HeadingAt
	Total    int
	Matches  []HeadingAt
	Matched  int
}

func (e *NoSectionError) Error() string {
	if e.Matched > 1 {
		return fmt.Sprintf("%d sections of %s are %q", e.Matched, e.Document.ID, e.Asked)
	}
	return fmt.Sprintf("%s has no section %q (it has %d headings)", e.Document.ID, e.Asked, e.Total)
}

// ReadSection reads the section of a named document's version (0: the latest) that section
// names: a heading's text, case and white space aside (markup aside too: **FAQ** is FAQ),
// or a path of headings one under another (Launch/Pricing, which may skip levels between).
// A leading "#"s are ignored. The Version has no Text; the HeadingAt is the section's
// heading. It returns what Read returns, and a *NoSectionError.
func (r *Reader) ReadSection(name string, version int, section string) (Document, Version, Part, HeadingAt, error) {
	var (
		d    Document
		v    Version
		part Part
		at   HeadingAt
	)
	b := r.b
	var err error
	if d, version, err = b.namedVersion(name, version); err != nil {
		return d, v, part, at, err
	}
	if v, err = b.version(d.ID, version); err != nil {
		return d, v, part, at, err
	}
	text := v.Text
	v.Text = ""
	var lines LineRange
	at, lines, err = findSection(text, section)
	if ns, ok := err.(*NoSectionError); ok {
		ns.Document, ns.Version = d, v.Number
	}
	if err != nil {
		return d, v, part, at, err
	}
	part, err = Lines(text, lines)
	return d, v, part, at, err
}

// findSection finds the one section of text that asked names, and its lines.
func findSection(text, asked string) (HeadingAt, LineRange, error) {
	want := foldHeading(strings.TrimLeft(strings.TrimSpace(asked), "#"))
	var path []string
	for _, p := range strings.Split(asked, "/") {
		path = append(path, foldHeading(p))
	}
	var (
		stack   []heading // the headings the current one is under, and it
		found   *HeadingAt
		foundAt int // the found heading's level, while its end is looked for
		end     int // the line its section ends at; 0: the text's end
		e       = &NoSectionError{Asked: asked}
	)
	mdscan.Headings(text, func(h mdscan.Heading) bool {
		if found != nil && end == 0 && h.Level <= foundAt {
			end = h.Line - 1
		}
		for len(stack) > 0 && stack[len(stack)-1].level >= h.Level {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, newHeading(h))
		e.Total++
		match := matchesHeading(stack, want, path)
		if match {
			e.Matched++
		}
		if len(e.Headings) < MaxNamedHeadings || match && len(e.Matches) < MaxNamedHeadings {
			at := HeadingAt{Path: pathOf(stack), Level: h.Level, Line: h.Line}
			if len(e.Headings) < MaxNamedHeadings {
				e.Headings = append(e.Headings, at)
			}
			if match && len(e.Matches) < MaxNamedHeadings {
				e.Matches = append(e.Matches, at)
			}
			if match && found == nil {
				found, foundAt = &at, h.Level
			}
		}
		return true
	})
	if e.Matched != 1 {
		return HeadingAt{}, LineRange{}, e
	}
	return *found, LineRange{From: found.Line, To: end}, nil
}

// heading is a heading as sections compare it: its level, its text as read (headingText),
// and that and its text as written, folded.
type heading struct {
	level              int
	plain, fold, pfold string
}

func newHeading(h mdscan.Heading) heading {
	plain := headingText(h.Text)
	return heading{level: h.Level, plain: plain, fold: foldHeading(h.Text), pfold: foldHeading(plain)}
}

func (h heading) is(folded string) bool {
	return folded != "" && (h.fold == folded || h.pfold == folded)
}

func pathOf(stack []heading) string {
	texts := make([]string, len(stack))
	for i, h := range stack {
		texts[i] = h.plain
	}
	return strings.Join(texts, "/")
}

// matchesHeading tells whether the last of stack is the heading asked for: its text is want,
// or path's last part is, and the parts before it are the texts of headings it is under,
// in order.
func matchesHeading(stack []heading, want string, path []string) bool {
	h := stack[len(stack)-1]
	if h.is(want) {
		return true
	}
	if len(path) < 2 || !h.is(path[len(path)-1]) {
		return false
	}
	rest := path[:len(path)-1]
	for i := len(stack) - 2; i >= 0 && len(rest) > 0; i-- {
		if stack[i].is(rest[len(rest)-1]) {
			rest = rest[:len(rest)-1]
		}
	}
	return len(rest) == 0
}

func foldHeading(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

var (
	markdownLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	wikiLink     = regexp.MustCompile(`\[\[([^\]|]*)(?:\|([^\]]*))?\]\]`)
	markup       = strings.NewReplacer("**", "", "__", "", "*", "", "_", "", "`", "", "~~", "", `\`, "")
)

// headingText is a heading's text as read, its inline markup left out: [[Title|shown]]
// is shown, [text](url) is text, **FAQ** is FAQ. Only its first 1,000 bytes are read.
func headingText(s string) string {
	if len(s) > 1000 {
		s = strings.ToValidUTF8(s[:1000], "")
	}
	if !strings.ContainsAny(s, "[*_`~\\") {
		return s
	}
	s = wikiLink.ReplaceAllStringFunc(s, func(m string) string {
		g := wikiLink.FindStringSubmatch(m)
		if strings.TrimSpace(g[2]) != "" {
			return g[2]
		}
		return g[1]
	})
	s = markdownLink.ReplaceAllString(s, "$1")
	return strings.Join(strings.Fields(markup.Replace(s)), " ")
}

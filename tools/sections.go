package tools

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// section answers read_document with section: that heading's lines of a version, numbered
// as lines numbers them.
func (s *Server) section(r *docstore.Reader, name string, version int, section string) (string, error) {
	d, v, part, at, err := r.ReadSection(name, version, section)
	var none *docstore.NoSectionError
	if errors.As(err, &none) {
		return "", sectionRefusal(none)
	} else if err != nil {
		return "", s.explain(err, name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s · section %s, lines %d-%d of %d\n\n", s.versionHead(r.Names(), d, v), strconv.Quote(at.Path), part.First, part.Last, part.Total)
	numbered(&b, part)
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// sectionRefusal says why no one section is the one asked for, naming the headings there are.
func sectionRefusal(e *docstore.NoSectionError) error {
	list := func(hs []docstore.HeadingAt) string {
		out := make([]string, len(hs))
		for i, h := range hs {
			out[i] = fmt.Sprintf("%s (line %d)", strconv.Quote(h.Path), h.Line)
		}
		return strings.Join(out, ", ")
	}
	switch {
	case e.Matched > 1:
		more := ""
		if e.Matched > len(e.Matches) {
			more = fmt.Sprintf(" and %d more", e.Matched-len(e.Matches))
		}
		return refusef("%q is %d sections of %s at version %d: %s%s. Give the path of the one you want, or read its lines.", short(e.Asked), e.Matched, e.Document.Title, e.Version, list(e.Matches), more)
	case e.Total == 0:
		return refusef("%s has no headings at version %d, so no section %q: read it whole, or some of its lines (lines).", e.Document.Title, e.Version, short(e.Asked))
	}
	which := "Its headings"
	if e.Total > len(e.Headings) {
		which = fmt.Sprintf("Its first %d headings of %d", len(e.Headings), e.Total)
	}
	return refusef("%s has no section %q at version %d. %s: %s. Give one of them, or its path.", e.Document.Title, short(e.Asked), e.Version, which, list(e.Headings))
}

// numbered writes part's lines, each after its number.
func numbered(b *strings.Builder, part docstore.Part) {
	width := len(strconv.Itoa(part.Last))
	for i, line := range part.Lines {
		fmt.Fprintf(b, "%*d", width, part.First+i)
		if line != "" {
			b.WriteString("\t" + line)
		}
		b.WriteByte('\n')
	}
}

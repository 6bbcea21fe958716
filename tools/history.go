package tools

import (
	"fmt"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// changesSince answers read_document with since: who made each version after it, and the
// unified diff from it to the latest.
func (s *Server) changesSince(r *docstore.Reader, name string, since int) (string, error) {
	if since < 1 {
		return "", refusef("read_document's since is a version number, 1 or more; it got %d.", since)
	}
	d, vs, diff, err := r.Since(name, since)
	if err != nil {
		return "", s.explain(err, name)
	}
	if since == d.Version {
		// The model has this version already: no link, no more than it needs (under 100
		// bytes whatever the title).
		return fmt.Sprintf("%s: unchanged since version %d.", cutBytes(strings.Join(strings.Fields(d.Title), " "), 60), d.Version), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s · changes since version %d, now version %d:\n", s.link(d), since, d.Version)
	names := r.Names()
	for _, v := range vs {
		fmt.Fprintf(&b, "- version %d · %s · by %s %s · %s\n", v.Number, v.Kind, by(names, v.Author), when(v.At), lines(v.Added, v.Removed))
	}
	if diff == "" {
		b.WriteString("\nThe text is the same as in version " + fmt.Sprint(since) + ".")
	} else {
		b.WriteString("\n" + quoteFenced("diff", strings.TrimSuffix(diff, "\n")))
	}
	return b.String(), nil
}

// clashAnswer refuses a write from an old version whose changes clash with newer ones,
// showing the lines of both, so the model can redo its change on the latest text.
func (s *Server) clashAnswer(c *docstore.ClashError) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Not saved: %s has moved on to version %d since your version %d, and the same lines were changed there and in your text, so nobody's work is lost by guessing.", s.link(c.Document), c.Document.Version, c.Base)
	for i, k := range c.Conflicts {
		if i == 5 {
			fmt.Fprintf(&b, "\n\n…and %d more clashing places.", len(c.Conflicts)-5)
			break
		}
		fmt.Fprintf(&b, "\n\nVersion %d has, at %s:\n%s\nYour text has, at %s:\n%s", c.Document.Version, Span(k.TheirsStart, len(k.Theirs)), quoteBlock(strings.Join(k.Theirs, "\n")), Span(k.MineStart, len(k.Mine)), quoteBlock(strings.Join(k.Mine, "\n")))
	}
	fmt.Fprintf(&b, "\n\nRead version %d (read_document, or with since: %d to see only what changed), make your change to it, and write again with version: %d; or change just your part with edit_document.", c.Document.Version, c.Base, c.Document.Version)
	return refusal(b.String())
}

// Span names lines n to n+count-1: "line 3", "lines 3-5", or "before line 3" when empty.
func Span(n, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("before line %d (nothing)", n)
	case 1:
		return fmt.Sprintf("line %d", n)
	}
	return fmt.Sprintf("lines %d-%d", n, n+count-1)
}

// quoteFenced fences text as a code block of the given language.
func quoteFenced(lang, text string) string {
	q := quoteBlock(text)
	i := strings.IndexByte(q, '\n')
	return q[:i] + lang + q[i:]
}

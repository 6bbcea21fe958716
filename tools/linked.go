package tools

import (
	"fmt"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/mdscan"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// MaxLinksShown is how many documents of each kind read_document's links line names; past
// them it counts.
const MaxLinksShown = 24

// afterText is what read_document shows after a latest version's whole text, each part a
// line of its own: the document's links. (Other lines, such as open proposals, go after
// these, here.)
func (s *Server) afterText(d docstore.Document, ls docstore.Links) []string {
	var lines []string
	var parts []string
	if ls.ToTotal > 0 {
		parts = append(parts, "Links to: "+s.links(ls.To, ls.ToTotal, "list_documents linked_from="+d.ID))
	}
	if ls.FromTotal > 0 {
		parts = append(parts, "Linked from: "+s.links(ls.From, ls.FromTotal, "list_documents links_to="+d.ID))
	}
	if len(parts) > 0 {
		lines = append(lines, strings.Join(parts, " · "))
	}
	if ls.BrokenTotal > 0 {
		var missing, deleted []string
		for _, b := range ls.Broken {
			if b.Deleted != nil {
				deleted = append(deleted, s.link(*b.Deleted))
			} else {
				missing = append(missing, brokenName(b))
			}
		}
		var says []string
		if len(missing) > 0 {
			says = append(says, "no document here is "+strings.Join(missing, ", "))
		}
		if len(deleted) > 0 {
			says = append(says, "deleted: "+strings.Join(deleted, ", "))
		}
		line := "Broken links: " + strings.Join(says, "; ")
		if more := ls.BrokenTotal - len(ls.Broken); more > 0 {
			line += fmt.Sprintf(" and %d more (list_documents links=broken)", more)
		}
		lines = append(lines, line)
	}
	return lines
}

// links names docs, and how many more of total there are, and the call that lists them.
func (s *Server) links(docs []docstore.Document, total int, more string) string {
	names := make([]string, len(docs))
	for i, d := range docs {
		names[i] = s.link(d)
	}
	out := strings.Join(names, ", ")
	switch n := total - len(docs); {
	case n > 0 && more != "":
		out += fmt.Sprintf(" and %d more (%s)", n, more)
	case n > 0:
		out += fmt.Sprintf(" and %d more", n)
	}
	return out
}

// brokenName is how a link to no document is named: [[Title]], or the id it names.
func brokenName(b docstore.BrokenLink) string {
	if b.ID != "" {
		return "document " + b.ID
	}
	return "[[" + b.Title + "]]"
}

// linkedDocuments answers list_documents with linked_from, links_to or links.
func (s *Server) linkedDocuments(r *docstore.Reader, a *listDocumentsArgs, limit int) (string, error) {
	given := 0
	for _, v := range []string{a.Query, a.LinkedFrom, a.LinksTo, a.Links} {
		if strings.TrimSpace(v) != "" {
			given++
		}
	}
	if given > 1 {
		return "", refusef("list_documents takes one of query, linked_from, links_to and links at a time.")
	}
	switch {
	case a.LinkedFrom != "":
		return s.neighbours(r, a.LinkedFrom, limit, true)
	case a.LinksTo != "":
		return s.neighbours(r, a.LinksTo, limit, false)
	}
	switch strings.ToLower(strings.TrimSpace(a.Links)) {
	case "none", "unlinked", "orphans":
		return s.unlinked(r, limit)
	case "broken":
		return s.brokenLinks(r, limit)
	}
	return "", refusef("list_documents's links is none (the documents nothing links to) or broken (the links to no document); it got %q.", short(a.Links))
}

// neighbours lists the documents name links to (out), or those that link to it.
func (s *Server) neighbours(r *docstore.Reader, name string, limit int, out bool) (string, error) {
	if id, ok := mdscan.DocumentID(name); ok {
		name = id
	}
	d, err := r.Find(name)
	if err != nil {
		return "", s.explain(err, name)
	}
	ls, err := r.Links(d, limit)
	if err != nil {
		return "", err
	}
	docs, total := ls.From, ls.FromTotal
	head := fmt.Sprintf("Documents that link to %s", s.link(d))
	order := ", oldest made first"
	if out {
		docs, total = ls.To, ls.ToTotal
		head, order = fmt.Sprintf("Documents %s links to", s.link(d)), ""
	}
	var b strings.Builder
	switch {
	case total == 0 && out:
		fmt.Fprintf(&b, "%s links to no other document.", s.link(d))
	case total == 0:
		fmt.Fprintf(&b, "Nothing here links to %s.", s.link(d))
	case len(docs) < total:
		fmt.Fprintf(&b, "%s (%d of %d)%s:\n", head, len(docs), total, order)
	default:
		fmt.Fprintf(&b, "%s (%d)%s:\n", head, total, order)
	}
	s.rows(&b, r.Names(), docs)
	if len(docs) < total {
		fmt.Fprintf(&b, "%d more: call list_documents with a larger limit (at most %d).\n", total-len(docs), MaxListLimit)
	}
	if out && ls.BrokenTotal > 0 {
		lines := s.afterText(d, docstore.Links{Broken: ls.Broken, BrokenTotal: ls.BrokenTotal})
		b.WriteString("\n" + strings.Join(lines, "\n"))
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// rows lists docs as list_documents does, one a line with how it opens under it.
func (s *Server) rows(b *strings.Builder, names spaces.Names, docs []docstore.Document) {
	for _, d := range docs {
		fmt.Fprintf(b, "- %s · id %s · version %d · %d bytes · saved by %s %s\n", s.link(d), d.ID, d.Version, d.Bytes, by(names, d.Author), when(d.Saved))
		opens := gist(d.Opens, 100)
		if opens == "" {
			opens = "(empty)"
		}
		fmt.Fprintf(b, "  opens: %s\n", opens)
	}
}

func (s *Server) unlinked(r *docstore.Reader, limit int) (string, error) {
	docs, total, err := r.Unlinked(limit)
	if err != nil {
		return "", err
	}
	if total == 0 {
		return "Every document here is linked from another (or there are none yet).", nil
	}
	var b strings.Builder
	if len(docs) < total {
		fmt.Fprintf(&b, "Documents nothing here links to (%d of %d), latest saved first:\n", len(docs), total)
	} else {
		fmt.Fprintf(&b, "Documents nothing here links to (%d), latest saved first:\n", total)
	}
	s.rows(&b, r.Names(), docs)
	if len(docs) < total {
		fmt.Fprintf(&b, "%d more: call list_documents with a larger limit (at most %d).\n", total-len(docs), MaxListLimit)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func (s *Server) brokenLinks(r *docstore.Reader, limit int) (string, error) {
	groups, total, err := r.BrokenLinks(limit)
	if err != nil {
		return "", err
	}
	if total == 0 {
		return "No broken links here: every link names a document of this space.", nil
	}
	var b strings.Builder
	if len(groups) < total {
		fmt.Fprintf(&b, "Broken links here (%d of %d):\n", len(groups), total)
	} else {
		fmt.Fprintf(&b, "Broken links here (%d):\n", total)
	}
	for _, g := range groups {
		what := brokenName(g.BrokenLink)
		if g.Deleted != nil {
			what = "deleted " + s.link(*g.Deleted)
		}
		fmt.Fprintf(&b, "- %s, in %s\n", what, s.links(g.In, g.InTotal, ""))
	}
	if len(groups) < total {
		fmt.Fprintf(&b, "%d more: call list_documents with a larger limit (at most %d).\n", total-len(groups), MaxListLimit)
	}
	b.WriteString("A [[Title]] is made whole by making a document of that title (write_document).")
	return b.String(), nil
}

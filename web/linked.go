package web

import (
	"context"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// The page's side of links between documents: a version rendered with its [[links]]
// resolved as they are now, a document's backlinks and broken links under it, and
// /document/{id}/links with all of them, the backlinks a page at a time.

// backlinksShown is how many backlinks (and broken links) the document's page lists under
// the text; /document/{id}/links lists the rest.
const backlinksShown = 20

// linksPageSize is how many backlinks /document/{id}/links shows a page.
const linksPageSize = 100

// versionHTML is the HTML of version v of document id in space, its [[links]] resolved
// now: to targets, what they name (docstore.Reading.Targets).
func (s *Site) versionHTML(ctx context.Context, space, id string, v docstore.Version, text string, targets map[string]docstore.Target) (template.HTML, error) {
	return s.html.linked(ctx, id, v.Number, text, &linkView{space: space, targets: targets})
}

// linkRow is a document a link leads to (or from), or a broken link: where to go, what to
// show, and why it is broken.
type linkRow struct {
	Href, Title, Why string
}

// linksView is what the page shows of a document's links.
type linksView struct {
	Doc                             docstore.Document
	To, From, Broken                []linkRow
	ToTotal, FromTotal, BrokenTotal int
	MoreTo, MoreFrom, MoreBroken    bool
	Next                            string // the backlinks' next page, on /links
}

func docRows(docs []docstore.Document) []linkRow {
	out := make([]linkRow, len(docs))
	for i, d := range docs {
		out[i] = linkRow{Href: "/document/" + d.ID, Title: d.Title}
	}
	return out
}

// linksOf is the view of ls, links of d in space.
func linksOf(d docstore.Document, space string, ls docstore.Links) *linksView {
	v := &linksView{Doc: d, To: docRows(ls.To), From: docRows(ls.From), ToTotal: ls.ToTotal, FromTotal: ls.FromTotal, BrokenTotal: ls.BrokenTotal}
	for _, b := range ls.Broken {
		switch {
		case b.Deleted != nil:
			v.Broken = append(v.Broken, linkRow{Href: "/deleted?" + url.Values{"space": {space}}.Encode(), Title: b.Deleted.Title, Why: "deleted"})
		case b.ID != "":
			v.Broken = append(v.Broken, linkRow{Title: "document " + b.ID, Why: "no such document in this space"})
		default:
			v.Broken = append(v.Broken, linkRow{Href: "/new?" + url.Values{"space": {space}, "title": {b.Title}}.Encode(), Title: "[[" + b.Title + "]]", Why: "no document has this title yet: make it"})
		}
	}
	v.MoreTo, v.MoreFrom, v.MoreBroken = len(v.To) < v.ToTotal, len(v.From) < v.FromTotal, len(v.Broken) < v.BrokenTotal
	return v
}

// links is /document/{id}/links: what the document links to, what links to it (a page of
// linksPageSize at a time, ?after=), and its broken links.
func (s *Site) links(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	after := strings.TrimSpace(r.URL.Query().Get("after"))
	var (
		d    docstore.Document
		ls   docstore.Links
		next string
		me   string
	)
	store, err := s.viewDoc(r, p, id, func(rd *docstore.Reader) (err error) {
		if d, err = findByID(rd, id); err != nil {
			return err
		}
		if ls, err = rd.Links(d, docstore.MaxLinks); err != nil {
			return err
		}
		var (
			from  []docstore.Document
			total int
		)
		if _, from, total, next, err = rd.Backlinks(id, after, linksPageSize); err != nil {
			return err
		}
		ls.From, ls.FromTotal = from, total
		me = rd.Names().Show(spaces.Person(p.Person))
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := linksOf(d, store.Space(), ls)
	v.Next = next
	pg := p.in(store.Space(), "Links of "+d.Title, "docs")
	pg.Data = v
	pg.Who = me
	s.render(w, r, http.StatusOK, "links", pg)
}

package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/doclink"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// PageSize is how many documents one page of the list shows.
const PageSize = 50

type docRow struct {
	ID, Title, By, Opens string
	Version, Bytes       int
	Saved                time.Time
	Lines                []string // a search's matching lines, "12: the line"
}

type listView struct {
	Docs         []docRow
	Total        int
	Next, Query  string
	First        bool
	NoneFound    bool
	Searched     bool
	DeletedCount int
}

func rows(n spaces.Names, docs []docstore.Document) []docRow {
	out := make([]docRow, len(docs))
	for i, d := range docs {
		out[i] = docRow{ID: d.ID, Title: d.Title, By: byWhom(n, d.Author), Opens: gist(d.Opens, 140), Version: d.Version, Bytes: d.Bytes, Saved: d.Saved}
	}
	return out
}

func (s *Site) list(w http.ResponseWriter, r *http.Request, p who) {
	v := listView{Query: strings.TrimSpace(r.URL.Query().Get("q")), First: r.URL.Query().Get("after") == ""}
	var (
		docs  []docstore.Document
		lines [][]string
		err   error
	)
	if v.Query != "" {
		v.Searched = true
		docs, lines, err = s.search(v.Query)
	} else {
		docs, v.Next, v.Total, err = s.docs.Recent(r.URL.Query().Get("after"), PageSize)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v.NoneFound = len(docs) == 0
	pg := page{Title: "Documents", Nav: "docs", Data: &v}
	s.names(func(n spaces.Names) {
		v.Docs = rows(n, docs)
		pg.Who = n.Show(spaces.Person(p.Person))
	})
	for i := range lines {
		v.Docs[i].Lines = lines[i]
	}
	s.render(w, r, http.StatusOK, "list", pg)
}

// search finds documents as the tools' search does (every word and "quoted phrase", in the
// title or the text, best first), each with its matching lines; a link or an id finds its
// document.
func (s *Site) search(q string) ([]docstore.Document, [][]string, error) {
	if id, ok := doclink.ID(q); ok {
		q = id
	}
	if d, err := s.byID(strings.ToUpper(q)); err == nil {
		return []docstore.Document{d}, [][]string{nil}, nil
	}
	res, err := s.docs.Search(q, PageSize)
	if errors.Is(err, docstore.ErrQuery) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	docs := make([]docstore.Document, len(res.Found))
	lines := make([][]string, len(res.Found))
	for i, f := range res.Found {
		docs[i] = f.Document
		for _, l := range f.Hit.Lines {
			lines[i] = append(lines[i], fmt.Sprintf("%d: %s", l.Number, l.Text))
		}
	}
	return docs, lines, nil
}

func (s *Site) deleted(w http.ResponseWriter, r *http.Request, p who) {
	docs, err := s.docs.Deleted()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	type row struct {
		docRow
		DeletedBy string
		DeletedAt time.Time
	}
	var out []row
	pg := page{Title: "Deleted documents", Nav: "deleted"}
	s.names(func(n spaces.Names) {
		for i, d := range docs {
			out = append(out, row{docRow: rows(n, docs[i:i+1])[0], DeletedBy: byWhom(n, d.Deleted.By), DeletedAt: d.Deleted.At})
		}
		pg.Who = n.Show(spaces.Person(p.Person))
	})
	pg.Data = out
	s.render(w, r, http.StatusOK, "deleted", pg)
}

type docView struct {
	Doc      docstore.Document
	Number   int
	Title    string // the version's title
	Kind     docstore.Kind
	By       string
	At       time.Time
	HTML     any
	Latest   bool
	Notice   string
	Previous int // the version before, for "what changed": 0 when none
}

// document shows the latest version, and follows new ones as they are saved.
func (s *Site) document(w http.ResponseWriter, r *http.Request, p who) {
	s.showVersion(w, r, p, r.PathValue("id"), 0)
}

func (s *Site) version(w http.ResponseWriter, r *http.Request, p who) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		s.problem(w, r, http.StatusNotFound, "No such version", "A version is a number, 1 or more.")
		return
	}
	s.showVersion(w, r, p, r.PathValue("id"), n)
}

func (s *Site) showVersion(w http.ResponseWriter, r *http.Request, p who, id string, n int) {
	d, v, err := s.docs.Read(id, n)
	if err == nil && d.ID != id {
		// Read also names documents by title; an address names one by its id only.
		err = docstore.ErrNotFound
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	view := docView{Doc: d, Number: v.Number, Title: v.Title, Kind: v.Kind, At: v.At, HTML: s.html.version(d.ID, v.Number, v.Text), Latest: v.Number == d.Version, Notice: r.URL.Query().Get("saved"), Previous: v.Number - 1}
	pg := page{Title: d.Title, Nav: "docs", Data: &view}
	s.names(func(n spaces.Names) {
		view.By = byWhom(n, v.Author)
		pg.Who = n.Show(spaces.Person(p.Person))
	})
	if view.Latest {
		pg.Live = &live{Doc: d.ID, Version: d.Version}
	}
	s.render(w, r, http.StatusOK, "document", pg)
}

type historyRow struct {
	Number, Added, Removed int
	Kind                   docstore.Kind
	Title, By              string
	At                     time.Time
	Renamed                bool
}

func (s *Site) history(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	d, vs, err := s.docs.History(id)
	if err == nil && d.ID != id {
		err = docstore.ErrNotFound
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]historyRow, len(vs))
	pg := page{Title: "History of " + d.Title, Nav: "docs", Live: &live{Doc: d.ID, Version: d.Version}}
	s.names(func(n spaces.Names) {
		for i, v := range vs { // newest first
			out[i] = historyRow{Number: v.Number, Added: v.Added, Removed: v.Removed, Kind: v.Kind, Title: v.Title, By: byWhom(n, v.Author), At: v.At, Renamed: i+1 < len(vs) && vs[i+1].Title != v.Title}
		}
		pg.Who = n.Show(spaces.Person(p.Person))
	})
	pg.Data = struct {
		Doc      docstore.Document
		Versions []historyRow
	}{d, out}
	s.render(w, r, http.StatusOK, "history", pg)
}

// byID finds the document an address names: by its id only, never by title words, so
// that /document/launch/delete deletes nothing.
func (s *Site) byID(id string) (docstore.Document, error) {
	d, err := s.docs.Find(id)
	if err == nil && d.ID != id {
		err = docstore.ErrNotFound
	}
	return d, err
}

func (s *Site) rename(w http.ResponseWriter, r *http.Request, p who) {
	if _, err := s.byID(r.PathValue("id")); err != nil {
		s.fail(w, r, err)
		return
	}
	saved, err := s.docs.Rename(r.PathValue("id"), r.FormValue("title"), me(p))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.afterSave(w, r, saved, "renamed")
}

func (s *Site) restore(w http.ResponseWriter, r *http.Request, p who) {
	n, err := strconv.Atoi(r.FormValue("n"))
	if err != nil || n < 1 {
		s.problem(w, r, http.StatusBadRequest, "Nothing was restored", "Restore needs the number of a version.")
		return
	}
	if _, err := s.byID(r.PathValue("id")); err != nil {
		s.fail(w, r, err)
		return
	}
	saved, err := s.docs.Restore(r.PathValue("id"), n, me(p))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.afterSave(w, r, saved, "restored version "+strconv.Itoa(n))
}

func (s *Site) remove(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	if _, err := s.byID(id); err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := s.docs.Delete(id, me(p))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/deleted?gone="+url.QueryEscape(d.Title), http.StatusSeeOther)
}

func (s *Site) undelete(w http.ResponseWriter, r *http.Request, p who) {
	d, err := s.docs.Undelete(r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/document/"+d.ID, http.StatusSeeOther)
}

// afterSave goes to the document, saying what the save did.
func (s *Site) afterSave(w http.ResponseWriter, r *http.Request, saved docstore.Saved, what string) {
	note := what
	if saved.Unchanged {
		note = "nothing changed"
	}
	http.Redirect(w, r, "/document/"+saved.Document.ID+"?saved="+url.QueryEscape(note), http.StatusSeeOther)
}

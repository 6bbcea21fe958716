package web

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/mdscan"
	"github.com/compass-mcp/compass-mcp/search"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// PageSize is how many documents one page of the list shows.
const PageSize = 50

type docRow struct {
	ID, Title, By, Opens string
	Version, Bytes       int
	Open, Comments       int // its open changes and comments, marked in the list
	Saved                time.Time
	Lines                []template.HTML // a search's matching lines, "12: the line", its words found marked
}

type listView struct {
	Docs         []docRow
	Total        int
	Next, Query  string
	First        bool
	NoneFound    bool
	Searched     bool
	DeletedCount int
	// Fixed are the query's words no document had, each with the nearest word searched
	// for instead (the tools' search says the same in its answer).
	Fixed []fixedWord
	// Unquoted: no document had the quoted phrases, so these are their words' results.
	Unquoted bool
	Meaning  meaningView // the semantic tier, for the agents' searches of this space
}

// fixedWord is a word of a query that no document had, and the word searched for instead.
type fixedWord struct{ Was, Now string }

func rows(n spaces.Names, docs []docstore.Document) []docRow {
	out := make([]docRow, len(docs))
	for i, d := range docs {
		out[i] = docRow{ID: d.ID, Title: d.Title, By: byWhom(n, d.Author), Opens: gist(preview(d.Opens, d.Title), 140), Version: d.Version, Bytes: d.Bytes, Saved: d.Saved}
		if d.Review != nil {
			out[i].Open, out[i].Comments = d.Review.Open, d.Review.Unresolved
		}
	}
	return out
}

func (s *Site) list(w http.ResponseWriter, r *http.Request, p who) {
	sp, ok := s.space(w, r, p)
	if !ok {
		return
	}
	v := listView{Query: strings.TrimSpace(r.URL.Query().Get("q")), First: r.URL.Query().Get("after") == ""}
	v.Searched = v.Query != ""
	v.Meaning = s.meaning(sp)
	pg := p.in(sp, "Documents", "docs")
	pg.Data = &v
	// A link or an id searched for finds its document in whichever of the person's spaces
	// holds it, as opening the link would.
	var linked []docstore.Document
	if v.Searched {
		if id, ok := linkedID(v.Query); ok {
			if _, d, err := s.byID(r, p, id); err == nil {
				linked = []docstore.Document{d}
			}
		}
	}
	err := docstore.New(s.db, sp).View(r.Context(), func(rd *docstore.Reader) error {
		var (
			docs  = linked
			lines [][]template.HTML
			err   error
		)
		switch {
		case linked != nil:
			lines = [][]template.HTML{nil}
		case v.Searched:
			docs, lines, v.Fixed, v.Unquoted, err = s.search(rd, v.Query)
		default:
			docs, v.Next, v.Total, err = rd.Recent(r.URL.Query().Get("after"), PageSize)
		}
		if err != nil {
			return err
		}
		if err := p.countWaiting(rd); err != nil {
			return err
		}
		n := rd.Names()
		v.Docs, v.NoneFound = rows(n, docs), len(docs) == 0
		for i := range lines {
			v.Docs[i].Lines = lines[i]
		}
		pg.Who = n.Show(spaces.Person(p.Person))
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "list", pg)
}

// linkedID is the id of the document q links to (a page's URL, a compass:// URI, a path
// /document/ID, a bare id), if q is such a link.
func linkedID(q string) (string, bool) {
	if id, ok := mdscan.DocumentID(q); ok {
		return id, true
	}
	return pathID(q)
}

// search finds documents of rd's space as the tools' search does (every word and "quoted
// phrase", in the title or the text, best first), each with its matching lines, and the
// words it searched for instead of those no document has (a typo's nearest word);
// unquoted when no document had its quoted phrases, and these are their words' results.
func (s *Site) search(rd *docstore.Reader, q string) (docs []docstore.Document, lines [][]template.HTML, fixed []fixedWord, unquoted bool, err error) {
	res, err := rd.Search(q, PageSize)
	if errors.Is(err, docstore.ErrQuery) {
		return nil, nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, nil, false, err
	}
	docs = make([]docstore.Document, len(res.Found))
	lines = make([][]template.HTML, len(res.Found))
	texts := make([]string, 0, len(res.Found))
	words := wordsOf(res.Query)
	for i, f := range res.Found {
		docs[i] = f.Document
		for _, l := range f.Hit.Lines {
			lines[i] = append(lines[i], marked(words, l.Number, l.Text))
			texts = append(texts, l.Text)
		}
	}
	for _, f := range res.Query.Fixes {
		// The key is a stem; a line found shows the word as written. Titles too: a
		// document found by its title alone has no line.
		fixed = append(fixed, fixedWord{Was: f.Word, Now: search.Word(f.Key, append(texts, titles(docs)...)...)})
	}
	return docs, lines, fixed, res.Unquoted, nil
}

func titles(docs []docstore.Document) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Title
	}
	return out
}

// wordsOf is the set of a query's words, folded as search folds them.
func wordsOf(q search.Query) map[string]bool {
	words := map[string]bool{}
	for _, t := range q.Terms {
		for _, tok := range t.Tokens {
			words[tok] = true
		}
	}
	return words
}

// marked is a line a search found, as the list shows it: its number, then its text,
// escaped, with each word of words in <mark>. A word is a run of letters, digits and
// marks, folded as search folds it; a run search reads as several words (Han characters
// are a word each) is marked a character at a time.
func marked(words map[string]bool, n int, line string) template.HTML {
	var b strings.Builder
	fmt.Fprintf(&b, "%d: ", n)
	done := 0
	mark := func(start, end int) {
		b.WriteString(template.HTMLEscapeString(line[done:start]))
		b.WriteString("<mark>" + template.HTMLEscapeString(line[start:end]) + "</mark>")
		done = end
	}
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) }
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRuneInString(line[i:])
		if !isWord(r) {
			i += size
			continue
		}
		j := i + size
		for j < len(line) {
			r, size := utf8.DecodeRuneInString(line[j:])
			if !isWord(r) {
				break
			}
			j += size
		}
		if toks := search.Tokens(line[i:j]); len(toks) == 1 {
			if words[toks[0]] {
				mark(i, j)
			}
		} else {
			for k := i; k < j; {
				_, size := utf8.DecodeRuneInString(line[k:])
				if toks := search.Tokens(line[k : k+size]); len(toks) == 1 && words[toks[0]] {
					mark(k, k+size)
				}
				k += size
			}
		}
		i = j
	}
	b.WriteString(template.HTMLEscapeString(line[done:]))
	return template.HTML(b.String())
}

func (s *Site) deleted(w http.ResponseWriter, r *http.Request, p who) {
	sp, ok := s.space(w, r, p)
	if !ok {
		return
	}
	type row struct {
		docRow
		DeletedBy string
		DeletedAt time.Time
	}
	var out []row
	pg := p.in(sp, "Deleted documents", "deleted")
	err := docstore.New(s.db, sp).View(r.Context(), func(rd *docstore.Reader) error {
		docs, err := rd.Deleted()
		if err != nil {
			return err
		}
		out = nil
		n := rd.Names()
		for i, d := range docs {
			out = append(out, row{docRow: rows(n, docs[i:i+1])[0], DeletedBy: byWhom(n, d.Deleted.By), DeletedAt: d.Deleted.At})
		}
		pg.Who = n.Show(spaces.Person(p.Person))
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	pg.Data = out
	s.render(w, r, http.StatusOK, "deleted", pg)
}

type docView struct {
	Doc         docstore.Document
	Number      int
	Title       string // the version's title
	Kind        docstore.Kind
	By          string
	Via         string   // the door it came in by (docstore.Author.Via)
	Why         *whyView // the conversation of its space it was made in (a version's own page)
	At          time.Time
	HTML        any
	Latest      bool
	Notice      string
	Previous    int          // the version before, for "what changed": 0 when none
	Banner      *banner      // the open proposals (proposals.go); nil when none
	Comments    int          // open comments (comments.go)
	Threads     []lineThread // the open comments shown beside their lines (linecomments.go)
	CommentsCut int          // open comments not in Threads
	Links       *linksView   // the latest version's: its backlinks and broken links
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
	var (
		d       docstore.Document
		v       docstore.Version
		ls      docstore.Links
		targets map[string]docstore.Target
		names   spaces.Names
		props   []docstore.Proposal
		cr      docstore.CommentsRead
	)
	// What the page shows, read in one snapshot: the document, the version, the latest's
	// links, what its [[Titles]] name, its banner's proposals, and who is who.
	store, err := s.viewDoc(r, p, id, func(rd *docstore.Reader) (err error) {
		ls, targets, props = docstore.Links{}, nil, nil
		if d, v, err = rd.Read(id, n); err != nil {
			return err
		}
		if d.ID != id {
			// Read also names documents by title; an address names one by its id only.
			return docstore.ErrNotFound
		}
		if v.Number == d.Version {
			if ls, err = rd.Links(d, backlinksShown); err != nil {
				return err
			}
			if props, err = bannerProposals(rd, d); err != nil {
				return err
			}
			cr = docstore.CommentsRead{}
			if d.Review != nil && d.Review.Unresolved > 0 {
				if cr, err = rd.Comments(d.ID, v.Number, DocComments, DocReplies); err != nil {
					return err
				}
			}
		}
		if targets, err = rd.Targets(d.ID, docstore.WikiTitles(v.Text)); err != nil {
			return err
		}
		names = rd.Names()
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	html, err := s.versionHTML(r.Context(), store.Space(), d.ID, v, untitled(v.Text, v.Title), targets)
	if err != nil {
		if r.Context().Err() == nil {
			s.fail(w, r, err)
		}
		return // else the browser went away while it was rendered: nobody to answer
	}
	view := docView{Doc: d, Number: v.Number, Title: v.Title, Kind: v.Kind, At: v.At, HTML: html, Latest: v.Number == d.Version, Notice: r.URL.Query().Get("saved"), Previous: v.Number - 1}
	if d.Review != nil {
		view.Comments = d.Review.Unresolved
	}
	if view.Latest {
		view.Links = linksOf(d, store.Space(), ls)
	}
	pg := p.in(store.Space(), d.Title, "docs")
	pg.Data = &view
	if html != "" {
		view.HTML, pg.body = bodyMark, html // render writes it (pages.go)
	}
	view.By, view.Via = byWhom(names, v.Author), v.Author.Via()
	// A version's own page (not the document's) says why an agent's version was made: a
	// read of the space's conversations, made only there.
	if r.PathValue("n") != "" && strings.HasPrefix(v.Author.By, "agent:") {
		view.Why = s.whyOf(r, store.Space(), d.ID, v.Number, names)
	}
	pg.Who = names.Show(spaces.Person(p.Person))
	if view.Latest {
		pg.Live = &live{Doc: d.ID, Version: d.Version, Proposals: proposalsOf(d)}
		view.Banner = bannerOf(names, d, props)
		view.Threads = lineThreads(names, spaces.Person(p.Person).String(), cr)
		view.CommentsCut = max(view.Comments-len(view.Threads), 0)
		pg.Script = "doccomments.js"
	}
	s.render(w, r, http.StatusOK, "document", pg)
}

type historyRow struct {
	Number, Added, Removed int
	Kind                   docstore.Kind
	Title, By, Via         string
	At                     time.Time
	Renamed                bool
}

func (s *Site) history(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	before := max(atoiOr(r.URL.Query().Get("before"), 0), 0)
	var (
		d   docstore.Document
		out []historyRow
		me  string
	)
	store, err := s.viewDoc(r, p, id, func(rd *docstore.Reader) error {
		// A page's versions, and the one below them: whether the last was a rename.
		got, vs, err := rd.LogPage(id, before, HistoryPage+1) // headers only: the page shows no text
		if err != nil {
			return err
		}
		if d = got; d.ID != id {
			return docstore.ErrNotFound
		}
		n := rd.Names()
		shown := vs[:min(len(vs), HistoryPage)]
		out = make([]historyRow, len(shown))
		for i, v := range shown { // newest first
			out[i] = historyRow{Number: v.Number, Added: v.Added, Removed: v.Removed, Kind: v.Kind, Title: v.Title, By: byWhom(n, v.Author), Via: v.Author.Via(), At: v.At, Renamed: i+1 < len(vs) && vs[i+1].Title != v.Title}
		}
		me = n.Show(spaces.Person(p.Person))
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := historyView{Doc: d, Versions: out}
	if len(out) > 0 {
		if top := out[0].Number; top < d.Version {
			v.Newer = min(top+HistoryPage+1, d.Version+1)
			if v.Newer > d.Version {
				v.Newer = 0 // the first page: no ?before
				v.Latest = true
			}
		}
		if last := out[len(out)-1].Number; last > 1 {
			v.Older = last
		}
	}
	pg := p.in(store.Space(), "History of "+d.Title, "docs")
	pg.Live = &live{Doc: d.ID, Version: d.Version, Proposals: proposalsOf(d)}
	pg.Who = me
	pg.Data = v
	s.render(w, r, http.StatusOK, "history", pg)
}

// HistoryPage is how many versions one page of a history lists: a document of 50,000
// versions is shown a page at a time, each page reading its own versions' headers (a page
// is about 100 KB of HTML).
const HistoryPage = 200

type historyView struct {
	Doc      docstore.Document
	Versions []historyRow
	Newer    int  // ?before= of the page of newer versions; 0 with Latest for the first page
	Latest   bool // the newer page is the first
	Older    int  // ?before= of the page of older versions; 0 when none
}

// headingText is what line says if it is an ATX heading (# Title, ## Title ##), white
// space folded.
func headingText(line string) (string, bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return "", false
	}
	level := len(t) - len(strings.TrimLeft(t, "#"))
	rest := t[level:]
	if level < 1 || level > 6 || rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\n' && rest[0] != '\r' {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	if closed := strings.TrimRight(rest, "#"); closed == "" || strings.HasSuffix(closed, " ") || strings.HasSuffix(closed, "\t") {
		rest = strings.TrimSpace(closed)
	}
	return strings.Join(strings.Fields(rest), " "), true
}

// untitled is text without its first line when that line is a heading saying title: the
// page's header shows the title already. The line is left empty, so that line numbers
// (which the render's notes give) still hold.
func untitled(text, title string) string {
	start := 0
	for start < len(text) {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text) - start
		}
		line := text[start : start+end]
		if strings.TrimSpace(line) == "" {
			start += end + 1
			continue
		}
		if h, ok := headingText(line); ok && strings.EqualFold(h, title) {
			return text[:start] + text[start+end:]
		}
		return text
	}
	return text
}

// preview is a document's first line as the list shows it: a heading without its #, and
// nothing when it only says the title again.
func preview(opens, title string) string {
	if h, ok := headingText(opens); ok {
		if strings.EqualFold(h, title) {
			return ""
		}
		return h
	}
	return opens
}

// byID finds the document an address names, not deleted, and the documents of its space:
// by its id only, in one of p's spaces (see docsOf).
func (s *Site) byID(r *http.Request, p who, id string) (*docstore.Store, docstore.Document, error) {
	var d docstore.Document
	store, err := s.viewDoc(r, p, id, func(rd *docstore.Reader) (err error) {
		d, err = findByID(rd, id)
		return err
	})
	return store, d, err
}

// findByID finds the document an address names in rd's space, not deleted: by its id
// only (Find would also take a title).
func findByID(rd *docstore.Reader, id string) (docstore.Document, error) {
	d, err := rd.Find(id)
	if err == nil && d.ID != id {
		err = docstore.ErrNotFound
	}
	return d, err
}

// recordAndNames reads document id's record (the zero Document when it can't) and people's
// names, in one snapshot: for a page that shows the editor again after a refused write.
func (s *Site) recordAndNames(r *http.Request, store *docstore.Store, id string) (docstore.Document, spaces.Names) {
	var (
		d     docstore.Document
		names spaces.Names
	)
	err := store.View(r.Context(), func(rd *docstore.Reader) error {
		d, _ = rd.Find(id)
		names = rd.Names()
		return nil
	})
	if err != nil {
		s.log.Error("reading a document for its editor", "id", id, "err", err)
	}
	return d, names
}

func (s *Site) rename(w http.ResponseWriter, r *http.Request, p who) {
	store, _, err := s.byID(r, p, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	saved, err := store.Rename(r.Context(), r.PathValue("id"), r.FormValue("title"), me(p))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	what := "renamed"
	switch {
	case saved.Relinked == 1:
		what += ", and updated links in 1 document"
	case saved.Relinked > 1:
		what += fmt.Sprintf(", and updated links in %d documents", saved.Relinked)
	}
	if saved.RelinkLeft > 0 {
		what += fmt.Sprintf("; the links in %d more still say its old title", saved.RelinkLeft)
	}
	s.afterSave(w, r, saved, what)
}

func (s *Site) restore(w http.ResponseWriter, r *http.Request, p who) {
	n, err := strconv.Atoi(r.FormValue("n"))
	if err != nil || n < 1 {
		s.problem(w, r, http.StatusBadRequest, "Nothing was restored", "Restore needs the number of a version.")
		return
	}
	store, _, err := s.byID(r, p, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	saved, err := store.Restore(r.Context(), r.PathValue("id"), n, me(p))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.afterSave(w, r, saved, "restored version "+strconv.Itoa(n))
}

func (s *Site) remove(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	store, _, err := s.byID(r, p, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := store.Delete(r.Context(), id, me(p))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, p.in(store.Space(), "", "").Link("/deleted", "gone", d.Title), http.StatusSeeOther)
}

func (s *Site) undelete(w http.ResponseWriter, r *http.Request, p who) {
	store, err := s.docsOf(r, p, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	d, err := store.Undelete(r.Context(), r.PathValue("id"))
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

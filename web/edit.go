package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
)

type diffLine struct {
	Kind     string // "same", "add", "del" or "gap"
	Old, New int    // line numbers, 0 where the line is not on that side
	Text     string
	Skipped  int // for a gap: how many unchanged lines are not shown
}

type diffView struct {
	Doc      docstore.Document
	From, To int
	FromBy   string
	ToBy     string
	Lines    []diffLine
	Same     bool
	Added    int
	Removed  int
	Versions []int
}

// context is how many unchanged lines a diff shows around each change.
const contextLines = 3

func (s *Site) diff(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	var (
		d        docstore.Document
		a, b     docstore.Version
		from, to int
		names    spaces.Names
	)
	store, err := s.viewDoc(r, p, id, func(rd *docstore.Reader) (err error) {
		if d, err = findByID(rd, id); err != nil {
			return err
		}
		to = atoiOr(r.URL.Query().Get("to"), d.Version)
		from = atoiOr(r.URL.Query().Get("from"), to-1)
		_, a, err = rd.Read(id, max(from, 1))
		if err == nil && from == 0 {
			a = docstore.Version{} // version 0: the empty text before version 1
		}
		if err != nil {
			return err
		}
		if _, b, err = rd.Read(id, to); err != nil {
			return err
		}
		names = rd.Names()
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := diffView{Doc: d, From: from, To: to, Lines: diffLines(a.Text, b.Text), Same: a.Text == b.Text}
	for _, l := range v.Lines {
		switch l.Kind {
		case "add":
			v.Added++
		case "del":
			v.Removed++
		}
	}
	for n := d.Version; n >= 1; n-- {
		v.Versions = append(v.Versions, n)
	}
	pg := p.in(store.Space(), fmt.Sprintf("%s: version %d to %d", d.Title, from, to), "docs")
	pg.Data = &v
	if from > 0 {
		v.FromBy = byWhom(names, a.Author)
	}
	v.ToBy = byWhom(names, b.Author)
	pg.Who = names.Show(spaces.Person(p.Person))
	s.render(w, r, http.StatusOK, "diff", pg)
}

func atoiOr(s string, def int) int {
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return n
	}
	return def
}

// diffLines lays out a line diff of a to b for reading: every changed line, context lines
// around them, and gaps for the unchanged runs between.
func diffLines(a, b string) []diffLine {
	al, bl := linediff.Lines(a), linediff.Lines(b)
	var out []diffLine
	line := func(s string) string { return strings.TrimSuffix(s, "\n") }
	ops := linediff.Diff(al, bl)
	for i, op := range ops {
		switch op.Kind {
		case linediff.Delete:
			for k := op.A0; k < op.A1; k++ {
				out = append(out, diffLine{Kind: "del", Old: k + 1, Text: line(al[k])})
			}
		case linediff.Insert:
			for k := op.B0; k < op.B1; k++ {
				out = append(out, diffLine{Kind: "add", New: k + 1, Text: line(bl[k])})
			}
		case linediff.Equal:
			n := op.A1 - op.A0
			head, tail := contextLines, contextLines
			if i == 0 {
				head = 0
			}
			if i == len(ops)-1 {
				tail = 0
			}
			if head+tail >= n {
				head, tail = n, 0
			}
			for k := 0; k < head; k++ {
				out = append(out, diffLine{Kind: "same", Old: op.A0 + k + 1, New: op.B0 + k + 1, Text: line(al[op.A0+k])})
			}
			if skipped := n - head - tail; skipped > 0 {
				out = append(out, diffLine{Kind: "gap", Skipped: skipped})
			}
			for k := n - tail; k < n; k++ {
				out = append(out, diffLine{Kind: "same", Old: op.A0 + k + 1, New: op.B0 + k + 1, Text: line(al[op.A0+k])})
			}
		}
	}
	return out
}

type clashRegion struct {
	TheirsStart, MineStart int
	Theirs, Mine           []string
}

type editView struct {
	Doc      docstore.Document
	Base     int
	Text     string
	Clash    []clashRegion
	LatestBy string
	Problem  string
	Action   string // where the form posts: "" for the document's own editor
	Proposal int    // the proposal accepted after editing (proposals.go); 0 for the editor
	// ClashMore is how many clashing regions are not shown (a proposal's: proposals.go).
	ClashMore int
}

func (s *Site) editForm(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	var (
		d     docstore.Document
		v     docstore.Version
		names spaces.Names
	)
	store, err := s.viewDoc(r, p, id, func(rd *docstore.Reader) (err error) {
		if d, v, err = rd.Read(id, 0); err == nil && d.ID != id {
			err = docstore.ErrNotFound
		}
		names = rd.Names()
		return err
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.editPage(w, r, p, store.Space(), names, http.StatusOK, &editView{Doc: d, Base: v.Number, Text: v.Text})
}

// editPage is the editor on v, showing people by names.
func (s *Site) editPage(w http.ResponseWriter, r *http.Request, p who, space string, names spaces.Names, status int, v *editView) {
	pg := p.in(space, "Editing "+v.Doc.Title, "docs")
	pg.Data, pg.Live = v, &live{Doc: v.Doc.ID, Version: v.Doc.Version, Proposals: proposalsOf(v.Doc), Editing: true}
	v.LatestBy = byWhom(names, v.Doc.Author)
	pg.Who = names.Show(spaces.Person(p.Person))
	s.render(w, r, status, "edit", pg)
}

// save is the person's save from the version the form was opened on (base): from an
// older one it merges with what was saved since; a clash saves nothing and shows both
// sides, keeping the person's text, until they choose mine or theirs.
func (s *Site) save(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	text := formText(r)
	base, err := strconv.Atoi(r.FormValue("base"))
	if err != nil || base < 1 {
		s.problem(w, r, http.StatusBadRequest, "Nothing was saved", "The form lost the version it was opened on. Open the editor again; copy your text first.")
		return
	}
	prefer := linediff.Clash
	switch r.FormValue("choose") {
	case "mine":
		prefer = linediff.PreferMine
	case "theirs":
		prefer = linediff.PreferTheirs
	}
	store, _, err := s.byID(r, p, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	saved, err := store.Save(r.Context(), id, base, text, me(p), prefer)
	var clash *docstore.ClashError
	if errors.As(err, &clash) {
		v := &editView{Doc: clash.Document, Base: base, Text: text}
		for _, c := range clash.Conflicts {
			v.Clash = append(v.Clash, clashRegion{TheirsStart: c.TheirsStart, MineStart: c.MineStart, Theirs: c.Theirs, Mine: c.Mine})
		}
		s.editPage(w, r, p, store.Space(), s.names(r.Context()), http.StatusConflict, v)
		return
	}
	if errors.Is(err, docstore.ErrBadText) {
		d, names := s.recordAndNames(r, store, id)
		s.editPage(w, r, p, store.Space(), names, http.StatusBadRequest, &editView{Doc: d, Base: base, Text: text, Problem: "Nothing was saved: " + err.Error()})
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	what := "saved"
	if saved.Kind == docstore.KindMerge {
		what = "merged with the versions saved meanwhile"
	}
	s.afterSave(w, r, saved, fmt.Sprintf("%s as version %d (%+d \u2212%d lines)", what, saved.Document.Version, saved.Added, saved.Removed))
}

// formText is the form's text with the browser's CRLF line ends made LF again, so that a
// save changes only the lines the person changed.
func formText(r *http.Request) string {
	return strings.ReplaceAll(r.FormValue("text"), "\r\n", "\n")
}

type newView struct {
	Title, Text, Problem string
}

func (s *Site) newForm(w http.ResponseWriter, r *http.Request, p who) {
	sp, ok := s.space(w, r, p)
	if !ok {
		return
	}
	// A broken [[link]] leads here with the title it names (?title=).
	title, _ := docstore.CleanTitle(r.URL.Query().Get("title"))
	s.newPage(w, r, p, sp, http.StatusOK, &newView{Title: title})
}

func (s *Site) newPage(w http.ResponseWriter, r *http.Request, p who, space string, status int, v *newView) {
	pg := p.in(space, "New document", "new")
	pg.Who, pg.Data = s.names(r.Context()).Show(spaces.Person(p.Person)), v
	s.render(w, r, status, "new", pg)
}

// create makes a document in the space the form names (?space=, as the form's action
// carries it), which the person must be able to see.
func (s *Site) create(w http.ResponseWriter, r *http.Request, p who) {
	sp, ok := s.space(w, r, p)
	if !ok {
		return
	}
	v := &newView{Title: r.FormValue("title"), Text: formText(r)}
	saved, err := docstore.New(s.db, sp).Create(r.Context(), v.Title, v.Text, docstore.KindSave, me(p))
	var taken *docstore.TitleTakenError
	switch {
	case errors.As(err, &taken):
		v.Problem = fmt.Sprintf("Another document here is already titled %q: pick another title.", taken.Title)
	case errors.Is(err, docstore.ErrBadTitle), errors.Is(err, docstore.ErrBadText):
		v.Problem = "Nothing was saved: " + err.Error()
	case err != nil:
		s.fail(w, r, err)
		return
	default:
		s.afterSave(w, r, saved, "made")
		return
	}
	s.newPage(w, r, p, sp, http.StatusBadRequest, v)
}

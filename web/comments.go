package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// The person comments on lines here: the document's latest text as numbered lines (a page
// of CommentLines at a time), the lines under open comments marked; select lines (click a
// line's number, shift-click another: comments.js; or type them), write, and it is a
// comment agents see in read_document. Each open comment shows its replies, a reply form
// and a resolve button.

// CommentLines is how many lines one page of the comments view shows.
const CommentLines = 2000

func (s *Site) commentRoutes(in func(string, func(http.ResponseWriter, *http.Request, who))) {
	in("GET /document/{id}/comments", s.comments)
	in("POST /document/{id}/comments", s.addComment)
	in("POST /document/{id}/comment/{n}/reply", s.replyComment)
	in("POST /document/{id}/comment/{n}/resolve", s.resolveComment)
}

type commentRow struct {
	Number   int
	By       string
	At       time.Time
	Text     string
	Where    string // "lines 4-6", or how it is outdated
	Outdated bool
	Quote    string
	Replies  []commentRow
	More     int
}

type lineRow struct {
	N        int
	Text     string
	Comments []int // the open comments on it
}

type commentsView struct {
	Doc        docstore.Document
	Version    int
	Threads    []commentRow
	Open, More int
	Lines      []lineRow
	Total      int
	From, To   int
	Prev, Next int
	Notice     string
	Problem    string
	// What the form held, given back when it was refused.
	FormFrom, FormTo, FormText string
}

func (s *Site) comments(w http.ResponseWriter, r *http.Request, p who) {
	s.showComments(w, r, p, http.StatusOK, nil)
}

// showComments renders the comments view; form, when set, is a refused comment's form.
func (s *Site) showComments(w http.ResponseWriter, r *http.Request, p who, status int, form *commentsView) {
	id := r.PathValue("id")
	var (
		d     docstore.Document
		v     docstore.Version
		cr    docstore.CommentsRead
		names spaces.Names
	)
	store, err := s.viewDoc(r, p, id, func(rd *docstore.Reader) (err error) {
		if _, err = findByID(rd, id); err != nil {
			return err
		}
		if d, v, err = rd.Read(id, 0); err != nil {
			return err
		}
		if cr, err = rd.Comments(id, v.Number, docstore.MaxOpenComments, docstore.MaxReplies); err != nil {
			return err
		}
		names = rd.Names()
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	from := max(atoiOr(r.URL.Query().Get("from"), 1), 1)
	view := commentsView{Doc: d, Version: v.Number, Open: cr.Open, More: cr.More, From: from, Notice: r.URL.Query().Get("saved")}
	if form != nil {
		view.Problem, view.FormFrom, view.FormTo, view.FormText = form.Problem, form.FormFrom, form.FormTo, form.FormText
	}
	part, err := docstore.Lines(v.Text, docstore.LineRange{From: from, To: from + CommentLines - 1})
	var nolines *docstore.NoLinesError
	if err != nil && !errors.As(err, &nolines) {
		s.fail(w, r, err)
		return
	}
	view.Total, view.To = part.Total, part.Last
	if from > 1 {
		view.Prev = max(from-CommentLines, 1)
	}
	if part.Last < part.Total {
		view.Next = part.Last + 1
	}
	marks := map[int][]int{}
	pg := p.in(store.Space(), "Comments on "+d.Title, "docs")
	n := names
	for _, t := range cr.Threads {
		row := commentRow{Number: t.Number, By: byWhom(n, t.Author), At: t.At, Text: t.Text, Quote: t.Quote, More: t.More}
		if t.Lines.From == 0 {
			row.Outdated, row.Where = true, fmt.Sprintf("outdated: its lines were changed in version %d", t.Outdated)
		} else {
			row.Where = span(t.Lines.From, t.Lines.To)
			for l := max(t.Lines.From, part.First); l <= min(t.Lines.To, part.Last); l++ {
				marks[l] = append(marks[l], t.Number)
			}
		}
		for _, rp := range t.Replies {
			row.Replies = append(row.Replies, commentRow{Number: rp.Number, By: byWhom(n, rp.Author), At: rp.At, Text: rp.Text})
		}
		view.Threads = append(view.Threads, row)
	}
	pg.Who = n.Show(spaces.Person(p.Person))
	for i, l := range part.Lines {
		n := part.First + i
		view.Lines = append(view.Lines, lineRow{N: n, Text: l, Comments: marks[n]})
	}
	pg.Data, pg.Script = &view, "comments.js"
	s.render(w, r, status, "comments", pg)
}

// span names lines from to to: "line 4", "lines 4-6".
func span(from, to int) string {
	if from == to {
		return fmt.Sprintf("line %d", from)
	}
	return fmt.Sprintf("lines %d-%d", from, to)
}

// addComment makes the person's comment on lines from-to of the version the form shows.
func (s *Site) addComment(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	store, _, err := s.byID(r, p, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	form := &commentsView{FormFrom: r.FormValue("from"), FormTo: r.FormValue("to"), FormText: r.FormValue("text")}
	from, err1 := strconv.Atoi(form.FormFrom)
	to, err2 := strconv.Atoi(form.FormTo)
	if form.FormTo == "" {
		to, err2 = from, nil
	}
	version, _ := strconv.Atoi(r.FormValue("version"))
	if err1 != nil || err2 != nil || from < 1 || to < from {
		form.Problem = "Nothing was saved: choose the lines (a first line, and a last one not before it)."
		s.showComments(w, r, p, http.StatusBadRequest, form)
		return
	}
	made, err := store.Comment(r.Context(), id, docstore.NewComment{Version: version, Lines: docstore.LineRange{From: from, To: to}, Text: formText(r), Author: me(p)})
	if msg := commentProblem(err); msg != "" {
		form.Problem = msg
		s.showComments(w, r, p, http.StatusBadRequest, form)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c := made.Comment
	s.afterComment(w, r, id, fmt.Sprintf("comment %d on %s", c.Number, span(c.From, c.To)))
}

// commentProblem is what the page says of a comment it refused, "" for other errors.
func commentProblem(err error) string {
	var (
		nolines *docstore.NoLinesError
		nover   *docstore.NoVersionError
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &nolines):
		return fmt.Sprintf("Nothing was saved: the text has %d lines, so no line %d.", nolines.Total, nolines.Asked)
	case errors.As(err, &nover):
		return "Nothing was saved: the document has moved on since this page was opened. Choose the lines again."
	case errors.Is(err, docstore.ErrBadComment), errors.Is(err, docstore.ErrBadRange), errors.Is(err, docstore.ErrTooManyComments), errors.Is(err, docstore.ErrResolved), errors.Is(err, docstore.ErrNoComment):
		return "Nothing was saved: " + err.Error() + "."
	}
	return ""
}

func (s *Site) replyComment(w http.ResponseWriter, r *http.Request, p who) {
	s.onComment(w, r, p, func(store *docstore.Store, id string, n int) (string, error) {
		made, err := store.Reply(r.Context(), id, n, formText(r), me(p))
		return fmt.Sprintf("replied to comment %d", made.Comment.ReplyTo), err
	})
}

func (s *Site) resolveComment(w http.ResponseWriter, r *http.Request, p who) {
	s.onComment(w, r, p, func(store *docstore.Store, id string, n int) (string, error) {
		made, err := store.Resolve(r.Context(), id, n, formText(r), me(p))
		return fmt.Sprintf("resolved comment %d", made.Comment.Number), err
	})
}

// onComment runs do on comment {n} of document {id} and goes back to the comments, saying
// what it did (or why nothing was).
func (s *Site) onComment(w http.ResponseWriter, r *http.Request, p who, do func(store *docstore.Store, id string, n int) (string, error)) {
	id := r.PathValue("id")
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		s.problem(w, r, http.StatusNotFound, "No such comment", "A comment is a number, 1 or more.")
		return
	}
	store, _, err := s.byID(r, p, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	what, err := do(store, id, n)
	if msg := commentProblem(err); msg != "" {
		s.showComments(w, r, p, http.StatusBadRequest, &commentsView{Problem: msg})
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.afterComment(w, r, id, what)
}

func (s *Site) afterComment(w http.ResponseWriter, r *http.Request, id, what string) {
	http.Redirect(w, r, "/document/"+id+"/comments?saved="+url.QueryEscape(what), http.StatusSeeOther)
}

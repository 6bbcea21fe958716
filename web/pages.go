package web

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// TimeLayout is how times are shown: minutes, the server's local time, as the tools say them.
const TimeLayout = "2006-01-02 15:04"

// pages holds one template a page, each with the shared layout.
type pages struct {
	byName map[string]*template.Template
}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format(TimeLayout)
	},
	"iso":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"lines": func(a, r int) string { return fmt.Sprintf("+%d \u2212%d", a, r) },
	"add":   func(a, b int) int { return a + b },
	"sub":   func(a, b int) int { return a - b },
	"size": func(n int) string {
		switch {
		case n < 1000:
			return fmt.Sprintf("%d bytes", n)
		case n < 1000_000:
			return fmt.Sprintf("%.1f KB", float64(n)/1000)
		}
		return fmt.Sprintf("%.1f MB", float64(n)/1000_000)
	},
}

func parsePages() (*pages, error) {
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, n := range names {
		if path.Base(n) == "layout.html" {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(files, n)
		if err != nil {
			return nil, err
		}
		p.byName[strings.TrimSuffix(path.Base(n), ".html")] = t
	}
	return p, nil
}

// page is what the layout needs; Data is the page's own.
type page struct {
	Title  string
	Who    string   // the signed-in person's name; empty on the sign-in page
	Space  string   // the space shown: the document's, or the list's
	Spaces []string // the person's spaces, for the switcher
	Home   string   // the person's home space: links to it need no ?space=
	Nav    string   // which part of the nav is current
	Live   *live    // set on pages that follow a document's new versions
	Script string   // a script of /static/ the page needs beside live.js ("" for none)
	// FormToken is the signed-in browser's per-session form token: every form that changes
	// something carries it ({{template "formtoken" $}}), and a POST without it is refused.
	FormToken string
	Data      any
	// body, if set, is the page's one large piece of HTML (a document's rendering, up to
	// 32 MiB): the template writes bodyMark where it goes and render puts it there.
	body    template.HTML
	waiting *inboxWaiting // what waits for the person (Waiting), for the header
}

// live tells the page's script which document and version it shows.
type live struct {
	Doc       string
	Version   int
	Proposals int // the last proposal's number: the page hears of newer ones
	Editing   bool
}

func (s *Site) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	t := s.pages.byName[name]
	s.readWaiting(r.Context(), p)
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", p); err != nil {
		s.log.Error("rendering a page", "page", name, "err", err)
		http.Error(w, "Internal error (logged on the server)", http.StatusInternalServerError)
		return
	}
	page := buf.Bytes()
	at := -1
	if p.body != "" {
		if at = bytes.Index(page, []byte(bodyMark)); at < 0 || bytes.LastIndex(page, []byte(bodyMark)) != at {
			s.log.Error("rendering a page: its body's place is not in it once", "page", name)
			http.Error(w, "Internal error (logged on the server)", http.StatusInternalServerError)
			return
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if at < 0 {
		w.Write(page)
		return
	}
	w.Write(page[:at])
	io.WriteString(w, string(p.body))
	w.Write(page[at+len(bodyMark):])
}

// bodyMark is where a page's template puts page.body: a comment no text can make on a page
// (html/template writes a text's "<!--" as "&lt;!--", and the sanitized HTML keeps no
// comment), random for each process. Written through the template, a body of 32 MiB was
// copied by fmt (text/template prints a value with fmt.Fprint) and again into the page's
// buffer, growing: 8 MiB of "<" cost a page 1.2 to 2 s of CPU on this machine, most of it
// the kernel's, filling the fresh pages.
var bodyMark = func() template.HTML {
	var b [12]byte
	rand.Read(b[:])
	return template.HTML("<!--body " + hex.EncodeToString(b[:]) + "-->")
}()

type problemView struct{ Text string }

func (s *Site) problem(w http.ResponseWriter, r *http.Request, status int, title, text string) {
	p := page{Title: title, Data: problemView{Text: text}}
	if who, ok := s.session(r); ok {
		p = who.in(who.Home, title, "")
		p.Data = problemView{Text: text}
		p.Who = s.names(r.Context()).Show(spaces.Person(who.Person))
	}
	s.render(w, r, status, "problem", p)
}

// fail answers a store error: not found and bad input as the person can fix them, the
// rest logged and shown as an internal error.
func (s *Site) fail(w http.ResponseWriter, r *http.Request, err error) {
	var (
		nover *docstore.NoVersionError
		taken *docstore.TitleTakenError
	)
	switch {
	case errors.Is(err, kv.ErrCanceled):
		// The browser went away (or the request's deadline passed) before the store
		// answered: the store was told to stop, and nobody waits for a page.
		s.log.Debug("page canceled", "path", r.URL.Path, "err", err)
		http.Error(w, "The request was canceled.", http.StatusServiceUnavailable)
	case errors.Is(err, docstore.ErrNotFound):
		s.problem(w, r, http.StatusNotFound, "No such document", "None of your spaces has a document at this address: it may have been deleted (see Deleted documents), or it is in a space you are not a member of.")
	case errors.As(err, &nover):
		s.problem(w, r, http.StatusNotFound, "No such version", fmt.Sprintf("%s has versions 1 to %d: there's no version %d.", nover.Document.Title, nover.Document.Version, nover.Asked))
	case errors.As(err, &taken):
		s.problem(w, r, http.StatusConflict, "That title is taken", fmt.Sprintf("Another document here is already titled %q. Pick another title.", taken.Title))
	case errors.Is(err, docstore.ErrBadTitle), errors.Is(err, docstore.ErrBadText):
		s.problem(w, r, http.StatusBadRequest, "Nothing was saved", err.Error())
	default:
		s.log.Error("page failed", "path", r.URL.Path, "err", err)
		s.problem(w, r, http.StatusInternalServerError, "Something went wrong", "The server could not do that (it was logged there). Try again; if it keeps failing, the log says why.")
	}
}

// byWhom says who saved a version as people read it: "Ana", or "north for Ana".
func byWhom(n spaces.Names, a docstore.Author) string { return a.Show(n) }

// me is the author of the person's own saves: person:<id> alone, through the page, in
// the session of their signed-in browser (its cookie's hash).
func me(p who) docstore.Author {
	return docstore.Author{By: spaces.Person(p.Person).String(), Door: docstore.DoorPage, Session: docstore.SessionOf('p', p.cookie)}
}

// gist folds white space and cuts s at about n characters with "…".
func gist(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

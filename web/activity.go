package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

// The activity (/activity) is what happened in every space the person sees, newest first,
// a line a session (docstore.Sessions) with its events under it: the page of docs log. It
// is paged (ActivityPage events, a few hundred bytes each: well under 256 KB a page), and
// follows what happens as the inbox does (/activity/events).

// ActivityPage is how many events one page of the activity shows.
const ActivityPage = 100

type activityView struct {
	Undone  *undoneView // what an Undo just did
	Groups  []activityGroup
	Next    string
	First   bool
	Many    bool
	Mark    string
	Filters string // the query of the filters, for the next page's link
	Agent   string
	Filter  bool // a filter is set
}

type activityGroup struct {
	ID      string
	Heading string
	Events  []activityEvent
}

type activityEvent struct {
	Space, Doc, Line, Href string
	At                     time.Time
}

func (s *Site) activityRoutes(in func(string, func(http.ResponseWriter, *http.Request, who))) {
	in("GET /activity", s.activity)
	in("GET /activity/events", s.activityEvents)
	in("POST /activity/session/{id}/undo", s.undoSession)
}

// undoneView is what an Undo did, as the page says it.
type undoneView struct {
	Session string
	Lines   []string
	Clashes []undoneClash
}

type undoneClash struct {
	Title, Doc string
	Where      string
	Lines      []string
}

// undoSession takes back what a session did (docstore.UndoSession), as the person, and
// shows the activity with what it did and what clashed. A POST with the browser's proof,
// like every decision: no agent can undo for the person.
func (s *Site) undoSession(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	if id == "" || len(id) > 64 {
		s.problem(w, r, http.StatusNotFound, "No such session", "A session is the id its line in the activity gives.")
		return
	}
	u, err := docstore.UndoSession(r.Context(), s.db, p.Spaces, id, me(p))
	if errors.Is(err, docstore.ErrNoSession) {
		s.problem(w, r, http.StatusNotFound, "No such session", "That session did nothing in your spaces.")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := &undoneView{Session: id}
	for _, d := range u.Documents {
		switch {
		case d.Deleted:
			v.Lines = append(v.Lines, fmt.Sprintf("%s: made by the session alone, deleted (Deleted brings it back)", d.Document.Title))
		case d.Version == 0:
			v.Lines = append(v.Lines, fmt.Sprintf("%s: nothing left to take back", d.Document.Title))
		default:
			v.Lines = append(v.Lines, fmt.Sprintf("%s: %d of the session's versions taken back, as version %d", d.Document.Title, len(d.Reverted), d.Version))
		}
		for _, c := range d.Clashes {
			where := fmt.Sprintf("line %d", c.TheirsStart)
			if len(c.Theirs) > 1 {
				where = fmt.Sprintf("lines %d-%d", c.TheirsStart, c.TheirsStart+len(c.Theirs)-1)
			}
			v.Clashes = append(v.Clashes, undoneClash{Title: d.Document.Title, Doc: d.Document.ID, Where: where, Lines: c.Theirs})
		}
	}
	for _, e := range u.Declined {
		v.Lines = append(v.Lines, fmt.Sprintf("%s: change %d declined, “undone”", e.Title, e.N))
	}
	if len(v.Lines) == 0 {
		v.Lines = append(v.Lines, "Nothing left to undo: the session's changes were taken back or decided already.")
	}
	s.showActivity(w, r, p, v)
}

// activityFilter reads the page's filters: ?space= (one of the person's), ?agent=,
// ?session=, ?since= (a day); ok is false when one is refused (answered).
func (s *Site) activityFilter(w http.ResponseWriter, r *http.Request, p who) (docstore.ActivityFilter, []string, bool) {
	q := r.URL.Query()
	var f docstore.ActivityFilter
	in := p.Spaces
	if sp := q.Get("space"); sp != "" {
		if !slices.Contains(p.Spaces, sp) {
			s.problem(w, r, http.StatusNotFound, "No such space", "You have no space by that name: the activity of all of yours is at /activity.")
			return f, nil, false
		}
		in = []string{sp}
	}
	if a := q.Get("agent"); a != "" {
		if !strings.Contains(a, ":") {
			a = "agent:" + a
		}
		actor, err := spaces.ParseActor(a)
		if err != nil || len(a) > 200 {
			s.problem(w, r, http.StatusBadRequest, "No such agent", "An agent is a name like north, or person:ana.")
			return f, nil, false
		}
		f.Agent = actor.String()
	}
	if sess := q.Get("session"); sess != "" {
		if len(sess) > 64 {
			s.problem(w, r, http.StatusBadRequest, "No such session", "A session is the id its line gives.")
			return f, nil, false
		}
		f.Session = sess
	}
	if since := q.Get("since"); since != "" {
		t, err := time.ParseInLocation("2006-01-02", since, time.Local)
		if err != nil {
			s.problem(w, r, http.StatusBadRequest, "Not a day", "Since is a day, like 2026-12-06.")
			return f, nil, false
		}
		f.Since = t
	}
	f.Document = q.Get("document")
	if f.Document != "" {
		if id, ok := pathID(f.Document); ok {
			f.Document = id
		} else {
			s.problem(w, r, http.StatusBadRequest, "No such document", "A document is named by its id here.")
			return f, nil, false
		}
	}
	return f, in, true
}

func (s *Site) activity(w http.ResponseWriter, r *http.Request, p who) {
	s.showActivity(w, r, p, nil)
}

// showActivity shows a page of the activity, with what an Undo did when undone is set.
func (s *Site) showActivity(w http.ResponseWriter, r *http.Request, p who, undone *undoneView) {
	f, in, ok := s.activityFilter(w, r, p)
	if !ok {
		return
	}
	after := r.URL.Query().Get("after")
	q := r.URL.Query()
	q.Del("after")
	v := activityView{Undone: undone, First: after == "", Many: len(in) > 1, Filters: q.Encode(), Filter: len(q) > 0}
	pg := p.in(p.Home, "Activity", "activity")
	pg.Data = &v
	err := docstore.New(s.db, p.Home).View(r.Context(), func(rd *docstore.Reader) error {
		page, err := rd.Activity(in, f, after, ActivityPage)
		if err != nil {
			return err
		}
		if err := p.countWaiting(rd); err != nil {
			return err
		}
		n := rd.Names()
		v.Next, v.Mark, v.Groups = page.Next, activityMark(page), nil
		for _, g := range docstore.Sessions(page.Events) {
			ag := activityGroup{ID: g.ID, Heading: g.Heading(n)}
			for _, e := range g.Events {
				ag.Events = append(ag.Events, activityEvent{Space: e.Space, Doc: e.Doc, Line: e.Line(n), Href: eventHref(e), At: e.At})
			}
			v.Groups = append(v.Groups, ag)
		}
		pg.Who = n.Show(spaces.Person(p.Person))
		return nil
	})
	followActivity.show(s, w, r, pg, err, v.First && !v.Filter && undone == nil) // the newest page follows what happens
}

// eventHref is where an event's line leads: the version, the proposal, the comment, the
// document.
func eventHref(e docstore.Event) string {
	base := "/document/" + e.Doc
	switch e.What {
	case docstore.EventVersion:
		return fmt.Sprintf("%s/v/%d", base, e.N)
	case docstore.EventProposal, docstore.EventDecision:
		return fmt.Sprintf("%s/proposal/%d", base, e.N)
	case docstore.EventComment:
		return fmt.Sprintf("%s/comments#c%d", base, e.N)
	}
	return base
}

// activityMark says what the newest page shows, so that something new is told.
func activityMark(a docstore.Activity) string {
	if len(a.Events) == 0 {
		return "0"
	}
	e := a.Events[0]
	return fmt.Sprintf("%d-%s-%c%d", e.At.UnixNano(), e.Doc, e.What, e.N)
}

// activityEvents streams "activity" to an open activity page when something happens in the
// person's spaces; the page reads itself again.
func (s *Site) activityEvents(w http.ResponseWriter, r *http.Request, p who) {
	followActivity.events(s, w, r, inboxListener{person: p.Person, spaces: p.Spaces, activity: true})
}

// checkActivity reads the newest event of an open activity page's spaces and tells the
// page when it is not the one it shows.
func (h *hub) checkActivity(c chan saved, l inboxListener) {
	a, err := docstore.ReadIn(h.ctx, docstore.New(h.s.db, l.spaces[0]), func(rd *docstore.Reader) (docstore.Activity, error) {
		return rd.Activity(l.spaces, docstore.ActivityFilter{}, "", 1)
	})
	if err == nil {
		h.moved(c, l, activityMark(a), saved{event: "activity"})
	}
}

// whyView is why a version was made: the conversation of its space, and the person's
// message that led to it.
type whyView struct {
	Text, Href string
}

// whyOf reads why version n of document doc of space was made (threads.Reader.Why); nil
// when no conversation of the space says, or when it can't be read (logged).
func (s *Site) whyOf(r *http.Request, space, doc string, n int, names spaces.Names) *whyView {
	var out *whyView
	err := threads.New(s.db, space).View(r.Context(), func(rd *threads.Reader) error {
		w, ok, err := rd.Why(doc, n)
		out = nil
		if ok && err == nil {
			out = &whyView{Text: w.Say(names), Href: "/conversation/" + url.PathEscape(w.Conversation.ID) + "?space=" + url.QueryEscape(space)}
		}
		return err
	})
	if err != nil {
		s.log.Error("reading why a version was made", "document", doc, "version", n, "err", err)
		return nil
	}
	return out
}

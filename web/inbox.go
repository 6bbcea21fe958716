package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// The inbox is everything that waits for the person, across their spaces, newest first
// (docstore's Reader.Inbox): their agents' open changes, each with Accept and Decline in
// place, and the open comments agents made asking them, each linked to its lines. Every
// page's header counts what waits; a page whose own read can't hold the count reads it
// once more (render).

// InboxPage is how many items one page of the inbox shows.
const InboxPage = 50

// AcceptMany is the most changes of one document one Accept accepts in order.
const AcceptMany = 50

type inboxRow struct {
	Space, DocID, DocTitle string
	Change                 bool // else a comment
	Number                 int
	Kind                   docstore.Kind
	By, Asks               string
	Added, Removed         int
	At                     time.Time
	Gist                   []string
	Mine                   bool
	Where                  string // a comment's lines, as made
	Note                   string // where a change no agent asked for came from (noteShown)
}

type inboxView struct {
	Rows   []inboxRow
	Count  int
	Next   string
	First  bool
	Notice string
	Many   bool   // the person has more than one space: rows name theirs
	Mark   string // what it shows (inboxMark), for its live updates
}

func (s *Site) inboxRoutes(in func(string, func(http.ResponseWriter, *http.Request, who))) {
	in("GET /inbox", s.inbox)
	in("GET /inbox/events", s.inboxEvents)
	// /proposals was a page nobody served ("Nothing here" while changes waited): it is the inbox.
	in("GET /proposals", func(w http.ResponseWriter, r *http.Request, _ who) {
		http.Redirect(w, r, "/inbox", http.StatusSeeOther)
	})
	in("POST /document/{id}/accept", s.acceptMany)
}

// inboxWaiting is what a page's header counts, read once a request: by the page's own read when
// it can (Reader.InboxCount in the same snapshot), else by render.
type inboxWaiting struct {
	person string
	n      int
	read   bool
	// each is, when the person has more than one space, every space's documents and what
	// waits there, for the space switcher.
	each []docstore.SpaceCount
}

// set keeps what a read of the counts found.
func (w *inboxWaiting) set(each []docstore.SpaceCount) {
	w.n = 0
	for _, c := range each {
		w.n += c.Waiting
	}
	w.each, w.read = nil, true
	if len(each) > 1 {
		w.each = each
	}
}

// countWaiting reads, in rd's snapshot, how much waits for p in all their spaces.
func (p who) countWaiting(rd *docstore.Reader) error {
	if p.waiting == nil {
		return nil
	}
	each, err := rd.SpaceCounts(p.Person, p.Spaces, len(p.Spaces) > 1)
	if err != nil {
		return err
	}
	p.waiting.set(each)
	return nil
}

// Waiting is how much waits for the person, for the header: 0 on a page of no one's.
func (p page) Waiting() int {
	if p.waiting == nil {
		return 0
	}
	return p.waiting.n
}

// SpaceCounts is every space's documents and what waits there, for the space switcher:
// none when the person has one space.
func (p page) SpaceCounts() []docstore.SpaceCount {
	if p.waiting == nil {
		return nil
	}
	return p.waiting.each
}

// readWaiting reads the header's count for a page whose own read didn't (a read of its
// own: a round trip on PostgreSQL); a failure leaves it out, logged.
func (s *Site) readWaiting(ctx context.Context, p page) {
	if p.waiting == nil || p.waiting.read || p.Who == "" || len(p.Spaces) == 0 {
		return
	}
	w := p.waiting
	err := docstore.New(s.db, p.Spaces[0]).View(ctx, func(rd *docstore.Reader) error {
		each, err := rd.SpaceCounts(w.person, p.Spaces, len(p.Spaces) > 1)
		w.set(each)
		return err
	})
	if err != nil && ctx.Err() == nil {
		s.log.Error("counting what waits", "err", err)
	}
	w.read = true
}

func (s *Site) inbox(w http.ResponseWriter, r *http.Request, p who) {
	after := r.URL.Query().Get("after")
	v := inboxView{First: after == "", Notice: r.URL.Query().Get("saved"), Many: len(p.Spaces) > 1}
	pg := p.in(p.Home, "Inbox", "inbox")
	pg.Data = &v
	err := docstore.New(s.db, p.Home).View(r.Context(), func(rd *docstore.Reader) error {
		v.Rows = v.Rows[:0]
		box, err := rd.Inbox(p.Person, p.Spaces, after, InboxPage)
		if err != nil {
			return err
		}
		v.Count, v.Next, v.Mark = box.Count, box.Next, inboxMark(box)
		p.waiting.n, p.waiting.read = box.Count, true
		if v.Many { // the switcher's counts, space by space
			if err := p.countWaiting(rd); err != nil {
				return err
			}
		}
		n := rd.Names()
		for _, it := range box.Items {
			row := inboxRow{Space: it.Space, DocID: it.Document.ID, DocTitle: it.Document.Title, At: it.At, Gist: it.Gist, Mine: it.Mine}
			if pr := it.Proposal; pr != nil {
				row.Change, row.Number, row.Kind, row.By, row.Added, row.Removed = true, pr.Number, pr.Kind, byWhom(n, pr.Author), pr.Added, pr.Removed
				row.Note = noteShown(pr.Note)
			} else {
				c := it.Comment
				row.Number, row.By, row.Where = c.Number, byWhom(n, c.Author), span(c.From, c.To)
			}
			v.Rows = append(v.Rows, row)
		}
		pg.Who = n.Show(spaces.Person(p.Person))
		return nil
	})
	followInbox.show(s, w, r, pg, err, v.First) // the newest page follows what comes
}

// backTo is where a decision goes back to: the inbox when its form says so (a fixed
// place, never an address the form gives), else the document.
func backTo(r *http.Request, id, what string) string {
	if r.FormValue("back") == "inbox" {
		return "/inbox?saved=" + url.QueryEscape(what)
	}
	return "/document/" + id + "?saved=" + url.QueryEscape(what)
}

// acceptMany accepts the changes of document {id} the form names (n, one or more), oldest
// first, each merged as Accept merges it; the first that clashes stops there, showing the
// clash page (the rest stay open), and what was accepted before it is said there.
func (s *Site) acceptMany(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	if err := r.ParseForm(); err != nil {
		s.problem(w, r, http.StatusBadRequest, "Nothing was accepted", "The form could not be read.")
		return
	}
	if len(r.PostForm["n"]) > 4*AcceptMany { // refused before reading them: a form of a million
		s.problem(w, r, http.StatusBadRequest, "Nothing was accepted", fmt.Sprintf("Accept at most %d changes at once.", AcceptMany))
		return
	}
	var nums []int
	for _, raw := range r.PostForm["n"] {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			s.problem(w, r, http.StatusBadRequest, "Nothing was accepted", "A change is a number, 1 or more.")
			return
		}
		nums = append(nums, n)
	}
	slices.Sort(nums)
	nums = slices.Compact(nums)
	switch {
	case len(nums) == 0:
		s.problem(w, r, http.StatusBadRequest, "Nothing was accepted", "Choose the changes to accept.")
		return
	case len(nums) > AcceptMany:
		s.problem(w, r, http.StatusBadRequest, "Nothing was accepted", fmt.Sprintf("Accept at most %d changes at once.", AcceptMany))
		return
	}
	store, _, err := s.byID(r, p, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var done []string
	for _, n := range nums {
		saved, pr, err := store.Accept(r.Context(), id, n, me(p), nil, linediff.Clash)
		var clash *docstore.ClashError
		switch {
		case errors.As(err, &clash):
			before := ""
			if len(done) > 0 {
				before = "Before it: " + strings.Join(done, "; ") + "."
			}
			s.acceptClashPage(w, r, p, store, id, n, clash, nil, before)
			return
		case err != nil && len(done) > 0:
			// Say what was done before the one that failed; the failure is the page's.
			http.Redirect(w, r, backTo(r, id, strings.Join(done, "; ")+"; then "+err.Error()), http.StatusSeeOther)
			return
		case err != nil:
			s.failReview(w, r, err)
			return
		}
		done = append(done, acceptedWhat(saved, pr))
	}
	http.Redirect(w, r, backTo(r, id, strings.Join(done, "; ")), http.StatusSeeOther)
}

// acceptedWhat says what accepting pr did: the version the write made, as it returned it.
func acceptedWhat(saved docstore.Saved, pr docstore.Proposal) string {
	switch {
	case saved.Unchanged:
		return fmt.Sprintf("accepted change %d, which leaves the text as it was", pr.Number)
	case pr.Status == docstore.StatusMerged:
		return fmt.Sprintf("accepted change %d, merged with the versions saved since, as version %d (%+d \u2212%d lines)", pr.Number, saved.Document.Version, saved.Added, saved.Removed)
	}
	return fmt.Sprintf("accepted change %d as version %d (%+d \u2212%d lines)", pr.Number, saved.Document.Version, saved.Added, saved.Removed)
}

// inboxListener is an open inbox page: whose, their spaces, and what it shows (inboxMark).
type inboxListener struct {
	person   string
	spaces   []string
	mark     string
	activity bool // an activity page's (activity.go): told of what happened, not of what waits
}

// inboxMark says what an inbox shows, so that a change is told: how many wait, and the
// newest (a new item, or the newest decided, changes it).
func inboxMark(box docstore.Inbox) string {
	if len(box.Items) == 0 {
		return strconv.Itoa(box.Count)
	}
	it := box.Items[0]
	return fmt.Sprintf("%d-%s-%d", box.Count, it.Document.ID, it.At.UnixNano())
}

// subscribeListener listens for changes to what l's page shows after its mark; the
// channel closes when the hub does.
func (h *hub) subscribeListener(l *inboxListener) (chan saved, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, false
	}
	c := make(chan saved, 4)
	h.inboxes[c] = l
	h.fresh = true
	if !h.running {
		h.running = true
		go h.watch()
	}
	return c, true
}

func (h *hub) unsubscribeInbox(c chan saved) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.inboxes, c)
}

// checkInboxes reads each open inbox's newest item and count (one snapshot each, a key a
// space and one item) and tells a page whose inbox changed: event "waiting".
func (h *hub) checkInboxes() {
	h.mu.Lock()
	ls := make(map[chan saved]inboxListener, len(h.inboxes))
	for c, l := range h.inboxes {
		ls[c] = *l
	}
	h.mu.Unlock()
	for c, l := range ls {
		if len(l.spaces) == 0 {
			continue
		}
		if l.activity {
			h.checkActivity(c, l)
			continue
		}
		box, err := docstore.ReadIn(h.ctx, docstore.New(h.s.db, l.spaces[0]), func(rd *docstore.Reader) (docstore.Inbox, error) {
			return rd.Inbox(l.person, l.spaces, "", 1)
		})
		if err != nil {
			continue
		}
		h.moved(c, l, inboxMark(box), saved{event: "waiting", Version: box.Count})
	}
}

// inboxEvents streams the changes of the person's inbox to their open inbox page: event
// "waiting", data {"waiting": how many wait}; the page reads itself again.
func (s *Site) inboxEvents(w http.ResponseWriter, r *http.Request, p who) {
	followInbox.events(s, w, r, inboxListener{person: p.Person, spaces: p.Spaces})
}

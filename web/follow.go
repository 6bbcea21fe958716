package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// A followed page (the inbox, the activity) is a paged list, newest first, whose newest
// page follows what happens: static/follow.js listens to its events (/<name>/events, from
// the mark the page shows) and reads the page again when the hub (checkInboxes) finds
// that the mark moved.
type followed struct {
	name    string             // its template and path: /inbox, /inbox/events
	the     string             // what it is, as its answers say: "the inbox"
	noPage  string             // what an address that names no page of it is told
	maxMark int                // the longest mark its events take (inboxMark, activityMark)
	data    func(saved) string // an event's data, as follow.js reads it
}

var (
	followInbox = followed{name: "inbox", the: "the inbox", maxMark: 100,
		noPage: "This address names no page of your inbox. Its first page is at /inbox.",
		data:   func(ev saved) string { return fmt.Sprintf(`{"waiting": %d}`, ev.Version) }}
	followActivity = followed{name: "activity", the: "the activity", maxMark: 120,
		noPage: "This address names no page of the activity. Its first page is at /activity.",
		data:   func(saved) string { return `{}` }}
)

// show answers with page pg of f once its read is done (err): an address that names no
// page of it is not found, another error fails; a page that follows gets follow.js.
func (f followed) show(s *Site, w http.ResponseWriter, r *http.Request, pg page, err error, follows bool) {
	if errors.Is(err, docstore.ErrBadPosition) {
		s.problem(w, r, http.StatusNotFound, "No such page of "+f.the, f.noPage)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if follows {
		pg.Script = "follow.js"
	}
	s.render(w, r, http.StatusOK, f.name, pg)
}

// events streams to an open page of f what the hub tells listener l (whose mark is the
// request's: what the page shows); the page reads itself again.
func (f followed) events(s *Site, w http.ResponseWriter, r *http.Request, l inboxListener) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "Streaming is not supported here", http.StatusInternalServerError)
		return
	}
	l.mark = r.URL.Query().Get("mark")
	if len(l.mark) > f.maxMark {
		http.Error(w, "Not a mark of "+f.the, http.StatusBadRequest)
		return
	}
	c, ok := s.live.subscribeListener(&l)
	if !ok {
		http.Error(w, "The page is shutting down", http.StatusServiceUnavailable)
		return
	}
	defer s.live.unsubscribeInbox(c)
	stream(w, r, flusher, c, f.data)
}

// moved tells open page c, whose listener was l, that what it shows is now mark (ev),
// unless that is what it shows or it has closed since.
func (h *hub) moved(c chan saved, l inboxListener, mark string, ev saved) {
	if mark == l.mark {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur := h.inboxes[c]; cur != nil {
		cur.mark = mark
		select {
		case c <- ev:
		default:
		}
	}
}

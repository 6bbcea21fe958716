package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// A page follows its document's new versions through a stream of server-sent events.
// Saves may come from this process (the page, or the tools beside it) or from another
// compass-mcp on the same store, so the hub does not wait to be told by its own process.
// While any page listens it learns of commits in one of two ways, and only then reads the
// documents listened to:
//
//   - a store that tells of its commits (Changes: PostgreSQL's LISTEN/NOTIFY, which hears
//     every replica's) wakes it at once; it also reads them every safetyPoll, in case a
//     signal was lost;
//   - otherwise it looks at the data file every Poll (a stat: its size and time change with
//     every commit).

// Changes is what a store that tells of its commits has (kv/pg's DB): a channel that gets
// a signal after any commit on the store, by this process or another, until ctx ends.
type Changes interface {
	Changes(ctx context.Context) <-chan struct{}
}

// safetyPoll is how often a hub told of commits reads the listened-to documents anyway.
const safetyPoll = 2 * time.Second

// saved is the event a page gets when its document has a new version ("saved"), or a new
// proposal ("proposed": Proposal is its number, Kind what the agent did, the lines its).
type saved struct {
	event    string
	Proposal int    `json:"proposal,omitempty"`
	Version  int    `json:"version"`
	Title    string `json:"title"`
	Kind     string `json:"kind"`
	By       string `json:"by"`
	Added    int    `json:"added"`
	Removed  int    `json:"removed"`
}

type hub struct {
	s       *Site
	mu      sync.Mutex
	subs    map[string]map[chan saved]bool // by document id
	latest  map[string]int                 // the latest version each listened-to document is known to have
	props   map[string]int                 // the last proposal each is known to have
	in      map[string]*docstore.Store     // each listened-to document's space
	inboxes map[chan saved]*inboxListener  // the open inbox pages (inbox.go)
	running bool
	closed  bool
	fresh   bool // a listener joined since the last check: check even if the file looks unchanged
	stop    chan struct{}
	changed <-chan struct{} // the store's commits, if it tells of them (Changes); else nil
	ctx     context.Context // the hub's reads: done once it closes
	cancel  context.CancelFunc
}

// newHub makes the hub of s. On a store that tells of its commits it listens from the
// start, not from the first page: a commit made while the listening begins would be missed.
func newHub(s *Site) *hub {
	h := &hub{s: s, subs: map[string]map[chan saved]bool{}, latest: map[string]int{}, props: map[string]int{}, in: map[string]*docstore.Store{}, inboxes: map[chan saved]*inboxListener{}, stop: make(chan struct{})}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	if c, ok := s.db.(Changes); ok {
		h.changed = c.Changes(h.ctx)
	}
	return h
}

// subscribe listens for versions of doc (in docs's space) after version, and proposals
// after proposal; the channel closes when the hub does.
func (h *hub) subscribe(docs *docstore.Store, doc string, version, proposal int) (chan saved, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, false
	}
	c := make(chan saved, 4)
	if h.subs[doc] == nil {
		h.subs[doc] = map[chan saved]bool{}
	}
	h.subs[doc][c] = true
	h.in[doc] = docs
	h.fresh = true
	if h.latest[doc] == 0 || version < h.latest[doc] {
		h.latest[doc] = version
	}
	if known, ok := h.props[doc]; !ok || proposal < known {
		h.props[doc] = proposal
	}
	if !h.running {
		h.running = true
		go h.watch()
	}
	return c, true
}

func (h *hub) unsubscribe(doc string, c chan saved) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs[doc][c] {
		delete(h.subs[doc], c)
		if len(h.subs[doc]) == 0 {
			delete(h.subs, doc)
			delete(h.latest, doc)
			delete(h.props, doc)
			delete(h.in, doc)
		}
	}
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	close(h.stop)
	h.cancel()
	for doc, cs := range h.subs {
		for c := range cs {
			close(c)
		}
		delete(h.subs, doc)
	}
	for c := range h.inboxes {
		close(c)
		delete(h.inboxes, c)
	}
}

// watch runs while anyone listens.
func (h *hub) watch() {
	t := time.NewTicker(h.s.cfg.Poll)
	defer t.Stop()
	var last os.FileInfo
	h.mu.Lock()
	changed, signaled, checked := h.changed, false, time.Now()
	h.mu.Unlock()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		case _, open := <-changed:
			if !open { // the store closed: read on every tick from now on
				changed = nil
				h.mu.Lock()
				h.changed = nil
				h.mu.Unlock()
			}
			signaled = true
		}
		h.mu.Lock()
		if len(h.subs) == 0 && len(h.inboxes) == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		docs := make(map[string]listened, len(h.latest))
		for id, n := range h.latest {
			docs[id] = listened{h.in[id], n, h.props[id]}
		}
		fresh := h.fresh
		h.fresh = false
		h.mu.Unlock()
		switch {
		case changed != nil:
			if !signaled && !fresh && time.Since(checked) < safetyPoll {
				continue
			}
		case h.s.cfg.Path != "":
			fi, err := os.Stat(h.s.cfg.Path)
			unchanged := err == nil && last != nil && fi.ModTime().Equal(last.ModTime()) && fi.Size() == last.Size()
			last = fi
			if unchanged && !fresh {
				continue
			}
		}
		signaled, checked = false, time.Now()
		h.check(docs)
		h.checkInboxes()
	}
}

// listened is a document listened to: where it is, and the latest version known.
type listened struct {
	docs     *docstore.Store
	known    int
	proposal int // the last proposal known
}

// check reads the documents listened to and tells their listeners of newer versions and
// proposals: each document's in one snapshot, with who made them.
func (h *hub) check(docs map[string]listened) {
	for id, l := range docs {
		var (
			d     docstore.Document
			v     docstore.Version
			open  []docstore.Proposal
			names spaces.Names
		)
		err := l.docs.View(h.ctx, func(rd *docstore.Reader) (err error) {
			open = nil
			if d, v, err = rd.Read(id, 0); err != nil || d.ID != id {
				return err
			}
			if proposalsOf(d) > l.proposal {
				if _, open, err = rd.Proposals(id, 0, 1); err != nil {
					return err
				}
			}
			names = rd.Names()
			return nil
		})
		if err != nil || d.ID != id {
			continue
		}
		if len(open) > 0 {
			h.proposed(id, d, open[0], names)
		}
		if d.Version <= l.known {
			continue
		}
		ev := saved{event: "saved", Version: d.Version, Title: d.Title, Kind: string(v.Kind), Added: v.Added, Removed: v.Removed, By: byWhom(names, v.Author)}
		h.mu.Lock()
		if h.latest[id] < d.Version && h.subs[id] != nil {
			h.latest[id] = d.Version
		}
		for c := range h.subs[id] {
			select {
			case c <- ev:
			default: // a page that doesn't read its stream misses an event, not the next
			}
		}
		h.mu.Unlock()
		// No render of the new version starts here: the pages told ask for it, and it is
		// rendered for them as long as one of them waits (an agent saving a version a
		// second costs no render for nobody).
	}
}

// events streams a document's new versions to its open page: event "saved", data the
// version as JSON.
func (s *Site) events(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	docs, d, err := s.byID(r, p, id)
	if err != nil {
		http.Error(w, "No such document", http.StatusNotFound)
		return
	}
	known, err := strconv.Atoi(r.URL.Query().Get("version"))
	if err != nil || known < 1 {
		known = d.Version
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "Streaming is not supported here", http.StatusInternalServerError)
		return
	}
	proposal, err := strconv.Atoi(r.URL.Query().Get("proposals"))
	if err != nil || proposal < 0 {
		proposal = proposalsOf(d)
	}
	c, ok := s.live.subscribe(docs, id, known, proposal)
	if !ok {
		http.Error(w, "The page is shutting down", http.StatusServiceUnavailable)
		return
	}
	defer s.live.unsubscribe(id, c)
	stream(w, r, flusher, c, func(ev saved) string {
		raw, _ := json.Marshal(ev)
		return string(raw)
	})
}

// stream sends the events of c to an open page as server-sent events (data: what data
// makes of each), with a heartbeat, until the page goes or c is closed. The stream lives as
// long as the page is open: no write deadline the server may set for other requests applies
// to it.
func stream(w http.ResponseWriter, r *http.Request, flusher http.Flusher, c <-chan saved, data func(saved) string) {
	http.NewResponseController(w).SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 1000\n\n")
	flusher.Flush()
	beat := time.NewTicker(20 * time.Second)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-beat.C:
			fmt.Fprint(w, ": still here\n\n")
		case ev, open := <-c:
			if !open {
				return
			}
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.event, data(ev))
		}
		flusher.Flush()
	}
}

// proposed tells the listeners of document id of its proposals after the last they know:
// the newest one, p, as an event "proposed" (a page told of it shows the banner anew, which
// lists them).
func (h *hub) proposed(id string, d docstore.Document, p docstore.Proposal, names spaces.Names) {
	last := proposalsOf(d)
	ev := saved{event: "proposed", Proposal: p.Number, Version: d.Version, Title: d.Title, Kind: string(p.Kind), Added: p.Added, Removed: p.Removed, By: byWhom(names, p.Author)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.props[id] < last && h.subs[id] != nil {
		h.props[id] = last
	}
	for c := range h.subs[id] {
		select {
		case c <- ev:
		default:
		}
	}
}

package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/inflight"
)

// weighed makes a page of a document (a route with {id} under /document/) hold room in the
// process's budget for work in flight (inflight.Process) while it is made, as a tool call
// does: weighed by the document's size and what the page does with it
// (docstore.Document.Weight; by the largest version's but on the document's own page), it waits its turn, or
// is answered 503 busy with Retry-After. Other pages, and a document's event stream (which
// lasts, and reads no text), weigh nothing.
func (s *Site) weighed(pattern string, h func(http.ResponseWriter, *http.Request, who)) func(http.ResponseWriter, *http.Request, who) {
	if !strings.Contains(pattern, "/document/{id}") || strings.HasSuffix(pattern, "/events") {
		return h
	}
	work, old := docstore.WorkRead, pattern != "GET /document/{id}"
	switch {
	case strings.HasPrefix(pattern, "POST "):
		work = docstore.WorkWrite
	case strings.HasSuffix(pattern, "/blame"):
		work = docstore.WorkBlame
	case strings.HasSuffix(pattern, "/diff"), strings.Contains(pattern, "/proposal"):
		work = docstore.WorkDiff
	}
	return func(w http.ResponseWriter, r *http.Request, p who) {
		release, err := inflight.Process.Acquire(r.Context(), s.weightOf(r, p, r.PathValue("id"), work, old))
		var busy *inflight.BusyError
		switch {
		case errors.As(err, &busy):
			w.Header().Set("Retry-After", "5")
			s.problem(w, r, http.StatusServiceUnavailable, "Busy", "The server is busy with other large documents ("+busy.Error()+"). Reload this page in a few seconds.")
			return
		case err != nil:
			return // the browser went away
		}
		defer release()
		h(w, r, p)
	}
}

// weightOf is what a call on document id may hold (0 when it isn't found: the page says so).
// It reads the document's record on its own, unless a page of it was weighed in the last
// few seconds (pageHints).
func (s *Site) weightOf(r *http.Request, p who, id string, work docstore.Work, old bool) int64 {
	sizes, ok := pageHints.Get(id)
	if !ok {
		order := p.searchOrder(r.URL.Query().Get("space"))
		if len(order) == 0 {
			return 0
		}
		_ = docstore.New(s.db, order[0]).View(r.Context(), func(first *docstore.Reader) error {
			for _, sp := range order {
				if d, err := first.In(sp).ByID(id); err == nil {
					sizes, ok = [2]int64{int64(d.Bytes), int64(d.Largest)}, true
					pageHints.Put(id, sizes)
					return nil
				}
			}
			return nil
		})
	}
	if !ok {
		return 0
	}
	return docstore.Document{Bytes: int(sizes[0]), Largest: int(sizes[1])}.Weight(work, old)
}

// pageHints are the sizes of documents pages were weighed by lately, by id (a document's
// id is its own in every space and store): each kept 10 s, at most 10,000.
var pageHints = inflight.NewHints(10*time.Second, 10000)

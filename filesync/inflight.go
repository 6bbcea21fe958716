package filesync

import (
	"errors"
	"net/http"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/inflight"
)

// hold makes a request of the sync API hold room in the process's budget for work in
// flight (inflight.Process) while it runs, as a tool call does: weighed by document id's
// size and work (docstore.Document.Weight; old when it reads or merges from an older version) and
// the text the request brings, it waits its turn, or is answered 503 busy with
// Retry-After, which the sync's next pass retries. ok is false when it has answered (or
// the client went away); otherwise release gives the room back.
func (h *served) hold(w http.ResponseWriter, r *http.Request, l Local, id string, text int, work docstore.Work, old bool) (release func(), ok bool) {
	weight := int64(text)
	if id != "" {
		sizes, ok := syncHints.Get(id)
		if !ok {
			d, err := docstore.ReadIn(r.Context(), l.Store, func(rd *docstore.Reader) (docstore.Document, error) { return rd.ByID(id) })
			if err == nil {
				sizes, ok = [2]int64{int64(d.Bytes), int64(d.Largest)}, true
				syncHints.Put(id, sizes)
			}
		}
		if ok {
			weight += docstore.Document{Bytes: int(sizes[0]), Largest: int(sizes[1])}.Weight(work, old)
		}
	}
	release, err := inflight.Process.Acquire(r.Context(), weight)
	var busy *inflight.BusyError
	switch {
	case errors.As(err, &busy):
		w.Header().Set("Retry-After", "5")
		answer(w, http.StatusServiceUnavailable, refusal{Error: busy.Error()})
		return nil, false
	case err != nil:
		return nil, false
	}
	return release, true
}

// syncHints are the sizes of documents sync requests were weighed by lately, by id, so
// that a pass over many documents reads each record once for its weight: each kept 10 s,
// at most 10,000.
var syncHints = inflight.NewHints(10*time.Second, 10000)

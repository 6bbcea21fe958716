package inflight

import (
	"sync"
	"time"
)

// Hints remember the sizes of what calls were weighed by (a document's, by its name), for
// a while, so that weighing a call needs no read of its own when the same thing was
// weighed lately: on PostgreSQL that read is a round trip, each call. A hint may be as old
// as its time to live: a document that grew meanwhile is weighed as it was, until then.
// At most max are kept; when full, they are all forgotten.
type Hints struct {
	ttl time.Duration
	max int

	mu   sync.Mutex
	kept map[string]hint
}

type hint struct {
	sizes [2]int64
	at    time.Time
}

// NewHints keeps at most max hints, each for ttl.
func NewHints(ttl time.Duration, max int) *Hints {
	return &Hints{ttl: ttl, max: max, kept: map[string]hint{}}
}

// Get returns the sizes put under key, unless they are older than the time to live. A nil
// *Hints keeps none.
func (h *Hints) Get(key string) (sizes [2]int64, ok bool) {
	if h == nil {
		return sizes, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	k, ok := h.kept[key]
	if !ok || time.Since(k.at) > h.ttl {
		return sizes, false
	}
	return k.sizes, true
}

// Put keeps sizes under key (a nil *Hints, nothing).
func (h *Hints) Put(key string, sizes [2]int64) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.kept) >= h.max {
		clear(h.kept)
	}
	h.kept[key] = hint{sizes: sizes, at: time.Now()}
}

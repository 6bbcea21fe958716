package web

import (
	"context"
	"fmt"
	"sync"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// blameCache keeps the blames of documents' versions recently shown, so that the page's
// blame of a long document, shown BlameLines at a time, is worked out once per version and
// not once per window (issue 34: a 50,000-version document's blame took 8 s a page, and
// four viewers held both cores). A version's blame never changes: only a new version
// makes a new one. Oldest in, first out, within max bytes (the latest text, its lines'
// headers and the versions named). A blame being worked out is worked out once: other
// viewers of the same version wait for it; if the request working it out goes away, the
// next waiter works it out for itself.
type blameCache struct {
	mu      sync.Mutex
	kept    map[string]*docstore.Blame
	pending map[string]chan struct{} // closed when the blame of a key is kept, or failed
	order   []string
	bytes   int
	max     int

	worked int // blames worked out, for tests
}

func newBlameCache(max int) *blameCache {
	return &blameCache{kept: map[string]*docstore.Blame{}, pending: map[string]chan struct{}{}, max: max}
}

// blameKey names version n of document id in space.
func blameKey(space, id string, n int) string { return fmt.Sprintf("%s/%s/%d", space, id, n) }

// blameSize is about the memory bl holds.
func blameSize(bl *docstore.Blame) int {
	n := len(bl.Lines)*16 + len(bl.Runs)*24 + len(bl.Versions)*160
	for _, l := range bl.Lines {
		n += len(l)
	}
	return n
}

// blame returns the blame of document d's version d.Version in store, from the cache or
// worked out (store.Blame) and kept. A blame worked out finds the latest version, which may
// be newer than d's by then: it is kept under its own version and returned all the same.
func (c *blameCache) blame(ctx context.Context, store *docstore.Store, d docstore.Document) (*docstore.Blame, error) {
	key := blameKey(store.Space(), d.ID, d.Version)
	for {
		c.mu.Lock()
		if bl, ok := c.kept[key]; ok {
			c.mu.Unlock()
			return bl, nil
		}
		wait, busy := c.pending[key]
		if !busy {
			done := make(chan struct{})
			c.pending[key] = done
			c.worked++
			c.mu.Unlock()
			bl, err := store.Blame(ctx, d.ID)
			c.mu.Lock()
			delete(c.pending, key)
			close(done)
			if err == nil {
				c.keep(blameKey(store.Space(), d.ID, bl.Document.Version), &bl)
			}
			c.mu.Unlock()
			return &bl, err
		}
		c.mu.Unlock()
		select {
		case <-wait: // kept, or failed (its request went away): look again
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// keep adds bl under key, forgetting the oldest blames as room needs; a blame bigger than
// the whole cache is not kept. c.mu is held.
func (c *blameCache) keep(key string, bl *docstore.Blame) {
	size := blameSize(bl)
	if size > c.max {
		return
	}
	if _, ok := c.kept[key]; ok {
		return
	}
	for c.bytes+size > c.max && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= blameSize(c.kept[old])
		delete(c.kept, old)
	}
	c.kept[key] = bl
	c.order = append(c.order, key)
	c.bytes += size
}

package web

import (
	"context"
	"fmt"
	"html/template"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// renderSlots is how many renders run at once, at most: each may use its whole budget, so
// a burst of hostile versions takes a few cores' worth of renderCPU at a time, not all.
var renderSlots = min(4, max(2, runtime.NumCPU()/2))

// renderCache keeps the HTML of versions recently shown: a version never changes, so its
// HTML can be kept as long as room allows, and a page opened by several browsers, or
// reloaded by a live update, renders each version once. Oldest in, first out, within max
// bytes of HTML. A version being rendered is rendered once: other callers wait for it, and
// it stops when the last of them stops waiting (their requests' contexts end). At most
// cap(slots) renders run at once; the others wait for a slot, as long as someone waits
// for them. A render cut short by its wall time (a busy machine) is shown, not kept.
type renderCache struct {
	mu      sync.Mutex
	html    map[string]template.HTML
	pending map[string]*inFlight
	order   []string
	bytes   int
	max     int
	slots   chan struct{}
	budget  time.Duration // the CPU each render may use (renderCPU)

	started, running, mostRunning atomic.Int64 // renders begun, running now, and most at once: for tests
}

// inFlight is a version being rendered, and who waits for it.
type inFlight struct {
	done    chan struct{} // closed once html and err are set
	html    template.HTML
	err     error
	waiting int
	cancel  context.CancelFunc
}

func newRenderCache(max int) *renderCache {
	return &renderCache{html: map[string]template.HTML{}, pending: map[string]*inFlight{}, max: max,
		slots: make(chan struct{}, renderSlots), budget: renderCPU}
}

// linked returns the HTML of version n of document id, whose text is text, with the
// [[links]] of lv (kept apart from the same version's HTML with other targets: a document
// since made, renamed or deleted), or ctx's error if ctx ends first.
func (c *renderCache) linked(ctx context.Context, id string, n int, text string, lv *linkView) (template.HTML, error) {
	key := fmt.Sprintf("%s/%d/%s", id, n, lv.key())
	for {
		c.mu.Lock()
		if h, ok := c.html[key]; ok {
			c.mu.Unlock()
			return h, nil
		}
		f := c.pending[key]
		if f == nil {
			f = c.start(key, text, lv)
		}
		f.waiting++
		c.mu.Unlock()
		select {
		case <-f.done:
			if f.err == nil {
				return f.html, nil
			}
			// Cancelled as the last caller before us left: render it again, for us.
			if err := ctx.Err(); err != nil {
				return "", err
			}
		case <-ctx.Done():
			c.mu.Lock()
			if f.waiting--; f.waiting == 0 {
				f.cancel()
				if c.pending[key] == f {
					delete(c.pending, key) // the next caller starts afresh
				}
			}
			c.mu.Unlock()
			return "", ctx.Err()
		}
	}
}

// start renders text in the background, as key; c.mu is held.
func (c *renderCache) start(key, text string, lv *linkView) *inFlight {
	ctx, cancel := context.WithCancel(context.Background())
	f := &inFlight{done: make(chan struct{}), cancel: cancel}
	c.pending[key] = f
	c.started.Add(1)
	go func() {
		defer cancel()
		h, keep, err := c.render(ctx, text, lv)
		c.mu.Lock()
		defer c.mu.Unlock()
		defer close(f.done)
		f.html, f.err = h, err
		if c.pending[key] == f {
			delete(c.pending, key)
		}
		if err == nil && keep {
			c.keep(key, h)
		}
	}()
	return f
}

// render renders text in a slot, once one is free (see renderWithin).
func (c *renderCache) render(ctx context.Context, text string, lv *linkView) (template.HTML, bool, error) {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return "", false, ctx.Err()
	}
	defer func() { <-c.slots }()
	now := c.running.Add(1)
	defer c.running.Add(-1)
	for most := c.mostRunning.Load(); now > most && !c.mostRunning.CompareAndSwap(most, now); most = c.mostRunning.Load() {
	}
	return renderLinked(ctx, text, c.budget, lv)
}

// keep adds h to the cache, unless it's too large to; c.mu is held.
func (c *renderCache) keep(key string, h template.HTML) {
	if len(h) > c.max/4 {
		return
	}
	c.html[key] = h
	c.order = append(c.order, key)
	c.bytes += len(h)
	for c.bytes > c.max && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(c.html[old])
		delete(c.html, old)
	}
}

package semantic

import (
	"context"
	"sync"

	"github.com/compass-mcp/compass-mcp/kv"
)

// Tier is the semantic tier of a server: an Index a space, made when the space is first
// searched or written, each kept up to date in the background (Index.Run) for as long as
// the Tier's context when Background is set.
type Tier struct {
	db         kv.DB
	c          *Client
	o          Options
	ctx        context.Context
	background bool

	mu      sync.Mutex
	indexes map[string]*Index
}

// NewTier is the tier of db asking c for vectors; with background, each space's index is
// kept up to date by a goroutine of its own until ctx is done.
func NewTier(ctx context.Context, db kv.DB, c *Client, o Options, background bool) *Tier {
	return &Tier{db: db, c: c, o: o, ctx: ctx, background: background, indexes: map[string]*Index{}}
}

// Space is the index of space, made (and started) the first time it is asked for.
func (t *Tier) Space(space string) *Index {
	t.mu.Lock()
	defer t.mu.Unlock()
	x := t.indexes[space]
	if x == nil {
		x = NewIndex(t.db, space, t.c, t.o)
		t.indexes[space] = x
		if t.background {
			go x.Run(t.ctx)
		}
	}
	return x
}

// Model is the model the tier asks for.
func (t *Tier) Model() string { return t.c.Model }

// Endpoint is the endpoint's URL as a page may show it (Client.Endpoint).
func (t *Tier) Endpoint() string { return t.c.Endpoint() }

// Progress is how far space's index has got (Index.Progress), its endpoint's failure
// redacted (Client.Redact); false when nothing has asked for the space's index yet (an
// agent's first search or change of the space starts it): showing it starts nothing.
func (t *Tier) Progress(space string) (Status, bool) {
	t.mu.Lock()
	x := t.indexes[space]
	t.mu.Unlock()
	if x == nil {
		return Status{Model: t.c.Model}, false
	}
	st := x.Progress()
	st.Down = t.c.Redact(st.Down)
	return st, true
}

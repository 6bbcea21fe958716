package pg

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// changes fans the database's NOTIFYs out to this process's listeners, over one
// connection of its own (not the pool's: it waits for notifications for good).
type changes struct {
	db      *DB
	mu      sync.Mutex
	subs    map[chan struct{}]struct{}
	stop    context.CancelFunc
	stopped chan struct{}
	closed  bool
}

// Changes returns a channel that receives a signal after any write transaction on the
// store committed, on this replica or another, until ctx ends (then it is closed). Signals
// are coalesced: one may stand for several commits, and a listener that is slow to read
// misses none but the duplicates. Whenever the listening connection is made (the first
// time, and again after it was lost), a signal is sent too, since commits may have been
// made before it listened. A listener should read what it shows again on every signal.
func (db *DB) Changes(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	c := &db.changes
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		close(ch)
		return ch
	}
	if c.subs == nil {
		c.subs = map[chan struct{}]struct{}{}
	}
	c.subs[ch] = struct{}{}
	if c.stop == nil {
		lctx, stop := context.WithCancel(context.Background())
		c.stop, c.stopped = stop, make(chan struct{})
		go c.listen(lctx)
	}
	c.mu.Unlock()
	go func() {
		<-ctx.Done()
		c.mu.Lock()
		if _, ok := c.subs[ch]; ok {
			delete(c.subs, ch)
			close(ch)
		}
		c.mu.Unlock()
	}()
	return ch
}

// committed signals every listener of this process.
func (c *changes) committed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default: // a signal is already waiting
		}
	}
}

func (c *changes) close() {
	c.mu.Lock()
	c.closed = true
	stop, stopped := c.stop, c.stopped
	for ch := range c.subs {
		close(ch)
	}
	c.subs = nil
	c.mu.Unlock()
	if stop != nil {
		stop()
		<-stopped
	}
}

// listen keeps a LISTEN connection, making it again (after 100 ms, doubling to 5 s) when
// it is lost, until ctx ends.
func (c *changes) listen(ctx context.Context) {
	defer close(c.stopped)
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		connected, err := c.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if connected {
			wait = 100 * time.Millisecond
		}
		slog.Warn("listening for the database's changes: lost the connection, trying again", "wait", wait, "err", c.db.wrap(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// session listens on one connection until it fails.
func (c *changes) session(ctx context.Context) (connected bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, c.db.timeout)
	conn, err := pgx.ConnectConfig(cctx, c.db.pool.Config().ConnConfig)
	if err == nil {
		_, err = conn.Exec(cctx, "LISTEN "+pgx.Identifier{c.db.channel}.Sanitize())
	}
	cancel()
	if conn != nil {
		defer conn.Close(context.Background())
	}
	if err != nil {
		return false, err
	}
	// What was committed before this connection listened (while it was made, the first
	// time: the listeners are already waiting; or since the last one was lost).
	c.committed()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return true, err
		}
		c.committed()
	}
}

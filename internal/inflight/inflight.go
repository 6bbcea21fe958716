// Package inflight bounds the bytes that work in progress may hold at once: a call is
// weighed before it starts (by the size of the document it will read, rebuild, diff or
// merge), waits its turn when the budget is spent, and is refused as busy when it would
// wait too long.
//
// Turns are first come, first served: a large call waiting holds up the ones behind it,
// so that a stream of smaller ones cannot starve it. A call larger than the whole budget
// runs alone (it waits until nothing else large is held). Calls of at most Small bytes are
// never held up: they are counted, and start at once, so that a small read answers during
// a burst of large ones.
package inflight

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of a Budget made by New.
const (
	// DefaultLimit is the bytes calls in progress may hold when nothing says otherwise:
	// room for a few large documents' work on a small machine.
	DefaultLimit = 256 << 20
	// DefaultSmall is the weight under which a call never waits.
	DefaultSmall = 1 << 20
	// DefaultWait is the longest a call waits for its turn before it is refused as busy:
	// half the minute an MCP client commonly waits for a call, so that the call still has
	// time to run once its turn comes.
	DefaultWait = 30 * time.Second
	// DefaultMaxWaiting is how many calls may wait at once; one more is refused at once.
	DefaultMaxWaiting = 256
)

// BusyError is returned by Acquire when a call would wait too long: longer than the
// budget's wait, past its deadline, or behind too many others. Its text is what a model
// reads: the server is busy, and retrying in a few seconds will do.
type BusyError struct {
	Waiting int // calls waiting for their turn when this one gave up
}

func (e *BusyError) Error() string {
	if e.Waiting == 1 {
		return "busy: 1 call is waiting; retry in a few seconds"
	}
	return fmt.Sprintf("busy: %d calls are waiting; retry in a few seconds", e.Waiting)
}

// Budget is a process's bytes for work in flight. The zero value is not usable: New.
type Budget struct {
	// Small is the weight under which a call starts at once; Wait the longest a call waits;
	// MaxWaiting how many may wait at once. Set them before the first Acquire.
	Small      int64
	Wait       time.Duration
	MaxWaiting int

	mu       sync.Mutex
	limit    int64
	held     int64 // by every call in progress
	large    int64 // by the calls over Small: what a waiting call must fit beside
	running  int
	queue    []*waiter // first come first
	peak     int64     // the most held at once
	refused  int64     // calls refused as busy
	admitted int64     // calls that got their turn
	logged   time.Time // when a refusal was last logged
}

type waiter struct {
	n     int64
	ready chan struct{} // closed when the call's turn has come (n is then held)
}

// New returns a budget of limit bytes (at least 1), with the defaults above.
func New(limit int64) *Budget {
	return &Budget{limit: max(limit, 1), Small: DefaultSmall, Wait: DefaultWait, MaxWaiting: DefaultMaxWaiting}
}

// SetLimit changes the budget's bytes (at least 1); calls waiting get their turn if it
// has come.
func (b *Budget) SetLimit(limit int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limit = max(limit, 1)
	b.wake()
}

// Acquire waits until n bytes may be held (a call of more than the budget holds all of
// it, alone), and returns the func that gives them back, to be called once the call is
// done. It returns a *BusyError when the call would wait longer than the budget's Wait or
// past ctx's deadline, or behind MaxWaiting others, and ctx's error when ctx is canceled
// first. Nothing is held when it returns an error.
func (b *Budget) Acquire(ctx context.Context, n int64) (release func(), err error) {
	n = max(n, 0)
	b.mu.Lock()
	if n > b.limit {
		n = b.limit
	}
	if n <= b.Small || (len(b.queue) == 0 && b.large+n <= b.limit) {
		b.take(n)
		b.mu.Unlock()
		return b.releaser(n), nil
	}
	if err := ctx.Err(); err != nil {
		b.mu.Unlock()
		return nil, err
	}
	if len(b.queue) >= b.MaxWaiting {
		busy := &BusyError{Waiting: len(b.queue)}
		b.refuse(n)
		b.mu.Unlock()
		return nil, busy
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	b.queue = append(b.queue, w)
	b.mu.Unlock()

	timer := time.NewTimer(b.Wait)
	defer timer.Stop()
	select {
	case <-w.ready:
		return b.releaser(n), nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // its turn came as it gave up: take it after all
		return b.releaser(n), nil
	default:
	}
	for i, q := range b.queue {
		if q == w {
			b.queue = append(b.queue[:i], b.queue[i+1:]...)
			break
		}
	}
	b.wake() // the one behind it may fit where it didn't
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		b.refuse(n)
		return nil, &BusyError{Waiting: len(b.queue) + 1}
	}
	return nil, err
}

// refuse counts a call of n bytes refused as busy, and says so in the log, at most once
// every 10 s (with how many were refused since). b.mu is held.
func (b *Budget) refuse(n int64) {
	b.refused++
	if now := time.Now(); now.Sub(b.logged) >= 10*time.Second {
		b.logged = now
		slog.Warn("busy: a call was refused, the memory for work in flight is in use (--memory)",
			"call", FormatSize(n), "held", FormatSize(b.held), "limit", FormatSize(b.limit), "running", b.running, "waiting", len(b.queue), "refused", b.refused)
	}
}

// take holds n bytes for a call that starts. b.mu is held.
func (b *Budget) take(n int64) {
	b.held += n
	if n > b.Small {
		b.large += n
	}
	b.running++
	b.admitted++
	b.peak = max(b.peak, b.held)
}

// releaser is the func that gives n bytes back, once however often it is called.
func (b *Budget) releaser(n int64) func() {
	large := n > b.Small // as take counted it (b.Small is set before the first Acquire)
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.held -= n
			if large {
				b.large -= n
			}
			b.running--
			b.wake()
		})
	}
}

// wake gives the calls at the head of the queue their turn while they fit beside the
// large calls in progress (small ones are not waited for); a call larger than what is
// free waits, and so do those behind it. b.mu is held.
func (b *Budget) wake() {
	for len(b.queue) > 0 {
		w := b.queue[0]
		if b.large+w.n > b.limit {
			return
		}
		b.queue = b.queue[1:]
		b.take(w.n)
		close(w.ready)
	}
}

// Stats is what a budget holds now, and has done.
type Stats struct {
	Limit    int64 `json:"limit"`    // bytes calls in progress may hold
	Held     int64 `json:"held"`     // bytes held now
	Running  int   `json:"running"`  // calls holding bytes now
	Waiting  int   `json:"waiting"`  // calls waiting for their turn
	Peak     int64 `json:"peak"`     // the most bytes held at once since the start
	Admitted int64 `json:"admitted"` // calls that got their turn since the start
	Refused  int64 `json:"refused"`  // calls refused as busy since the start
}

// Stats says what b holds now.
func (b *Budget) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{Limit: b.limit, Held: b.held, Running: b.running, Waiting: len(b.queue), Peak: b.peak, Admitted: b.admitted, Refused: b.refused}
}

// Process is this process's budget: every front door (the tools, the page, the sync
// API) weighs its calls against it. The command line sets its limit (--memory).
var Process = New(DefaultLimit)

// ParseSize reads a size of memory: a number of bytes, or one with a unit, B, KiB, MiB,
// GiB or TiB (KB, MB, GB and TB are read as the same powers of 1,024, K, M, G and T too;
// case and a space before the unit aside): 256MiB, 1GiB, 1.5 GiB. It refuses anything
// else, and a size under 1 MiB or over 1 PiB, saying why.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	shift, ok := units[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("%q: a size like 256MiB or 1GiB (units B, KiB, MiB, GiB, TiB)", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("%q: a size like 256MiB or 1GiB: %q is not a number", s, num)
	}
	bytes := f * float64(int64(1)<<shift)
	switch {
	case bytes < 1<<20:
		return 0, fmt.Errorf("%q: at least 1MiB (a single large document's work needs tens of MiB)", s)
	case bytes > 1<<50:
		return 0, fmt.Errorf("%q: at most 1PiB", s)
	}
	return int64(bytes), nil
}

var units = map[string]uint{
	"": 0, "b": 0,
	"k": 10, "kb": 10, "kib": 10,
	"m": 20, "mb": 20, "mib": 20,
	"g": 30, "gb": 30, "gib": 30,
	"t": 40, "tb": 40, "tib": 40,
}

// FormatSize writes n bytes as a person reads them: 256 MiB, 1.5 GiB, 512 KiB.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30:
		return trimZero(float64(n)/(1<<30)) + " GiB"
	case n >= 1<<20:
		return trimZero(float64(n)/(1<<20)) + " MiB"
	case n >= 1<<10:
		return trimZero(float64(n)/(1<<10)) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

func trimZero(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(strconv.FormatFloat(f, 'f', 1, 64), "0"), ".")
}

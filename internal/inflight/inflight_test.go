package inflight

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/wait"
)

const mib = 1 << 20

// budget is a budget of limit MiB whose calls under 1 KiB never wait, and that waits up
// to a minute (a test that needs a call refused sets Wait itself).
func budget(limit int64) *Budget {
	b := New(limit * mib)
	b.Small = 1 << 10
	b.Wait = time.Minute
	return b
}

// waitFor waits (at most 10 s) until n calls wait on b.
func waitFor(t *testing.T, b *Budget, n int) {
	t.Helper()
	wait.Until(t, 10*time.Second, fmt.Sprintf("%d calls waiting", n), func() bool { return b.Stats().Waiting == n })
}

// acquireAsync starts Acquire(n MiB) and hands its outcome on the channel.
func acquireAsync(ctx context.Context, b *Budget, n int64) chan result {
	out := make(chan result, 1)
	go func() {
		rel, err := b.Acquire(ctx, n*mib)
		out <- result{rel, err}
	}()
	return out
}

type result struct {
	release func()
	err     error
}

func must(t *testing.T, r result) func() {
	t.Helper()
	if r.err != nil {
		t.Fatalf("Acquire: %v", r.err)
	}
	return r.release
}

func TestCallsThatFitStartAtOnce(t *testing.T) {
	b := budget(100)
	var rels []func()
	for range 4 {
		rel, err := b.Acquire(t.Context(), 25*mib)
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, rel)
	}
	if s := b.Stats(); s.Held != 100*mib || s.Running != 4 || s.Waiting != 0 {
		t.Fatalf("stats %+v, want 100 MiB held by 4, none waiting", s)
	}
	for _, rel := range rels {
		rel()
		rel() // twice gives back once
	}
	if s := b.Stats(); s.Held != 0 || s.Running != 0 || s.Peak != 100*mib || s.Admitted != 4 {
		t.Fatalf("stats %+v, want nothing held, peak 100 MiB, 4 admitted", s)
	}
}

// Turns are first come, first served: a large call waiting holds up a smaller one that
// came after it, though the smaller one would fit.
func TestTurnsAreFirstComeFirstServed(t *testing.T) {
	b := budget(100)
	first, _ := b.Acquire(t.Context(), 60*mib)
	big := acquireAsync(t.Context(), b, 80) // doesn't fit beside 60
	waitFor(t, b, 1)
	small := acquireAsync(t.Context(), b, 30) // would fit beside 60, but comes after 80
	waitFor(t, b, 2)
	select {
	case r := <-small:
		t.Fatalf("the later, smaller call went first (err %v)", r.err)
	default:
	}
	first()
	relBig := must(t, <-big)
	waitFor(t, b, 1) // 30 doesn't fit beside 80
	relBig()
	must(t, <-small)()
	if s := b.Stats(); s.Held != 0 || s.Waiting != 0 {
		t.Fatalf("stats %+v, want nothing held or waiting", s)
	}
}

// Many waiting calls get their turns in the order they came.
func TestOrderOfManyWaiting(t *testing.T) {
	b := budget(10)
	hold, _ := b.Acquire(t.Context(), 10*mib)
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i := range 20 {
		wg.Go(func() {
			rel, err := b.Acquire(t.Context(), 10*mib)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			rel()
		})
		waitFor(t, b, i+1) // the i-th in the queue before the next comes
	}
	hold()
	wg.Wait()
	for i, n := range order {
		if n != i {
			t.Fatalf("turns in the order %v, want 0 to 19", order)
		}
	}
}

// A call larger than the whole budget runs alone: it waits for the large calls in
// progress, and those after it wait for it.
func TestOversizedCallRunsAlone(t *testing.T) {
	b := budget(100)
	a, _ := b.Acquire(t.Context(), 40*mib)
	huge := acquireAsync(t.Context(), b, 500)
	waitFor(t, b, 1)
	after := acquireAsync(t.Context(), b, 10)
	waitFor(t, b, 2)
	a()
	relHuge := must(t, <-huge)
	if s := b.Stats(); s.Held != 100*mib || s.Running != 1 || s.Waiting != 1 {
		t.Fatalf("stats %+v, want the oversized call alone holding the whole budget, one waiting", s)
	}
	relHuge()
	must(t, <-after)()
	// Alone from the start: it runs at once.
	rel, err := b.Acquire(t.Context(), 1<<40)
	if err != nil {
		t.Fatal(err)
	}
	rel()
}

// A call under Small never waits, even behind a queue, and doesn't hold large ones up.
func TestSmallCallsNeverWait(t *testing.T) {
	b := budget(10)
	hold, _ := b.Acquire(t.Context(), 10*mib)
	waiting := acquireAsync(t.Context(), b, 5)
	waitFor(t, b, 1)
	for range 100 {
		rel, err := b.Acquire(t.Context(), 512)
		if err != nil {
			t.Fatal(err)
		}
		defer rel()
	}
	hold()
	must(t, <-waiting)() // the 100 small calls still held don't keep it waiting
}

// A canceled call leaves the queue at once, with ctx's error, and the call behind it gets
// the turn it was holding up.
func TestCanceledCallLeavesTheQueue(t *testing.T) {
	b := budget(100)
	hold, _ := b.Acquire(t.Context(), 50*mib)
	ctx, cancel := context.WithCancel(t.Context())
	big := acquireAsync(ctx, b, 80)
	waitFor(t, b, 1)
	behind := acquireAsync(t.Context(), b, 40) // fits beside 50, but waits behind 80
	waitFor(t, b, 2)
	cancel()
	if r := <-big; !errors.Is(r.err, context.Canceled) || r.release != nil {
		t.Fatalf("a canceled wait: %v, want context.Canceled and nothing held", r.err)
	}
	must(t, <-behind)()
	hold()
	if s := b.Stats(); s.Held != 0 || s.Waiting != 0 || s.Refused != 0 {
		t.Fatalf("stats %+v, want nothing held, waiting or refused", s)
	}
	// Already canceled, and it would have to wait: refused before queueing.
	hold, _ = b.Acquire(t.Context(), 100*mib)
	defer hold()
	if _, err := b.Acquire(ctx, 10*mib); !errors.Is(err, context.Canceled) {
		t.Fatalf("a canceled call: %v, want context.Canceled", err)
	}
}

// A call that waits past the budget's Wait, or its deadline, is refused as busy, saying
// how many wait; one that would wait behind MaxWaiting others is refused at once.
func TestWaitingTooLongIsBusy(t *testing.T) {
	b := budget(10)
	b.Wait = 20 * time.Millisecond
	hold, _ := b.Acquire(t.Context(), 10*mib)
	_, err := b.Acquire(t.Context(), 5*mib)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Waiting != 1 {
		t.Fatalf("a call past its wait: %v, want busy with 1 waiting", err)
	}
	if got, want := err.Error(), "busy: 1 call is waiting; retry in a few seconds"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}

	b.Wait = time.Minute
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := b.Acquire(ctx, 5*mib); !errors.As(err, &busy) {
		t.Fatalf("a call past its deadline: %v, want busy", err)
	}

	b.MaxWaiting = 3
	var outs []chan result
	for i := range 3 {
		outs = append(outs, acquireAsync(t.Context(), b, 5))
		waitFor(t, b, i+1)
	}
	_, err = b.Acquire(t.Context(), 5*mib)
	if !errors.As(err, &busy) || busy.Waiting != 3 {
		t.Fatalf("a call behind 3 waiting: %v, want busy with 3 waiting", err)
	}
	if got, want := err.Error(), "busy: 3 calls are waiting; retry in a few seconds"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	if s := b.Stats(); s.Refused != 3 {
		t.Fatalf("stats %+v, want 3 refused", s)
	}
	hold()
	for _, out := range outs {
		must(t, <-out)()
	}
	if s := b.Stats(); s.Held != 0 || s.Waiting != 0 {
		t.Fatalf("stats %+v, want nothing held or waiting", s)
	}
}

// Many calls at once, some canceled: whatever the interleaving, nothing is held at the
// end and the budget was never overspent by large calls.
func TestManyAtOnce(t *testing.T) {
	b := budget(64)
	var (
		mu      sync.Mutex
		large   int64
		overrun bool
		wg      sync.WaitGroup
	)
	for i := range 200 {
		wg.Go(func() {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if i%7 == 0 {
				cancel()
			}
			n := int64(i%9+1) * 8 * mib
			rel, err := b.Acquire(ctx, n)
			if err != nil {
				return
			}
			n = min(n, 64*mib)
			mu.Lock()
			large += n
			overrun = overrun || large > 64*mib
			mu.Unlock()
			for range i % 3 { // held a while: the others try meanwhile
				runtime.Gosched()
			}
			mu.Lock()
			large -= n
			mu.Unlock()
			rel()
		})
	}
	wg.Wait()
	if overrun {
		t.Error("large calls held more than the budget at once")
	}
	if s := b.Stats(); s.Held != 0 || s.Running != 0 || s.Waiting != 0 || s.Peak > 64*mib {
		t.Fatalf("stats %+v, want nothing held at the end and a peak within 64 MiB", s)
	}
}

func TestSetLimitWakesWaiting(t *testing.T) {
	b := budget(10)
	hold, _ := b.Acquire(t.Context(), 10*mib)
	defer hold()
	w := acquireAsync(t.Context(), b, 10)
	waitFor(t, b, 1)
	b.SetLimit(20 * mib)
	must(t, <-w)()
}

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"256MiB": 256 << 20, "1GiB": 1 << 30, "1 GiB": 1 << 30, "1.5GiB": 3 << 29, "512mb": 512 << 20,
		"2G": 2 << 30, "1048576": 1 << 20, "4096KiB": 4 << 20, " 64 MiB ": 64 << 20, "1TiB": 1 << 40,
	}
	for in, want := range good {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "lots", "-1GiB", "256 MiBs", "1e9", "0", "100KiB", "1.2.3MiB", "2PiB", "99999999TiB", "NaN", "Inf"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
	if got := FormatSize(256 << 20); got != "256 MiB" {
		t.Errorf("FormatSize(256 MiB) = %q", got)
	}
	if got := FormatSize(3 << 29); got != "1.5 GiB" {
		t.Errorf("FormatSize(1.5 GiB) = %q", got)
	}
}

func TestHints(t *testing.T) {
	h := NewHints(time.Hour, 2)
	if _, ok := h.Get("a"); ok {
		t.Fatal("a hint never put")
	}
	h.Put("a", [2]int64{1, 2})
	if got, ok := h.Get("a"); !ok || got != [2]int64{1, 2} {
		t.Fatalf("Get(a) = %v, %v", got, ok)
	}
	h.Put("b", [2]int64{3, 4})
	h.Put("c", [2]int64{5, 6}) // full: the others are forgotten
	if _, ok := h.Get("a"); ok {
		t.Fatal("a kept past max")
	}
	if got, ok := h.Get("c"); !ok || got != [2]int64{5, 6} {
		t.Fatalf("Get(c) = %v, %v", got, ok)
	}
	old := NewHints(-time.Second, 10) // every hint older than its time to live
	old.Put("a", [2]int64{1, 2})
	if _, ok := old.Get("a"); ok {
		t.Fatal("a hint past its time to live")
	}
}

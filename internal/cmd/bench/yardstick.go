package main

import (
	"crypto/sha256"
	"runtime"
	"sync"
	"time"
)

// yardstick gauges how fast the machine runs one fixed piece of work, in CPU time, while a
// load runs beside it: a piece every 250 ms, on a thread of its own (about 1% of a core).
// A load whose work a call doesn't change (its buffers a call say so) and whose CPU a call
// and latencies rise with the yardstick's met a slower machine (a neighbour on the core's
// other hyperthread, a lower clock: neither shows as steal time or as other processes'
// share of the cores), not slower code.
type yardstick struct {
	mu    sync.Mutex
	cpu   time.Duration // CPU time of the pieces since the last take
	n     int
	done  chan struct{}
	ended sync.WaitGroup
}

// yardPiece is the fixed piece of work: hashing 1 MiB.
var yardPiece = make([]byte, 1<<20)

func startYardstick() *yardstick {
	y := &yardstick{done: make(chan struct{})}
	y.ended.Go(func() {
		runtime.LockOSThread() // the thread's CPU time is the piece's
		defer runtime.UnlockOSThread()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-y.done:
				return
			case <-t.C:
			}
			before, ok := threadCPU()
			sha256.Sum256(yardPiece)
			after, ok2 := threadCPU()
			if ok && ok2 {
				y.mu.Lock()
				y.cpu += after - before
				y.n++
				y.mu.Unlock()
			}
		}
	})
	return y
}

// take returns the mean CPU time of a piece since the last take (0: none was measured).
func (y *yardstick) take() time.Duration {
	y.mu.Lock()
	defer y.mu.Unlock()
	var d time.Duration
	if y.n > 0 {
		d = y.cpu / time.Duration(y.n)
	}
	y.cpu, y.n = 0, 0
	return d
}

func (y *yardstick) close() {
	close(y.done)
	y.ended.Wait()
}

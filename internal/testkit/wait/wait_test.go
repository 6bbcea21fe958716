package wait

import (
	"sync/atomic"
	"testing"
	"time"
)

// Until returns once another goroutine makes the condition true; For says false when it
// never does, after looking at it once more at the deadline.
func TestUntilAndFor(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 100 {
			n.Add(1)
		}
	}()
	Until(t, time.Minute, "100 counted", func() bool { return n.Load() == 100 })

	looks := 0
	if For(20*time.Millisecond, func() bool { looks++; return false }) {
		t.Fatal("For said true of a condition that never holds")
	}
	if looks < 2 {
		t.Errorf("the condition was looked at %d times, want at the start and at the deadline at least", looks)
	}
}

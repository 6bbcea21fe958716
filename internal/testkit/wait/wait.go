// Package wait is how a test waits for what another goroutine or process makes true and
// tells of by no event it could receive: a row gone from pg_stat_activity, a count
// reached, a line a subprocess printed, a file there. Until looks at the condition on a
// ticker until it holds or a deadline passes, and fails the test saying what it waited for.
//
// A test never waits for time to pass (a sleep, or a loop over time.After): it waits on a
// channel when there is one, and here when there is none. internal/style's TestNoSleeps
// keeps it so. Only tests import it.
package wait

import (
	"testing"
	"time"
)

// Until returns as soon as cond holds, looking every millisecond at first and at most every
// 50 ms after, and fails t (Fatalf, so from the test's goroutine) when it still doesn't hold
// after within, saying what it waited for. cond may fail t itself.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !For(within, cond) {
		t.Fatalf("waited %v for %s: it did not happen", within, what)
	}
}

// For returns true as soon as cond holds, as Until, or false when it still doesn't after
// within: for a caller that says itself what went wrong.
func For(within time.Duration, cond func() bool) bool {
	if cond() {
		return true
	}
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	every := time.Millisecond
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if cond() {
				return true
			}
			if every < 50*time.Millisecond {
				every = min(2*every, 50*time.Millisecond)
				tick.Reset(every)
			}
		case <-deadline.C:
			return cond()
		}
	}
}

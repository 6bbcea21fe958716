//go:build !linux

package web

import "time"

// threadCPU returns the time since it was called: where a thread's CPU time can't be read,
// a render's budget is wall time, which is never less.
func threadCPU() func() time.Duration {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }
}

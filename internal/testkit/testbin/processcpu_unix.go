//go:build unix

package testbin

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time this process has used so far: on a machine others share, a
// benchmark's CPU time per operation says what it costs better than its wall time.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

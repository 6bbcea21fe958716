package testbin

import (
	"syscall"
	"time"
)

// ThreadCPU is the CPU time the calling thread has used (the caller locks its goroutine to
// the thread, runtime.LockOSThread): what a piece of work costs on a machine others load,
// without the waits for a core that wall time counts too.
func ThreadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

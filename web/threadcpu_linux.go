package web

import (
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD: getrusage of the calling thread alone.
const rusageThread = 1

// threadCPU returns a clock of the CPU time the calling OS thread has used: a render locks
// its goroutine to its thread (runtime.LockOSThread) and reads it, so that its budget is
// the CPU it used, whatever else the machine is doing.
func threadCPU() func() time.Duration {
	return func() time.Duration {
		var ru syscall.Rusage
		if syscall.Getrusage(rusageThread, &ru) != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
}

package main

import (
	"syscall"
	"time"
)

// threadCPU is the calling thread's CPU time (getrusage RUSAGE_THREAD, Linux).
func threadCPU() (time.Duration, bool) {
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

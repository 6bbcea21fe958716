//go:build !linux

package mdscan

import "time"

// threadCPU is not measured here: the bounds are checked on Linux only.
func threadCPU() time.Duration { return 0 }

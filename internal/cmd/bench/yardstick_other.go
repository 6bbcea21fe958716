//go:build !linux

package main

import "time"

// threadCPU is not measured here: the yardstick reads nothing.
func threadCPU() (time.Duration, bool) { return 0, false }

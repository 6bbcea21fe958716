//go:build !unix

package testbin

import "time"

// ProcessCPU is not measured here (0): the benchmarks report 0 cpu-ms/op.
func ProcessCPU() time.Duration { return 0 }

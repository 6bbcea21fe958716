//go:build !linux

package docstore_test

import "time"

// threadCPU is not measured here: the benchmarks report wall time only.
func threadCPU() time.Duration { return 0 }

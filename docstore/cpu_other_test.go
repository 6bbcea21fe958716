//go:build !unix

package docstore

import "time"

// cpuTime is not measured here: the benchmarks report 0 cpu-ms/op.
func cpuTime() time.Duration { return 0 }

//go:build !linux

package testbin

import "time"

// ThreadCPU is not measured here (0): CPU bounds are checked on Linux only.
func ThreadCPU() time.Duration { return 0 }

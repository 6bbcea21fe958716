package docstore_test

import (
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

// threadCPU is the calling thread's CPU time (testbin.ThreadCPU).
func threadCPU() time.Duration { return testbin.ThreadCPU() }

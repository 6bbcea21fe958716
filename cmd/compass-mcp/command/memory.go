package command

import (
	"flag"
	"fmt"

	"github.com/compass-mcp/compass-mcp/internal/inflight"
)

// memoryFlag adds --memory to fs: the bytes the calls in progress may hold at once, all
// front doors together (the tools, the page, the sync API); c.check applies it.
func memoryFlag(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.memory, "memory", env("COMPASS_MEMORY", ""), fmt.Sprintf("if set, the memory calls in progress may hold at once, like 256MiB or 1GiB: a call is weighed by its document's size before it starts, and waits its turn, or is answered busy, when the rest is in use (default %s) [COMPASS_MEMORY]", inflight.FormatSize(inflight.DefaultLimit)))
}

// applyMemory sets the process's budget for work in flight from --memory (or
// COMPASS_MEMORY), refusing a size it can't read.
func (c *config) applyMemory() error {
	if c.memory == "" {
		return nil
	}
	n, err := inflight.ParseSize(c.memory)
	if err != nil {
		return usageError{"--memory (COMPASS_MEMORY): " + err.Error()}
	}
	inflight.Process.SetLimit(n)
	return nil
}

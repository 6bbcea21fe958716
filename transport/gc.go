package transport

import (
	"os"
	"runtime/debug"

	"github.com/compass-mcp/compass-mcp/internal/inflight"
)

// ServerGC is the garbage collector's target for a server: the heap may grow to 5 times
// what is live before a collection (Go's default lets it double). A server's live heap is
// small (about 5 MiB: docs/PERFORMANCE.md, section 6), while every large answer is copied
// several times on its way out (the store's read, the answer, mcp-go's JSON): at the
// default, reads of a 100 KB document set off a collection every few calls, and the
// collections were a third of the server's CPU a read (docs/PERFORMANCE.md, section 1b).
// GOGC, when set, wins.
const ServerGC = 400

// TuneGC sets ServerGC for the process unless GOGC says otherwise: for a process that
// serves (MCP, or only the page, whose rendering copies each page several times too).
// It also sets the runtime's soft memory limit (unless GOMEMLIMIT says otherwise) to the
// budget for work in flight (inflight.Process, --memory) plus MemorySlack: at ServerGC
// the heap would grow to 5 times a full budget before a collection; near the limit the
// collector runs sooner instead.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(ServerGC)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(inflight.Process.Stats().Limit + MemorySlack)
	}
}

// MemorySlack is the room the soft memory limit leaves beside a full budget: for what a
// server holds besides its calls (sessions, buffers, its caches: the store's, the page's
// renders and blames, each at most 64 MiB, and seldom full at once) and for the garbage
// between two collections. With a full budget and full caches the collector runs more
// often, rather than the heap growing past it; a burst of large calls (issue 51) raised
// a server's resident memory by about the limit, plus, on bbolt, the data file's pages it
// read.
const MemorySlack = 128 << 20

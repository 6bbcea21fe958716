package transport

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/inflight"
)

// TuneGC sets the server's target, unless GOGC names one.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	TuneGC()
	if got := debug.SetGCPercent(100); got != ServerGC {
		t.Errorf("without GOGC: the target is %d; want %d", got, ServerGC)
	}
	t.Setenv("GOGC", "150")
	TuneGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC=150: TuneGC changed the target to %d", got)
	}
}

// TuneGC sets the soft memory limit to the budget for work in flight and MemorySlack,
// unless GOMEMLIMIT names one: at ServerGC alone, a full budget could grow the heap fivefold.
func TestTuneGCSetsAMemoryLimit(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(math.MaxInt64)
	TuneGC()
	if got, want := debug.SetMemoryLimit(-1), inflight.Process.Stats().Limit+MemorySlack; got != want {
		t.Errorf("without GOMEMLIMIT: the limit is %d; want %d", got, want)
	}
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "3GiB")
	TuneGC()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT: TuneGC changed the limit to %d", got)
	}
}

package transport

import (
	"runtime/debug"
	"testing"
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

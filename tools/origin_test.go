package tools

import (
	"fmt"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// A stateless client's changes are one session while it keeps within SessionGap of its
// last; another person, agent or client is another session; the map stays bounded.
func TestStatelessSessions(t *testing.T) {
	now := time.Date(2026, 12, 6, 14, 2, 0, 0, time.UTC)
	r := newRuns()
	r.now = func() time.Time { return now }
	first := r.stateless("agent:north\x00person:ana\x00Claude Code")
	now = now.Add(29 * time.Minute)
	if got := r.stateless("agent:north\x00person:ana\x00Claude Code"); got != first {
		t.Errorf("29 minutes later: session %s, want %s", got, first)
	}
	if other := r.stateless("agent:north\x00person:ben\x00Claude Code"); other == first {
		t.Errorf("another person's changes share the session %s", other)
	}
	now = now.Add(docstore.SessionGap + time.Second)
	if got := r.stateless("agent:north\x00person:ana\x00Claude Code"); got == first {
		t.Errorf("after a gap of over %v: still session %s", docstore.SessionGap, got)
	}
	for i := range 3 * maxRuns {
		r.stateless(fmt.Sprint("agent:a", i))
	}
	if len(r.by) > maxRuns {
		t.Errorf("%d sessions remembered, more than %d", len(r.by), maxRuns)
	}
}

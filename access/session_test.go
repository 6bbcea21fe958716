package access_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// clock is a time tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

var (
	anaToken = access.Principal{Person: "ana", TokenID: "tok_ana"}
	benToken = access.Principal{Person: "ben", TokenID: "tok_ben"}
	anaOwner = access.Principal{Person: "ana"} // the server's own token, or an open server
)

// A session is the store's: another Sessions on the same store (another server) knows it,
// keeps it to the principal that began it, and ends it for both.
func TestSessionsAreKeptToWhoBeganThem(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	a, b := access.NewSessions(db, time.Hour), access.NewSessions(db, time.Hour)
	id, err := a.Begin(ctx, anaToken, "Claude Desktop")
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Check(ctx, id, anaToken)
	if err != nil || s.Client != "Claude Desktop" {
		t.Fatalf("the other server's Check: %+v, %v", s, err)
	}
	for _, p := range []access.Principal{benToken, anaOwner, {Person: "ana", TokenID: "tok_other"}} {
		if _, err := b.Check(ctx, id, p); !errors.Is(err, access.ErrNoSession) {
			t.Errorf("Check as %+v: %v, want ErrNoSession", p, err)
		}
		if err := b.End(ctx, id, p); !errors.Is(err, access.ErrNoSession) {
			t.Errorf("End as %+v: %v, want ErrNoSession", p, err)
		}
	}
	if _, err := b.Check(ctx, "mcp-session-made-up", anaToken); !errors.Is(err, access.ErrNoSession) {
		t.Errorf("a made-up id: %v, want ErrNoSession", err)
	}
	if err := b.End(ctx, id, anaToken); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Check(ctx, id, anaToken); !errors.Is(err, access.ErrNoSession) {
		t.Errorf("Check after End on the other server: %v, want ErrNoSession", err)
	}
	owner, err := a.Begin(ctx, anaOwner, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Check(ctx, owner, anaOwner); err != nil {
		t.Errorf("the owner's session: %v", err)
	}
	if _, err := b.Check(ctx, owner, anaToken); !errors.Is(err, access.ErrNoSession) {
		t.Errorf("the owner's session with a token of the same person: %v, want ErrNoSession", err)
	}
}

// A session ends after the idle time unused; its last use is written when it is older
// than a minute, so a use within the minute doesn't put the end off.
func TestSessionsEndWhenIdle(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	c := &clock{now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	s := access.NewSessions(db, 30*time.Minute).WithClock(c.Now)
	other := access.NewSessions(db, 30*time.Minute).WithClock(c.Now)
	id, err := s.Begin(ctx, anaToken, "")
	if err != nil {
		t.Fatal(err)
	}
	c.Add(30 * time.Second)
	if _, err := other.Check(ctx, id, anaToken); err != nil {
		t.Fatal(err)
	}
	c.Add(30 * time.Minute) // 30:30 after the last written use (begin)
	if _, err := s.Check(ctx, id, anaToken); !errors.Is(err, access.ErrNoSession) {
		t.Errorf("30 min 30 s after begin, with a use not written at 30 s: %v, want ErrNoSession", err)
	}

	id, err = s.Begin(ctx, anaToken, "")
	if err != nil {
		t.Fatal(err)
	}
	c.Add(61 * time.Second)
	if _, err := other.Check(ctx, id, anaToken); err != nil { // written: older than a minute
		t.Fatal(err)
	}
	c.Add(29 * time.Minute)
	if _, err := s.Check(ctx, id, anaToken); err != nil {
		t.Errorf("29 min after a use the other server wrote: %v", err)
	}
	c.Add(31 * time.Minute)
	if _, err := s.Check(ctx, id, anaToken); !errors.Is(err, access.ErrNoSession) {
		t.Errorf("31 min unused: %v, want ErrNoSession", err)
	}
}

// Ended sessions' rows are swept out as new sessions begin: the store doesn't grow with
// every client that came once.
func TestIdleSessionsAreSwept(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	c := &clock{now: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)}
	s := access.NewSessions(db, time.Minute).WithClock(c.Now)
	for range 50 {
		if _, err := s.Begin(ctx, anaToken, ""); err != nil {
			t.Fatal(err)
		}
	}
	if n := rows(t, db); n != 50 {
		t.Fatalf("%d rows after 50 sessions began", n)
	}
	c.Add(2 * time.Minute)
	if _, err := s.Begin(ctx, anaToken, ""); err != nil {
		t.Fatal(err)
	}
	if n := rows(t, db); n != 1 {
		t.Errorf("%d rows after the 50 went idle and another began, want 1", n)
	}
}

// rows counts the stored sessions.
func rows(t *testing.T, db kv.DB) int {
	t.Helper()
	n := 0
	err := db.View(t.Context(), func(tx kv.Tx) error {
		if b := tx.Bucket([]byte("access")).Bucket([]byte("mcp_sessions")); b != nil {
			n = b.KeyN()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// What a session costs a request, on the data file as the server has it (bolt.File),
// or on PostgreSQL with COMPASS_TEST_DATA set: Check is every request naming a session (one
// read); Begin is every initialize (one write, durable).
// go test -run '^$' -bench Session -benchmem ./access
func BenchmarkSessionCheck(b *testing.B) {
	ctx := b.Context()
	s := access.NewSessions(benchDB(b), time.Hour)
	id, err := s.Begin(ctx, anaToken, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Check(ctx, id, anaToken); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSessionBegin(b *testing.B) {
	ctx := b.Context()
	s := access.NewSessions(benchDB(b), time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Begin(ctx, anaToken, "bench"); err != nil {
			b.Fatal(err)
		}
	}
}

func benchDB(b *testing.B) kv.DB {
	if os.Getenv(kvtest.Env) != "" {
		return kvtest.Open(b)
	}
	f, err := bolt.OpenFile(filepath.Join(b.TempDir(), "compass.db"), bolt.DefaultTimeout, bolt.DefaultIdle)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

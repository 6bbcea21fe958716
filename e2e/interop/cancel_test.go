package interop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/pgproxy"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
)

// A client's cancel reaches PostgreSQL, end to end: the built binary serves on a database
// behind a slow proxy, over stdio and over streamable HTTP; go-sdk's client calls
// append_document while another replica holds the write lock, so that the append waits on
// it in the database (pg_stat_activity shows it), then cancels the call, which go-sdk says
// with notifications/cancelled. The statement goes from the database, the append is not
// made once the lock comes free, and the server answers the next call.
func TestACanceledCallStopsItsQueryEndToEnd(t *testing.T) {
	for _, transport := range []struct {
		name    string
		connect func(*testing.T, string, string) *mcp.ClientSession
	}{{"stdio", stdioOn}, {"http", httpOn}} {
		t.Run(transport.name, func(t *testing.T) {
			base := kvtest.URL(t)
			var b [4]byte
			rand.Read(b[:])
			app := "compass-cancel-" + hex.EncodeToString(b[:])
			u, err := url.Parse(base)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			q.Set("application_name", app)
			u.RawQuery = q.Encode()
			_, via := pgproxy.In(t, u.String(), 20*time.Millisecond)

			other, err := pg.Open(t.Context(), base) // the other replica, and the test's reads
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { other.Close() })
			docs := docstore.New(other, "personal")
			if _, err := docs.Create(t.Context(), "Plan", "1. the plan\n", docstore.KindWrite, docstore.Author{By: "person:ana"}); err != nil {
				t.Fatal(err)
			}
			cs := transport.connect(t, via, newestLegacy)

			holding, release := make(chan struct{}), make(chan struct{})
			held := make(chan error, 1)
			go func() {
				held <- other.Update(context.Background(), func(tx kv.Tx) error {
					if _, err := tx.CreateBucketIfNotExists([]byte("holder")); err != nil {
						return err
					}
					tx.Bucket([]byte("holder")).Get([]byte("x")) // the first round trip: BEGIN, the lock
					close(holding)
					<-release
					return nil
				})
			}()
			<-holding
			released := false
			defer func() {
				if !released {
					close(release)
				}
			}()
			watch, err := pgx.Connect(t.Context(), kvtest.Postgres(t))
			if err != nil {
				t.Fatal(err)
			}
			defer watch.Close(context.Background())
			until := func(what string, want int) {
				t.Helper()
				deadline := time.Now().Add(10 * time.Second)
				for {
					var n int
					if err := watch.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
						WHERE application_name = $1 AND state = 'active' AND query LIKE '%pg_advisory_xact_lock%'`, app).Scan(&n); err != nil {
						t.Fatal(err)
					}
					if n == want {
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("after 10 s, still not %s: %d statements of the server wait on the lock", what, n)
					}
					// pg_stat_activity can only be polled (e2e tests may wait so; the unit
					// tests' three sleeps are elsewhere).
					time.Sleep(20 * time.Millisecond)
				}
			}

			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "append_document", Arguments: map[string]any{"document": "Plan", "text": "2. what the canceled call would add"}})
				done <- err
			}()
			until("waiting on the lock in the database", 1)
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("the canceled call returned %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the canceled call did not return within 10 s")
			}
			until("gone from the database", 0)
			close(release)
			released = true
			if err := <-held; err != nil {
				t.Fatal(err)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "read_document", Arguments: map[string]any{"document": "Plan"}})
			if err != nil || res.IsError {
				t.Fatalf("the call after a canceled one: %v, %+v", err, res)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !strings.Contains(text, "version 1 of 1") || strings.Contains(text, "canceled call") {
				t.Errorf("after the canceled append, read_document says:\n%s", text)
			}
		})
	}
}

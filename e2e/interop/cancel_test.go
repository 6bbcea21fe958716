package interop

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/pgproxy"
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
			named, app := kvtest.Named(t, base, "compass-cancel-")
			_, via := pgproxy.In(t, named, 20*time.Millisecond)

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
			release := kvtest.HoldWriteLock(t, other)

			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "append_document", Arguments: map[string]any{"document": "Plan", "text": "2. what the canceled call would add"}})
				done <- err
			}()
			kvtest.UntilLockWaits(t, app, "waiting on the lock in the database", func(n int) bool { return n == 1 })
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("the canceled call returned %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the canceled call did not return within 10 s")
			}
			kvtest.UntilLockWaits(t, app, "gone from the database", func(n int) bool { return n == 0 })
			if err := release(); err != nil {
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

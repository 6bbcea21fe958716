package tools_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/pgproxy"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
	"github.com/compass-mcp/compass-mcp/tools"
)

// A call canceled while its statement runs on PostgreSQL stops that statement there, not
// only the wait for its answer: the client's cancel (here the in-process client's context,
// which is what mcp-go's notifications/cancelled and an HTTP request's end come to) reaches
// the database as a cancel request. The call is an append behind a slow proxy, held in the
// database on the write lock by another replica's transaction: pg_stat_activity shows it
// waiting there, then, once the call is canceled, nothing of it; the call answers that it
// was canceled; and the append is not made when the lock comes free.
func TestACanceledCallStopsItsQuery(t *testing.T) {
	base := kvtest.URL(t)
	named, app := kvtest.Named(t, base, "compass-cancel-")
	_, via := pgproxy.In(t, named, 20*time.Millisecond)
	db, err := pg.Open(context.Background(), via)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	other, err := pg.Open(context.Background(), base) // another replica, another application_name
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })

	author := docstore.Author{By: "agent:north", For: "person:ana"}
	if _, err := docstore.New(db, "personal").Create(t.Context(), "Plan", "1. the plan\n", docstore.KindWrite, author); err != nil {
		t.Fatal(err)
	}
	srv, err := tools.New(db, tools.Config{Space: "personal", Agent: "north", For: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := initialized(t, srv, mcp.LATEST_LEGACY_PROTOCOL_VERSION, "north")

	// The other replica takes the write lock and keeps it until released.
	release := kvtest.HoldWriteLock(t, other)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	answered := make(chan *mcp.CallToolResult, 1)
	failed := make(chan error, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "append_document"
		req.Params.Arguments = map[string]any{"document": "Plan", "text": "2. what the canceled call would add"}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			failed <- err
			return
		}
		answered <- res
	}()
	kvtest.UntilLockWaits(t, app, "waiting on the lock in the database", func(n int) bool { return n == 1 })
	cancel()
	select {
	case res := <-answered:
		text := res.Content[0].(mcp.TextContent).Text
		if !res.IsError || !strings.Contains(text, "canceled") {
			t.Errorf("the canceled call answered %q (isError %v), want that it was canceled", text, res.IsError)
		}
	case err := <-failed:
		t.Fatalf("the canceled call failed instead of answering: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the canceled call did not answer within 10 s of its cancel")
	}
	kvtest.UntilLockWaits(t, app, "gone from the database", func(n int) bool { return n == 0 })

	if err := release(); err != nil {
		t.Fatal(err)
	}
	var text string
	err = docstore.New(db, "personal").View(t.Context(), func(r *docstore.Reader) error {
		_, v, err := r.Read("Plan", 0)
		text = v.Text
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, "canceled call") {
		t.Errorf("the canceled append was made once the lock came free:\n%s", text)
	}
}

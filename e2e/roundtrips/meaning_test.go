package roundtrips

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/embedtest"
	"github.com/compass-mcp/compass-mcp/internal/testkit/pgproxy"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
	"github.com/compass-mcp/compass-mcp/semantic"
	"github.com/compass-mcp/compass-mcp/tools"
)

// TestWritesDontWaitForMeaning makes the writing calls with the semantic tier on, its
// endpoint holding every request until the test ends, and counts their round trips: the
// same as without the tier, each within its budget, and every write answered while the
// endpoint has not answered anything (a write never waits for it). The tier works on a
// connection of its own, so that the proxy counts the calls' round trips alone.
//
//	COMPASS_TEST_POSTGRES=postgres://… go test -v -run WritesDontWaitForMeaning ./e2e/roundtrips
func TestWritesDontWaitForMeaning(t *testing.T) {
	u := kvtest.URL(t)
	proxy, via := pgproxy.In(t, u, 0)
	db, err := pg.Open(context.Background(), via)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	direct, err := pg.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	held := make(chan struct{})
	var answered atomic.Int32
	endpoint := embedtest.New(t, func(i int, _ string) []float64 { return []float64{1, float64(i)} })
	endpoint.Answer(func(_ http.ResponseWriter, r *http.Request, _ []string) bool {
		select {
		case <-held:
		case <-r.Context().Done():
			return true
		}
		answered.Add(1)
		return false
	})
	asked := &endpoint.Requests
	t.Cleanup(func() { close(held) })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	author := docstore.Author{By: "agent:north", For: "person:ana"}
	docs := docstore.New(db, "personal")
	for i := range 50 {
		if _, err := docs.Create(t.Context(), fmt.Sprintf("Note %03d", i), note(20, i), docstore.KindWrite, author); err != nil {
			t.Fatal(err)
		}
	}
	big, err := docs.Create(t.Context(), "Big", note(2000, 1), docstore.KindWrite, author)
	if err != nil {
		t.Fatal(err)
	}
	tier := semantic.NewTier(ctx, direct, &semantic.Client{URL: endpoint.URL(), Model: "held"}, semantic.Options{Poll: time.Hour, Logger: slog.New(slog.DiscardHandler)}, true)
	cfg := tools.Config{Space: "personal", Agent: "north", For: "ana", Logger: slog.New(slog.DiscardHandler)}
	plain := toolWith(t, db, cfg)
	cfg.Semantic = tier
	withMeaning := toolWith(t, db, cfg)
	tier.Space("personal") // its first pass starts, and waits on the endpoint
	for deadline := time.Now().Add(30 * time.Second); asked.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the tier never asked the endpoint")
		}
	}
	type write struct {
		name string
		do   func(tool func(t testing.TB, name string, args map[string]any, want string), run int)
	}
	writes := []write{
		{"new 1 KB note", func(tool func(testing.TB, string, map[string]any, string), i int) {
			tool(t, "write_document", map[string]any{"title": fmt.Sprintf("New note %d", i), "text": note(20, 1000+i)}, "")
		}},
		{"one-line edit of 100 KB", func(tool func(testing.TB, string, map[string]any, string), i int) {
			old, nu := "line 1000 of note 1.", fmt.Sprintf("line 1000 of note 1 (edit %d).", i)
			if i > 0 {
				old = fmt.Sprintf("line 1000 of note 1 (edit %d).", i-1)
			}
			tool(t, "edit_document", map[string]any{"document": big.Document.ID, "old": old, "new": nu}, "")
		}},
		{"append to 100 KB", func(tool func(testing.TB, string, map[string]any, string), i int) {
			tool(t, "append_document", map[string]any{"document": big.Document.ID, "text": fmt.Sprintf("Appended line %d.\n", i)}, "")
		}},
	}
	median := func(w write, tool func(testing.TB, string, map[string]any, string), from int) int {
		var runs []int
		for i := from; i < from+6; i++ {
			before := proxy.RoundTrips()
			w.do(tool, i)
			if i >= from+3 {
				runs = append(runs, int(proxy.RoundTrips()-before))
			}
		}
		slices.Sort(runs)
		return runs[1]
	}
	for _, w := range writes {
		without := median(w, plain, 0)
		with := median(w, withMeaning, 6)
		t.Logf("%s: %d round trips without the tier, %d with it", w.name, without, with)
		if with != without || with > writeBudget {
			t.Errorf("%s made %d round trips with the tier, %d without (budget %d)", w.name, with, without, writeBudget)
		}
	}
	if n := answered.Load(); n != 0 {
		t.Fatalf("the endpoint answered %d requests: the writes were not all made while it held them", n)
	}
	// A search while nothing is embedded yet: answered by its words, the endpoint not asked.
	withMeaning(t, "list_documents", map[string]any{"query": "copper lantern"}, "Note")
}

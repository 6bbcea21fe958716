package reliability

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/mark3labs/mcp-go/client"
	"go.etcd.io/bbolt"
)

// Sixteen HTTP clients write at once, each to a document of its own (write, edit) and all
// to one shared document (append): no update is lost, every document's versions are 1..n
// without gaps, and the shared document's versions were each answered to exactly one
// client. The same writes by one client give the baseline: the commits (bbolt's txid, read
// from the file; on bbolt only) against the writes show the group commit at work.
//
//	go test -run TestSixteenWriters -v ./e2e/reliability
func TestSixteenWritersOverHTTP(t *testing.T) {
	t.Parallel()
	data := newData(t)
	srv := startHTTP(t, data, "--agent", "many")
	setup := httpClient(t, srv.url, "setup")
	a := mustCall(t, setup, "write_document", map[string]any{"title": "Shared", "text": "# Shared\n"})
	shared, _, ok := saved(a)
	if !ok {
		t.Fatal(a.text)
	}
	var all []*concurrentWriter
	for _, run := range []struct {
		clients, each int
	}{{1, 320}, {16, 40}} {
		writers := make([]*concurrentWriter, run.clients)
		for i := range writers {
			writers[i] = &concurrentWriter{name: fmt.Sprintf("w%d-%d", run.clients, i), shared: shared}
			writers[i].c = httpClient(t, srv.url, writers[i].name)
			writers[i].create(t)
		}
		before, counted := txid(t, data)
		start := time.Now()
		var wg sync.WaitGroup
		for _, w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.write(t, run.each)
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		after, _ := txid(t, data)
		commits := after - before
		writes := run.clients * run.each * 2
		if !counted {
			t.Logf("%2d clients: %d writes in %s, %.0f writes/s (the store doesn't number its commits)",
				run.clients, writes, elapsed.Round(time.Millisecond), float64(writes)/elapsed.Seconds())
		} else {
			t.Logf("%2d clients: %d writes in %s, %.0f writes/s, %d commits (%.1f writes a commit)",
				run.clients, writes, elapsed.Round(time.Millisecond), float64(writes)/elapsed.Seconds(), commits, float64(writes)/float64(commits))
		}
		if counted && run.clients > 1 && commits >= writes {
			t.Errorf("%d writes from %d clients took %d commits: no group commit", writes, run.clients, commits)
		}
		all = append(all, writers...)
	}
	srv.stop(t)

	db := openChecked(t, data)
	s := docstore.New(db, "personal")
	var answered []int
	ownWrites := 0
	for _, w := range all {
		ownWrites += w.version - 1
		answered = append(answered, w.sharedVersions...)
		d, v, err := read(t, s, w.own, 0)
		if err != nil {
			t.Fatal(err)
		}
		if v.Text != w.text || d.Version != w.version {
			t.Errorf("%s's document is at version %d with %q; its last write was answered version %d with %q", w.name, d.Version, v.Text, w.version, w.text)
		}
		gapless(t, s, w.own)
	}
	d, v, err := read(t, s, shared, 0)
	if err != nil {
		t.Fatal(err)
	}
	gapless(t, s, shared)
	slices.Sort(answered)
	for i, n := range answered {
		if n != i+2 {
			t.Fatalf("the shared document's versions 2..%d were not each answered once: %v", d.Version, answered)
		}
	}
	if len(answered) != d.Version-1 {
		t.Errorf("%d appends answered, but the shared document is at version %d", len(answered), d.Version)
	}
	for _, w := range all {
		for _, line := range w.lines {
			if !strings.Contains(v.Text, "\n"+line+"\n") {
				t.Errorf("%q was appended and answered, but is not in the shared text", line)
			}
		}
	}
	t.Logf("%d clients in all, %d appends to one document and %d writes and edits to their own: 0 lost, versions 1..n without gaps", len(all), len(answered), ownWrites)
}

type concurrentWriter struct {
	name           string
	c              *client.Client
	shared, own    string
	text           string // its document's text as last answered
	version        int    // and that version's number
	lines          []string
	sharedVersions []int
}

func (w *concurrentWriter) create(t *testing.T) {
	w.text = "# " + w.name + "\n\nstep 0\n"
	a := mustCall(t, w.c, "write_document", map[string]any{"title": w.name, "text": w.text})
	var ok bool
	if w.own, w.version, ok = saved(a); !ok {
		t.Fatal(a.text)
	}
}

// write makes n appends to the shared document and n writes (whole, or edits) to its own.
func (w *concurrentWriter) write(t *testing.T, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range n {
		line := fmt.Sprintf("%s appends %d", w.name, i)
		a, err := call(ctx, w.c, "append_document", map[string]any{"document": w.shared, "text": line})
		_, got, ok := saved(a)
		if err != nil || !ok {
			t.Errorf("%s: %v %q", line, err, a.text)
			return
		}
		w.lines, w.sharedVersions = append(w.lines, line), append(w.sharedVersions, got)

		next := fmt.Sprintf("# %s\n\nstep %d\n", w.name, i+1)
		args := map[string]any{"document": w.own, "text": next}
		tool := "write_document"
		if i%2 == 1 {
			tool, args = "edit_document", map[string]any{"document": w.own, "old": fmt.Sprintf("step %d\n", i), "new": fmt.Sprintf("step %d\n", i+1)}
		}
		a, err = call(ctx, w.c, tool, args)
		_, got, ok = saved(a)
		if err != nil || !ok || got != w.version+1 {
			t.Errorf("%s %v: %v %q, want version %d", tool, args, err, a.text, w.version+1)
			return
		}
		w.text, w.version = next, got
	}
}

// gapless checks a document's versions are 1..n without gaps.
func gapless(t *testing.T, s *docstore.Store, id string) {
	t.Helper()
	d, vs, err := history(t, s, id)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if v.Number != d.Version-i {
			t.Errorf("%s's versions are not 1..%d without gaps: %d at %d", d.Title, d.Version, v.Number, i)
			return
		}
	}
}

// txid is the id of the data file's last committed transaction: it counts commits. The
// server lets go of the file when idle, so this waits for it briefly. On PostgreSQL,
// counted is false: its transaction ids are the whole database's, which other tests share.
func txid(t *testing.T, data string) (id int, counted bool) {
	t.Helper()
	if kvtest.OnPostgres() {
		return 0, false
	}
	db, err := bolt.Open(data, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bbolt.Tx) error { id = tx.ID(); return nil })
	return id, true
}

package docstore_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// Sixteen writers at once share commits (each a pair of fsyncs): bbolt's txid, which one
// commit moves on by one, counts them (on bbolt only: see txid). One writer alone pays a commit a write. No write is
// lost on the way: every append is in the text, and the versions are 1..n without gaps.
//
//	go test -run TestGroupCommit -v ./docstore
func TestGroupCommit(t *testing.T) {
	ctx := t.Context()
	for _, writers := range []int{1, 16} {
		db := kvtest.Open(t)
		s := docstore.New(db, "personal")
		shared := mustCreate(t, s, "Shared", "# Shared\n")
		own := make([]docstore.Document, writers)
		for i := range own {
			own[i] = mustCreate(t, s, fmt.Sprintf("Own %d", i), "step 0\n")
		}
		const each = 40
		before, counted := txid(t, db)
		start := time.Now()
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range each {
					if _, err := s.Append(ctx, shared.ID, fmt.Sprintf("writer %d, line %d", i, j), north); err != nil {
						t.Error(err)
						return
					}
					if _, err := s.Edit(ctx, own[i].ID, fmt.Sprintf("step %d\n", j), fmt.Sprintf("step %d\n", j+1), north); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		after, _ := txid(t, db)
		commits, writes := after-before, 2*each*writers
		switch {
		case !counted:
			t.Logf("%2d writers: %d writes in %s (%.0f writes/s); the store doesn't number its commits",
				writers, writes, elapsed.Round(time.Millisecond), float64(writes)/elapsed.Seconds())
		case writers == 1 && commits != writes:
			t.Errorf("one writer: %d writes took %d commits, want one each", writes, commits)
		case writers > 1 && commits >= writes:
			t.Errorf("%d writers: %d writes took %d commits: nothing was grouped", writers, writes, commits)
		default:
			t.Logf("%2d writers: %d writes in %s (%.0f writes/s), %d commits: %.1f writes a commit",
				writers, writes, elapsed.Round(time.Millisecond), float64(writes)/elapsed.Seconds(), commits, float64(writes)/float64(commits))
		}

		d, vs, err := view2(t, s, func(r *docstore.Reader) (docstore.Document, []docstore.Version, error) { return r.Log(shared.ID) })
		if err != nil {
			t.Fatal(err)
		}
		_, latest, err := read(t, s, shared.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if d.Version != writers*each+1 {
			t.Errorf("the shared document is at version %d after %d appends", d.Version, writers*each)
		}
		for i, v := range vs {
			if v.Number != d.Version-i {
				t.Fatalf("versions are not 1..n without gaps: %d at %d", v.Number, i)
			}
		}
		for i := range writers {
			for j := range each {
				if line := fmt.Sprintf("writer %d, line %d\n", i, j); !strings.Contains(latest.Text, line) {
					t.Errorf("%q was appended but is not in the text", line)
				}
			}
			if _, v, err := read(t, s, own[i].ID, 0); err != nil || v.Text != fmt.Sprintf("step %d\n", each) || v.Number != each+1 {
				t.Errorf("Own %d: version %d, %q, %v", i, v.Number, v.Text, err)
			}
		}
	}
}

// txid is the id of the last transaction committed to db's bbolt file, which one commit
// moves on by one. On PostgreSQL, counted is false: its transaction ids are the whole
// database's, which other tests share (the grouping is kv.Batcher's, the same on both;
// what this test checks there is that grouped writes lose nothing).
func txid(t *testing.T, db kv.DB) (id int, counted bool) {
	t.Helper()
	if err := db.View(t.Context(), func(tx kv.Tx) error {
		if btx, ok := bolt.TxOf(tx); ok {
			id, counted = btx.ID(), true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return id, counted
}

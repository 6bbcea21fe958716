package docstore_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/search"
)

// timedDB is a store that remembers how long its longest read transaction lasted.
type timedDB struct {
	kv.DB
	mu      sync.Mutex
	longest time.Duration
	views   int
}

func (d *timedDB) View(ctx context.Context, fn func(kv.Tx) error) error {
	start := time.Now()
	err := d.DB.View(ctx, fn)
	d.mu.Lock()
	d.longest = max(d.longest, time.Since(start))
	d.views++
	d.mu.Unlock()
	return err
}

// overCPU reports whether a search's CPU time is over its bound of a second (never with
// the race detector, which makes it several times dearer).
func overCPU(cpu time.Duration) bool { return !raceEnabled && cpu > time.Second }

// searchCPU runs a search on one thread and gives its CPU time.
func searchCPU(t *testing.T, s *docstore.Store, query string, limit int) (docstore.Results, time.Duration) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0 := threadCPU()
	res, err := view(t, s, func(r *docstore.Reader) (docstore.Results, error) { return r.Search(query, limit) })
	took := threadCPU() - c0
	if err != nil {
		t.Fatal(err)
	}
	return res, took
}

// Issue 23: a quoted phrase of 330 distinct Han characters (992 bytes) cost ~5 s of CPU
// for each 8 MiB document it was matched against, all in one read transaction. Now a
// query costs at most about a second of CPU whatever the documents (its texts past
// search.MaxRead are left out, and counted), and so does the one read transaction it is
// (a search reads one snapshot: TestSearchIsOneTransaction).
func TestHostilePhraseOnLargeDocumentsIsBounded(t *testing.T) {
	ctx := t.Context()
	if testing.Short() {
		t.Skip("writes 64 MiB")
	}
	db := &timedDB{DB: kvtest.Open(t)}
	s := docstore.New(db, "personal")
	var rs []rune
	for r := rune(0x4e00); len(rs) < 330; r += 7 {
		rs = append(rs, r)
	}
	phrase := `"` + string(rs) + `"`
	// Every character of the phrase, but never all in order: the last once, then all the
	// others over and over.
	near := string(rs[:329])
	big := string(rs[329]) + strings.Repeat(near, (docstore.MaxText-4)/len(near))
	n := search.MaxRead/len(big) + 2
	for i := range n {
		mustCreate(t, s, fmt.Sprintf("Big %d", i), big)
	}
	if err := s.EnsureIndex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	db.longest = 0
	res, cpu := searchCPU(t, s, phrase, 10)
	t.Logf("%d documents of %d MiB: %s of CPU, %d found, %d not read; %d read transactions, the longest %s",
		n, len(big)>>20, cpu, res.Total, res.Unread, db.views, db.longest)
	if res.Unquoted || res.Total != 0 || res.Unread == 0 {
		t.Errorf("found %d (unquoted %v), %d not read; want none found and some not read", res.Total, res.Unquoted, res.Unread)
	}
	if overCPU(cpu) {
		t.Errorf("the search took %s of CPU, want at most 1 s", cpu)
	}
	// The phrase itself, once, at the end of one of them: found, if read.
	d := mustCreate(t, s, "Needle", near+string(rs)+"\n")
	res, cpu = searchCPU(t, s, phrase, 10)
	if res.Total != 1 || res.Found[0].Document.ID != d.ID {
		t.Errorf("the phrase in a document: found %d (%d not read)", res.Total, res.Unread)
	}
	if overCPU(cpu) {
		t.Errorf("the search took %s of CPU, want at most 1 s", cpu)
	}
}

// No query is refused for its length, and none costs more than its budgets: a question of
// 40 words, one of 12,000 words (about a request's limit), a phrase of 1,000 words.
func TestLongQueriesAreAnswered(t *testing.T) {
	s := open(t, "personal")
	words := strings.Fields("the effect of a low dose of aspirin on the risk of a first heart attack in people over sixty " +
		"who have never had one and who take no other drug for their blood pressure nor for their cholesterol level at all")
	for i := range 300 {
		mustCreate(t, s, fmt.Sprintf("Note %d", i), strings.Join(words[i%len(words):], " ")+"\n"+strings.Join(words[:i%len(words)], " ")+"\n")
	}
	question := strings.Join(words[:40], " ")
	res, cpu := searchCPU(t, s, question, 10)
	if len(res.Found) != 10 || res.Query.Partial {
		t.Errorf("a question of 40 words: %d found, partial %v", len(res.Found), res.Query.Partial)
	}
	t.Logf("a question of 40 words: %s of CPU, %d with every word, %d with some", cpu, res.Every, res.Some)
	var more []string
	for i := range 12_000 {
		more = append(more, fmt.Sprintf("w%d", i))
	}
	long := question + " " + strings.Join(more, " ")
	res, cpu = searchCPU(t, s, long, 10)
	if len(res.Found) != 10 || !res.Query.Partial || overCPU(cpu) {
		t.Errorf("a query of %d bytes: %d found, partial %v, %s of CPU", len(long), len(res.Found), res.Query.Partial, cpu)
	}
	res, cpu = searchCPU(t, s, `"`+strings.Repeat("aspirin dose ", 500)+`"`, 10)
	if !res.Unquoted || overCPU(cpu) {
		t.Errorf("a phrase of 1,000 words: %d found (unquoted %v), %s of CPU", res.Total, res.Unquoted, cpu)
	}
}

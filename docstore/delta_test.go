package docstore_test

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// randomHistory saves n random versions of one document (edits, inserts, deletions, a
// missing final line break now and then, an empty text once) and returns every text.
func randomHistory(t *testing.T, s *docstore.Store, n int, seed uint64) (string, []string) {
	t.Helper()
	ctx := t.Context()
	r := rand.New(rand.NewPCG(seed, 9))
	lines := make([]string, 40)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d %s\n", i, strings.Repeat("ab", r.IntN(20)))
	}
	texts := []string{strings.Join(lines, "")}
	d := mustCreate(t, s, "History", texts[0])
	for v := 2; v <= n; v++ {
		for range r.IntN(3) + 1 {
			i := r.IntN(len(lines) + 1)
			switch r.IntN(4) {
			case 0:
				lines = append(lines[:i], append([]string{fmt.Sprintf("new %d\n", v)}, lines[i:]...)...)
			case 1:
				if i < len(lines) {
					lines = append(lines[:i], lines[i+1:]...)
				}
			case 2:
				if i < len(lines) {
					lines[i] = lines[(i*7)%len(lines)] // a duplicate line
				}
			default:
				if i < len(lines) {
					lines[i] = fmt.Sprintf("edit %d\n", v)
				}
			}
		}
		text := strings.Join(lines, "")
		switch {
		case v%17 == 0:
			text = strings.TrimSuffix(text, "\n")
		case v == n/2:
			text = ""
		case text == texts[len(texts)-1]:
			text += "x\n"
		}
		saved, err := s.Save(ctx, d.ID, 0, text, ana, linediff.Clash)
		if err != nil {
			t.Fatal(err)
		}
		if saved.Unchanged {
			t.Fatalf("version %d unchanged", v)
		}
		texts = append(texts, text)
	}
	return d.ID, texts
}

func checkTexts(t *testing.T, s *docstore.Store, id string, texts []string) {
	t.Helper()
	ctx := t.Context()
	for i, want := range texts {
		_, v, err := read(t, s, id, i+1)
		if err != nil {
			t.Fatalf("version %d: %v", i+1, err)
		}
		if v.Text != want {
			t.Fatalf("version %d reads %q, want %q", i+1, v.Text, want)
		}
	}
	_, vs, err := view2(t, s, func(r *docstore.Reader) (docstore.Document, []docstore.Version, error) { return r.Log(id) })
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("Log gave %d versions, want %d", len(vs), len(texts))
	}
	for i, v := range vs {
		if v.Number != len(texts)-i || v.Text != "" {
			t.Fatalf("Log's header %d is version %d with %d bytes of text; want version %d without", i, v.Number, len(v.Text), len(texts)-i)
		}
	}
	n := 0
	err = s.Walk(ctx, id, func(v docstore.Version) error {
		if v.Number != len(texts)-n {
			t.Fatalf("Walk gave version %d after %d others, want version %d", v.Number, n, len(texts)-n)
		}
		if v.Text != texts[v.Number-1] {
			t.Fatalf("Walk's version %d is %q", v.Number, v.Text)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(texts) {
		t.Fatalf("Walk gave %d versions, want %d", n, len(texts))
	}
}

// Every version of a long random history reads back byte for byte, with snapshots every
// few versions and with the default, and again after the file is closed and reopened.
func TestDeltasReadBack(t *testing.T) {
	for _, every := range []int{1, 5, 64} {
		t.Run(fmt.Sprintf("whole every %d", every), func(t *testing.T) {
			defer docstore.SetSnapshotEvery(every)()
			data := kvtest.Data(t, t.TempDir(), "compass.db")
			db := kvtest.OpenData(t, data)
			s := docstore.New(db, "personal")
			id, texts := randomHistory(t, s, 300, uint64(every))
			checkTexts(t, s, id, texts)
			db.Close()
			checkTexts(t, docstore.New(kvtest.OpenData(t, data), "personal"), id, texts)
		})
	}
}

// oldLayout is a copy of the file written by the version before deltas (every version
// whole, each document's versions in a bucket of their own: testdata/layout), and the
// texts of its documents' versions by title. It is a bbolt file whatever the tests' store:
// the old layout was only ever written on bbolt (PostgreSQL came after deltas).
func oldLayout(t *testing.T) (*bolt.File, *docstore.Store, map[string][]string) {
	t.Helper()
	dir := filepath.Join("..", "testdata", "layout")
	raw, err := os.ReadFile(filepath.Join(dir, "v1-texts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][]string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join(dir, "v1-full-texts.db"), path)
	db, err := bolt.OpenFile(path, time.Second, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, docstore.New(db, "personal"), want
}

// A file written by the version before deltas (every version whole: testdata/layout) reads
// as it did, and takes new versions in the new layout.
func TestOldLayoutStillReads(t *testing.T) {
	ctx := t.Context()
	_, s, want := oldLayout(t)
	for title, texts := range want {
		d, err := find(t, s, title)
		if err != nil {
			t.Fatal(err)
		}
		checkTexts(t, s, d.ID, texts)
		for i := range 3 {
			text := fmt.Sprintf("after the change %d\n", i) + texts[len(texts)-1]
			if _, err := s.Save(ctx, d.ID, 0, text, ana, linediff.Clash); err != nil {
				t.Fatal(err)
			}
			texts = append(texts, text)
		}
		checkTexts(t, s, d.ID, texts)
	}
}

// Purging a document of the file written before deltas drops the bucket its versions have
// there (kv's DeleteBucket), and leaves the other document whole.
func TestOldLayoutPurge(t *testing.T) {
	ctx := t.Context()
	db, s, want := oldLayout(t)
	titles := slices.Sorted(maps.Keys(want))
	if len(titles) < 2 {
		t.Fatalf("the old file has %d documents, want 2 or more", len(titles))
	}
	purged, kept := titles[0], titles[1]
	d, err := find(t, s, purged)
	if err != nil {
		t.Fatal(err)
	}
	ownBucket := func() (own bool) {
		err := db.View(t.Context(), func(tx kv.Tx) error {
			own = spaces.Sub(tx, "personal", "doc_versions").Bucket([]byte(d.ID)) != nil
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return own
	}
	if !ownBucket() {
		t.Fatalf("%s has no bucket of its own in the old file: the test reads the wrong file", purged)
	}
	if _, err := s.Delete(ctx, d.ID, ana); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Purge(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	if ownBucket() {
		t.Errorf("the versions bucket of %s is still there after purging it", purged)
	}
	if _, _, err := read(t, s, d.ID, 1); err == nil {
		t.Errorf("version 1 of the purged %s still reads", purged)
	}
	other, err := find(t, s, kept)
	if err != nil {
		t.Fatal(err)
	}
	checkTexts(t, s, other.ID, want[kept])
	err = db.View(t.Context(), func(tx kv.Tx) error {
		btx, _ := bolt.TxOf(tx)
		for err := range btx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		t.Errorf("the file after the purge: %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkReadVersion1Of1000 reads version 1 of a 100 KB document after 1,000 one-line
// edits: the longest chain of deltas there is (target ≤ 10 ms).
func BenchmarkReadVersion1Of1000(b *testing.B) {
	ctx := b.Context()
	path := filepath.Join(b.TempDir(), "compass.db")
	db, err := bolt.OpenFile(path, time.Second, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := docstore.New(db, "personal")
	lines := text(2000, 4)
	d := mustCreate(b, s, "Big", strings.Join(lines, ""))
	for i := range 1000 {
		old := lines[(i*37)%len(lines)]
		lines[(i*37)%len(lines)] = fmt.Sprintf("edit %d\n", i)
		if _, err := s.Edit(ctx, d.ID, old, lines[(i*37)%len(lines)], north); err != nil {
			b.Fatal(err)
		}
	}
	fi, _ := os.Stat(path)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, v, err := read(b, s, d.ID, 1); err != nil || len(v.Text) < 90000 {
			b.Fatal(err, len(v.Text))
		}
	}
	b.ReportMetric(float64(fi.Size())/(1<<20), "file-MB")
	var used int64
	db.View(b.Context(), func(tx kv.Tx) error { btx, _ := bolt.TxOf(tx); used = btx.Size(); return nil })
	b.ReportMetric(float64(used)/(1<<20), "used-MB")
}

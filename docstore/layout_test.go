package docstore

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// Purging a document leaves none of its version keys behind, and touches no other's.
func TestPurgeLeavesNoVersions(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	s := New(db, "personal")
	by := Author{By: "person:ana"}
	var ids []string
	for _, title := range []string{"a", "b", "c"} {
		saved, err := s.Create(ctx, title, "one\n", KindSave, by)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, saved.Document.ID)
		for i := range 3 {
			if _, err := s.Append(ctx, title, fmt.Sprint(i), by); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.Delete(ctx, "b", by); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Purge(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	db.View(ctx, func(tx kv.Tx) error {
		clear(count) // the View may run again
		return readBuckets(tx, "personal").versions.ForEach(func(k, _ []byte) error {
			count[string(k[:26])]++
			return nil
		})
	})
	if count[ids[0]] != 4 || count[ids[1]] != 0 || count[ids[2]] != 4 {
		t.Errorf("version keys per document after purging b: %v", count)
	}
	var v Version
	err := s.View(ctx, func(r *Reader) (err error) {
		_, v, err = r.Read("c", 2)
		return err
	})
	if err != nil || !strings.HasPrefix(v.Text, "one") {
		t.Errorf("c after purging b: %q %v", v.Text, err)
	}
}

// BenchmarkStorage10kDocuments reports the data file's size with 10,000 documents of
// about 1 KB, three versions each.
func BenchmarkStorage10kDocuments(b *testing.B) {
	if testing.Short() {
		b.Skip("builds 10,000 documents")
	}
	for range b.N {
		path := filepath.Join(b.TempDir(), "c.db")
		db, err := bolt.OpenFile(path, time.Second, time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		s := New(db, "personal")
		text := strings.Repeat("A line of about fifty bytes of Markdown text here.\n", 20)
		err = db.Update(b.Context(), func(tx kv.Tx) error {
			bk, err := writeBuckets(tx, "personal")
			if err != nil {
				return err
			}
			for i := range 10000 {
				d := Document{ID: newID(time.Now())}
				v := Version{Number: 1, Title: fmt.Sprintf("Document %d", i), Text: text, Kind: KindWrite, Author: Author{By: "person:ana"}, At: time.Now()}
				if err := bk.put(&d, v, nil, change{}); err != nil {
					return err
				}
				for n := 2; n <= 3; n++ {
					prev := v
					v.Number, v.Text = n, fmt.Sprintf("Version %d.\n", n)+prev.Text
					if err := bk.put(&d, v, &prev, diffTexts(prev.Text, v.Text)); err != nil {
						return err
					}
				}
			}
			return bk.addCount(10000)
		})
		if err != nil {
			b.Fatal(err)
		}
		var docs []Document
		var total int
		err = s.View(b.Context(), func(r *Reader) (err error) {
			docs, total, err = r.List(1)
			return err
		})
		if err != nil || total != 10000 || len(docs) != 1 {
			b.Fatal(total, err)
		}
		var used int64
		db.View(b.Context(), func(tx kv.Tx) error { btx, _ := bolt.TxOf(tx); used = btx.Size(); return nil })
		b.ReportMetric(float64(used)/(1<<20), "used-MB")
		db.Close()
	}
}

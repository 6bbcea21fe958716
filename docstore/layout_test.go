package docstore

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/spaces"
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

// doc.go's Layout names every bucket the package has a constant for, and nothing else; every
// bucket of the indexes list is one of them; and a store that has used every kind of
// bucket holds no document bucket the Layout doesn't name.
func TestLayoutNamesEveryBucket(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{} // bucket name -> constant
	var layout map[string]bool
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil && strings.Contains(f.Doc.Text(), "# Layout") {
			layout = layoutBuckets(t, f.Doc.Text())
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !strings.HasPrefix(name.Name, "bucket") || i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						consts[v] = name.Name
					}
				}
			}
		}
	}
	if layout == nil {
		t.Fatal("no package doc with a # Layout section")
	}
	if len(consts) < 10 {
		t.Fatalf("found only %d bucket constants: %v", len(consts), consts)
	}
	for name, c := range consts {
		if !layout[name] {
			t.Errorf("doc.go's Layout doesn't name %s (%s)", name, c)
		}
	}
	for name := range layout {
		if consts[name] == "" {
			t.Errorf("doc.go's Layout names %s, which no bucket constant is", name)
		}
	}
	for _, x := range indexes {
		if len(x.buckets) == 0 {
			t.Errorf("an index names no bucket: %+v", x)
		}
		for _, name := range x.buckets {
			if !layout[name] {
				t.Errorf("index bucket %s is not in doc.go's Layout", name)
			}
		}
	}

	// A store that has used every kind of bucket.
	ctx := t.Context()
	db := kvtest.Open(t)
	s := New(db, "personal")
	ana, north := Author{By: "person:ana"}, Author{By: "agent:north", For: "person:ana"}
	if _, err := s.Create(ctx, "a", "one [[b]]\n", KindSave, ana); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, "b", "two\n", KindSave, ana); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Proposing().Append(ctx, "a", "three", north); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Comment(ctx, "a", NewComment{Lines: LineRange{From: 1, To: 1}, Text: "why?", Author: north, Asks: "person:ana"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(ctx, "b", "B", "two\nmore\n", 0, ana); err != nil {
		t.Fatal(err)
	}
	for _, x := range indexes {
		if x.build != nil {
			if err := x.build(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
	}
	var made []string
	if err := db.View(ctx, func(tx kv.Tx) error {
		made = made[:0]
		return spaces.Bucket(tx, "personal").ForEachBucket(func(name []byte) error {
			made = append(made, string(name))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	docBuckets := 0
	for _, name := range made {
		if !strings.HasPrefix(name, "doc") {
			continue // conversations', members'
		}
		docBuckets++
		if !layout[name] {
			t.Errorf("the store has a bucket %s that doc.go's Layout doesn't name", name)
		}
	}
	if docBuckets < len(consts)-2 {
		t.Errorf("the store made only %d of the %d buckets (%v): the test no longer uses them all", docBuckets, len(consts), made)
	}
}

// layoutBuckets are the bucket names of the package doc's Layout section: each line's first
// word up to a slash.
func layoutBuckets(t *testing.T, doc string) map[string]bool {
	_, rest, ok := strings.Cut(doc, "# Layout")
	if !ok {
		t.Fatal("no # Layout")
	}
	names := map[string]bool{}
	for line := range strings.Lines(rest) {
		if !strings.HasPrefix(line, "\t") {
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "Inside") {
				continue
			}
			if len(names) > 0 {
				break // the prose after the layout
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if name, _, ok := strings.Cut(f[0], "/"); ok && name != "" {
			names[name] = true
		}
	}
	return names
}

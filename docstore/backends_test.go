package docstore_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// The reads answer the same on PostgreSQL (which reads many keys at once, kv.GetAll) as on
// bbolt (which reads them one by one): a space of documents that tie, were edited (deltas)
// and deleted, made on bbolt and copied byte for byte into a schema of its own, then
// searched (words, phrases, titles, limits that cut through ties), listed, paged and read
// (every version, histories, logs, walks) on both.
func TestSameAnswersOnPostgres(t *testing.T) {
	ctx := t.Context()
	kvtest.Postgres(t)                   // skipped without PostgreSQL, before making anything
	defer docstore.SetSnapshotEvery(4)() // chains of deltas that cross whole versions
	bolt := kvtest.OpenBolt(t)
	s := docstore.New(bolt, "personal")
	r := rand.New(rand.NewPCG(17, 17))
	words := []string{"alpha", "beta", "gamma", "delta"}
	var docs []docstore.Document
	for i := range 120 {
		var text strings.Builder
		for range 3 + r.IntN(4) {
			for range 1 + r.IntN(3) {
				text.WriteString(words[r.IntN(len(words))] + " ")
			}
			text.WriteString("filler\n")
		}
		title := fmt.Sprintf("Note %03d", i)
		if i%7 == 0 {
			title += " " + words[i%len(words)]
		}
		docs = append(docs, mustCreate(t, s, title, text.String()))
	}
	for i, d := range docs {
		switch {
		case i%5 == 0:
			for n := range 3 + i%7 {
				if _, err := s.Append(ctx, d.ID, fmt.Sprintf("alpha beta %d\n", n), north); err != nil {
					t.Fatal(err)
				}
			}
		case i%11 == 0:
			if _, err := s.Delete(ctx, d.ID, north); err != nil {
				t.Fatal(err)
			}
		}
	}
	p := docstore.New(kvtest.CopyToPostgres(t, bolt), "personal")

	same := func(what string, call func(s *docstore.Store) (any, error)) {
		t.Helper()
		want, werr := call(s)
		got, gerr := call(p)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || !reflect.DeepEqual(want, got) {
			t.Errorf("%s: PostgreSQL answers\n%+v (%v)\nbbolt answers\n%+v (%v)", what, got, gerr, want, werr)
		}
	}
	sameRead := func(what string, call func(r *docstore.Reader) (any, error)) {
		t.Helper()
		same(what, func(s *docstore.Store) (any, error) { return view(t, s, call) })
	}
	for _, q := range []string{"alpha", "alpha beta", "gamma delta", `"alpha beta"`, `"beta gamma" delta`, "note", "filler", "nothing"} {
		for _, limit := range []int{0, 1, 5, 50} {
			sameRead(fmt.Sprintf("Search(%q, %d)", q, limit), func(r *docstore.Reader) (any, error) { return r.Search(q, limit) })
		}
	}
	for _, limit := range []int{1, 10, 200} {
		sameRead(fmt.Sprintf("List(%d)", limit), func(r *docstore.Reader) (any, error) {
			ds, total, err := r.List(limit)
			return fmt.Sprint(ds, total), err
		})
		sameRead(fmt.Sprintf("Recent pages of %d", limit), func(r *docstore.Reader) (any, error) {
			var pages []any
			for after := ""; ; {
				ds, next, total, err := r.Recent(after, limit)
				if err != nil {
					return pages, err
				}
				pages = append(pages, ds, total)
				if after = next; next == "" {
					return pages, nil
				}
			}
		})
		sameRead(fmt.Sprintf("Page walk of %d", limit), func(r *docstore.Reader) (any, error) {
			var pages []any
			for after := ""; ; {
				ds, next, err := r.Page(after, limit)
				if err != nil {
					return pages, err
				}
				pages = append(pages, ds)
				if after = next; next == "" {
					return pages, nil
				}
			}
		})
	}
	for i, d := range docs {
		if i%3 != 0 && i%5 != 0 {
			continue
		}
		for n := range 12 {
			sameRead(fmt.Sprintf("Read version %d of %s", n, d.ID), func(r *docstore.Reader) (any, error) {
				d, v, err := r.Read(d.ID, n)
				return fmt.Sprint(d, v), err
			})
		}
		sameRead("Log "+d.ID, func(r *docstore.Reader) (any, error) {
			d, vs, err := r.Log(d.ID)
			return fmt.Sprint(d, vs), err
		})
		same("Walk "+d.ID, func(s *docstore.Store) (any, error) {
			var vs []docstore.Version
			err := s.Walk(ctx, d.ID, func(v docstore.Version) error { vs = append(vs, v); return nil })
			return vs, err
		})
		sameRead("ByID "+d.ID, func(r *docstore.Reader) (any, error) {
			return r.ByID(d.ID)
		})
		sameRead("Since 1 "+d.ID, func(r *docstore.Reader) (any, error) {
			d, vs, diff, err := r.Since(d.ID, 1)
			return fmt.Sprint(d, vs, diff), err
		})
	}
}

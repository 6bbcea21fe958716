package docstore_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// linkOp is one change of TestLinksSameOnPostgres, made the same on each store: its text
// names documents as {doc N}, the Nth document of the store in the order they were made.
type linkOp struct {
	kind, title, to, text string
}

var docRef = regexp.MustCompile(`\{doc (\d+)\}`)

func (op linkOp) do(t *testing.T, s *docstore.Store) {
	ctx := t.Context()
	docs, _ := view(t, s, func(r *docstore.Reader) ([]docstore.Document, error) { return r.Documents() })
	text := docRef.ReplaceAllStringFunc(op.text, func(m string) string {
		var n int
		fmt.Sscanf(m, "{doc %d}", &n)
		if n < len(docs) {
			return "/document/" + docs[n].ID
		}
		return "/document/01M8PGKZD91FPDJN4QQFFR0WBP"
	})
	switch op.kind {
	case "create":
		s.Create(ctx, op.title, text, docstore.KindWrite, north)
	case "write":
		s.Write(ctx, op.title, "", text, 0, north)
	case "rename":
		s.Rename(ctx, op.title, op.to, ana)
	case "delete":
		s.Delete(ctx, op.title, ana)
	case "undelete":
		s.Undelete(ctx, op.title)
	case "purge":
		s.Purge(ctx, op.title)
	}
}

var anyID = regexp.MustCompile(`[0-9A-Z]{26}`)

// linkAnswers is every links answer of the store, ids left out (each store makes its own).
func linkAnswers(t *testing.T, s *docstore.Store) string {
	t.Helper()
	var b strings.Builder
	docs, _ := view(t, s, func(r *docstore.Reader) ([]docstore.Document, error) { return r.Documents() })
	for _, d := range docs {
		if d.Deleted == nil {
			fmt.Fprintf(&b, "%s: %s\n", d.Title, linksOf(t, s, d.ID))
		}
	}
	un, total, err := view2(t, s, func(r *docstore.Reader) ([]docstore.Document, int, error) { return r.Unlinked(100) })
	fmt.Fprintf(&b, "unlinked %d %v:", total, err)
	for _, d := range un {
		b.WriteString(" " + d.Title)
	}
	groups, total, err := view2(t, s, func(r *docstore.Reader) ([]docstore.BrokenGroup, int, error) { return r.BrokenLinks(100) })
	fmt.Fprintf(&b, "\nbroken %d %v:", total, err)
	for _, g := range groups {
		fmt.Fprintf(&b, " [%s %v %d:", g.Title, g.Deleted != nil, g.InTotal)
		for _, d := range g.In {
			b.WriteString(" " + d.Title)
		}
		b.WriteString("]")
	}
	return anyID.ReplaceAllString(b.String(), "<id>")
}

// The links answer the same on PostgreSQL as on bbolt: the same changes made on each
// store, from scratch (the index is kept by the same code through either backend), give
// the same answers; and a bbolt store copied into PostgreSQL answers byte for byte the same,
// ids and all.
func TestLinksSameOnPostgres(t *testing.T) {
	kvtest.Postgres(t) // skipped without PostgreSQL, before making anything
	boltDB := kvtest.OpenBolt(t)
	onBolt, onPG := docstore.New(boltDB, "personal"), docstore.New(kvtest.OpenURL(t, kvtest.URL(t)), "personal")
	r := rand.New(rand.NewPCG(25, 2))
	titles := []string{"Alpha", "Beta", "Gamma", "Delta", "Epsilon"}
	text := func() string {
		var b strings.Builder
		for range r.IntN(5) {
			switch r.IntN(4) {
			case 0:
				fmt.Fprintf(&b, "`[[%s]]` ", titles[r.IntN(len(titles))])
			case 1:
				fmt.Fprintf(&b, "[x]({doc %d}) ", r.IntN(8))
			default:
				fmt.Fprintf(&b, "[[%s]] ", titles[r.IntN(len(titles))])
			}
		}
		return b.String() + "\n"
	}
	kinds := []string{"create", "create", "write", "rename", "delete", "undelete", "purge"}
	for step := range 150 {
		op := linkOp{kind: kinds[r.IntN(len(kinds))], title: titles[r.IntN(len(titles))], to: titles[r.IntN(len(titles))], text: text()}
		op.do(t, onBolt)
		op.do(t, onPG)
		if step%10 != 9 {
			continue
		}
		for _, s := range []*docstore.Store{onBolt, onPG} {
			checkLinks(t, s)
		}
		if want, got := linkAnswers(t, onBolt), linkAnswers(t, onPG); got != want {
			t.Fatalf("after step %d (%+v), PostgreSQL answers\n%s\nbbolt answers\n%s", step, op, got, want)
		}
	}

	copied := docstore.New(kvtest.CopyToPostgres(t, boltDB), "personal")
	same := func(what string, call func(s *docstore.Store) (any, error)) {
		t.Helper()
		want, werr := call(onBolt)
		got, gerr := call(copied)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || !reflect.DeepEqual(want, got) {
			t.Errorf("%s: PostgreSQL answers\n%+v (%v)\nbbolt answers\n%+v (%v)", what, got, gerr, want, werr)
		}
	}
	docs, _ := view(t, onBolt, func(r *docstore.Reader) ([]docstore.Document, error) { return r.Documents() })
	for _, d := range docs {
		same("Links "+d.Title, func(s *docstore.Store) (any, error) {
			d, ls, err := findLinks(t, s, d.ID, 3)
			return []any{d, ls}, err
		})
		same("Backlinks "+d.Title, func(s *docstore.Store) (any, error) {
			d, page, total, next, err := backlinks(t, s, d.ID, "", 2)
			return []any{d, page, total, next}, err
		})
		same("Read and Links "+d.Title, func(s *docstore.Store) (any, error) {
			d, v, ls, err := readLinked(t, s, d.ID, 0, 5)
			return []any{d, v, ls}, err
		})
		same("Targets "+d.Title, func(s *docstore.Store) (any, error) {
			return view(t, s, func(r *docstore.Reader) (map[string]docstore.Target, error) { return r.Targets(d.ID, titles) })
		})
	}
	same("Unlinked", func(s *docstore.Store) (any, error) {
		ds, n, err := view2(t, s, func(r *docstore.Reader) ([]docstore.Document, int, error) { return r.Unlinked(3) })
		return []any{ds, n}, err
	})
	same("BrokenLinks", func(s *docstore.Store) (any, error) {
		gs, n, err := view2(t, s, func(r *docstore.Reader) ([]docstore.BrokenGroup, int, error) { return r.BrokenLinks(3) })
		return []any{gs, n}, err
	})
	checkLinks(t, copied)
}

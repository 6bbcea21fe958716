package threads

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// The reads answer the same on PostgreSQL (which reads many keys at once, kv.GetAll) as on
// bbolt (which reads them one by one): conversations with private steps and titles, made on bbolt and
// copied byte for byte into a schema of its own, then searched, listed and read on both.
func TestSameAnswersOnPostgres(t *testing.T) {
	ctx := t.Context()
	kvtest.Postgres(t) // skipped without PostgreSQL, before making anything
	bolt := openDB(t)
	s := New(bolt, "personal")
	s.now = clock(t0)
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"alpha", "beta", "gamma", "delta", "launch", "price"}
	text := func() string {
		var b strings.Builder
		for range 2 + r.IntN(5) {
			b.WriteString(words[r.IntN(len(words))] + " ")
		}
		return b.String()
	}
	for i := range 150 {
		conv := fmt.Sprintf("c%d", r.IntN(40))
		title := ""
		if i%9 == 0 {
			title = text()
		}
		say(t, s, conv, title, Message{From: "agent:north", Text: text(), Private: r.IntN(4) == 0})
	}
	if err := s.EnsureIndex(ctx, nil); err != nil {
		t.Fatal(err)
	}
	p := New(kvtest.CopyToPostgres(t, bolt), "personal")

	same := func(what string, call func(r *Reader) (any, error)) {
		t.Helper()
		want, werr := inView(t, s, call)
		got, gerr := inView(t, p, call)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || !reflect.DeepEqual(want, got) {
			t.Errorf("%s: PostgreSQL answers\n%+v (%v)\nbbolt answers\n%+v (%v)", what, got, gerr, want, werr)
		}
	}
	for _, q := range []string{"alpha", "alpha beta", `"launch price"`, "gamma delta launch", "nothing"} {
		for _, limit := range []int{0, 1, 5} {
			for _, except := range []string{"", "c3"} {
				same(fmt.Sprintf("Search(%q, %d, %q)", q, limit, except), func(r *Reader) (any, error) { return r.Search(q, limit, except) })
			}
		}
	}
	for _, limit := range []int{1, 10, 100} {
		same(fmt.Sprintf("Recent(%d)", limit), func(r *Reader) (any, error) { return r.Recent(limit, "c5") })
	}
	for i := range 41 {
		id := fmt.Sprintf("c%d", i)
		same("Get "+id, func(r *Reader) (any, error) { return r.Get(id) })
		same("Page "+id, func(r *Reader) (any, error) {
			msgs, more, err := r.Page(id, 3, "")
			return fmt.Sprint(msgs, more), err
		})
	}
}

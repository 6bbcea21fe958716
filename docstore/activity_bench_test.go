package docstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// BenchmarkActivity reads a page of the activity (what docs log and /activity read) of a
// store of 100,000 versions in 20 spaces (5,000 a space: 50 documents of 100 versions,
// by five agents in sessions of their own): the first page of all 20 spaces, a page of one
// space, and pages filtered by an agent (one of five) and by a document. A page reads its
// own entries whatever the history's length; a filter reads until it has a page, at most
// 20,000 entries a space.
//
//	go test -run '^$' -bench BenchmarkActivity -benchtime 20x ./docstore
func BenchmarkActivity(b *testing.B) {
	if testing.Short() {
		b.Skip("writes 100,000 versions")
	}
	db := boltNoSync(b)
	const nSpaces, nDocs, nVersions = 20, 50, 100
	var all []string
	var doc string
	for sp := range nSpaces {
		space := fmt.Sprintf("space-%02d", sp)
		all = append(all, space)
		s := docstore.New(db, space)
		for d := range nDocs {
			by := docstore.Author{By: fmt.Sprintf("agent:a%d", d%5), For: "person:ana", Door: docstore.DoorMCP, Client: "Claude Code", Session: fmt.Sprintf("m%d-%d", sp, d%5)}
			made, err := s.Create(b.Context(), fmt.Sprintf("Doc %d", d), "one\n", docstore.KindWrite, by)
			if err != nil {
				b.Fatal(err)
			}
			if doc == "" {
				doc = made.Document.ID
			}
			for v := 1; v < nVersions; v++ {
				if _, err := s.Append(b.Context(), made.Document.ID, fmt.Sprint("line ", v), by); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	page := func(b *testing.B, in []string, f docstore.ActivityFilter) {
		var wall, cpu []time.Duration
		for b.Loop() {
			var (
				a   docstore.Activity
				err error
			)
			timed(&wall, &cpu, func() {
				a, err = docstore.ReadIn(b.Context(), docstore.New(db, in[0]), func(r *docstore.Reader) (docstore.Activity, error) {
					return r.Activity(in, f, "", 100)
				})
				_ = docstore.Sessions(a.Events)
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(a.Events)), "events")
		}
		percentiles(b, wall, cpu)
		meanCPU(b, cpu)
	}
	b.Run("first page, 20 spaces", func(b *testing.B) { page(b, all, docstore.ActivityFilter{}) })
	b.Run("first page, one space", func(b *testing.B) { page(b, all[:1], docstore.ActivityFilter{}) })
	b.Run("an agent's, 20 spaces", func(b *testing.B) { page(b, all, docstore.ActivityFilter{Agent: "agent:a3"}) })
	b.Run("a document's, 20 spaces", func(b *testing.B) { page(b, all, docstore.ActivityFilter{Document: doc}) })
}

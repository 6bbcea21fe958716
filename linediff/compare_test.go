package linediff

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/hexops/gotextdiff"
	gotextmyers "github.com/hexops/gotextdiff/myers"
	"github.com/hexops/gotextdiff/span"
)

// BenchmarkCompare puts linediff beside gotextdiff's Myers on the same inputs: it is why
// gotextdiff is not the engine (see the README's dependency table). gotextdiff needs memory
// O((N+M)·D), so its 1 MB case (26.9 s and 9.2 GB of RSS when the README's figure was taken)
// runs only with COMPASS_BENCH_HUGE=1:
//
//	COMPASS_BENCH_HUGE=1 go test -run '^$' -bench Compare -benchmem ./linediff
func BenchmarkCompare(b *testing.B) {
	for _, size := range []struct {
		name  string
		lines int
		huge  bool
	}{{"100KB", 2000, false}, {"1MB", 20000, true}} {
		r := rand.New(rand.NewPCG(7, 7))
		a := genDoc(r, size.lines)
		c := changeLines(r, a, 0.5)
		before, after := strings.Join(a, ""), strings.Join(c, "")
		b.Run("linediff/"+size.name+"HalfChanged", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				Unified("a", "b", before, after, 3)
			}
		})
		b.Run("gotextdiff/"+size.name+"HalfChanged", func(b *testing.B) {
			if size.huge && os.Getenv("COMPASS_BENCH_HUGE") == "" {
				b.Skip("takes about half a minute and 9 GB: set COMPASS_BENCH_HUGE=1")
			}
			b.ReportAllocs()
			for range b.N {
				edits := gotextmyers.ComputeEdits(span.URIFromPath("a"), before, after)
				_ = gotextdiff.ToUnified("a", "b", before, edits)
			}
		})
	}
}

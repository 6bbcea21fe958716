package docstore_test

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkRenameLinked: a rename of a document linked by [[Title]] from n others (each a
// paragraph of prose with the link), which rewrites every one of them: n/250
// transactions of 250 versions each. It reports the rename's time per linking document,
// and the whole rename's; each iteration renames back and forth, so every one rewrites n.
//
//	go test -run '^$' -bench RenameLinked -benchtime 2x ./docstore
func BenchmarkRenameLinked(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			if testing.Short() && n > 1000 {
				b.Skip("makes 10,000 documents")
			}
			ctx := b.Context()
			s := open(b, "personal")
			mustCreate(b, s, "Hub 0", "The hub.\n")
			fill(b, s, n, docTitle, func(i int) string {
				return fmt.Sprintf("# Spoke %d\n\nThis note is about item %d; see [[Hub 0]] for the whole.\nIt was reviewed on Tuesday, and will ship in May.\n", i, i)
			})
			b.ResetTimer()
			var took time.Duration
			for i := range b.N {
				start := time.Now()
				saved, err := s.Rename(ctx, fmt.Sprintf("Hub %d", i), fmt.Sprintf("Hub %d", i+1), ana)
				took += time.Since(start)
				if err != nil || saved.Relinked != n {
					b.Fatalf("rename: %v, %d relinked, want %d", err, saved.Relinked, n)
				}
			}
			b.ReportMetric(float64(took.Microseconds())/float64(b.N*n), "µs/document")
			b.ReportMetric(took.Seconds()/float64(b.N), "s/rename")
		})
	}
}

package docstore_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// text makes n lines of about 50 bytes, numbered so every line is distinct.
func text(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d: %s\n", i, strings.Repeat(string(rune('a'+r.IntN(26))), 40))
	}
	return lines
}

// BenchmarkEdit100KB is one edit_document of one line in a 100 KB document, durable.
func BenchmarkEdit100KB(b *testing.B) {
	s := open(b, "personal")
	lines := text(2000, 1)
	d := mustCreate(b, s, "Big", strings.Join(lines, ""))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		old := lines[1000]
		lines[1000] = fmt.Sprintf("line 1000 edited %d\n", i)
		if _, err := s.Edit(d.ID, old, lines[1000], north); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRewrite1MBHalfChanged is a write_document of a 1 MB document with half its lines
// changed: the worst case of the line diff behind "+N −M lines".
func BenchmarkRewrite1MBHalfChanged(b *testing.B) {
	s := open(b, "personal")
	base := text(20000, 2)
	d := mustCreate(b, s, "Huge", strings.Join(base, ""))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		next := append([]string(nil), base...)
		r := rand.New(rand.NewPCG(uint64(i), 3))
		for j := range next {
			if r.IntN(2) == 0 {
				next[j] = fmt.Sprintf("changed %d in round %d\n", j, i)
			}
		}
		if _, err := s.Write(d.ID, "", strings.Join(next, ""), 0, north); err != nil {
			b.Fatal(err)
		}
	}
}

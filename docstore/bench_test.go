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
	ctx := b.Context()
	s := open(b, "personal")
	lines := text(2000, 1)
	d := mustCreate(b, s, "Big", strings.Join(lines, ""))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		old := lines[1000]
		lines[1000] = fmt.Sprintf("line 1000 edited %d\n", i)
		if _, err := s.Edit(ctx, d.ID, old, lines[1000], north); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRewrite1MBHalfChanged is a write_document of a 1 MB document with half its lines
// changed: the worst case of the line diff behind "+N −M lines". Its two texts are made
// before the timer starts and differ in half the lines, chosen at random; the document
// alternates between them, so every write changes exactly half the lines of the one before.
func BenchmarkRewrite1MBHalfChanged(b *testing.B) {
	ctx := b.Context()
	s := open(b, "personal")
	base := text(20000, 2)
	other := append([]string(nil), base...)
	r := rand.New(rand.NewPCG(3, 3))
	for _, j := range r.Perm(len(other))[:len(other)/2] {
		other[j] = fmt.Sprintf("changed line %d\n", j)
	}
	texts := [2]string{strings.Join(base, ""), strings.Join(other, "")}
	d := mustCreate(b, s, "Huge", texts[0])
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		saved, err := s.Write(ctx, d.ID, "", texts[(i+1)%2], 0, north)
		if err != nil {
			b.Fatal(err)
		}
		if saved.Added != len(base)/2 || saved.Removed != len(base)/2 {
			b.Fatalf("write %d changed +%d −%d lines, want half of %d", i, saved.Added, saved.Removed, len(base))
		}
	}
}

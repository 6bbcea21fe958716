package docstore_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// What a call that answers a little of a large document costs (issue 51): a document of
// 7.7 MiB with 10 versions, each version changing one line, a heading every 1,000 lines.
// docs/PERFORMANCE.md gives each one's allocation as a multiple of the document's size:
//
//	go test -run '^$' -bench 'Touch' -benchmem -benchtime 20x ./docstore
func touchHistory(b *testing.B) (*docstore.Store, docstore.Document) {
	b.Helper()
	s := open(b, "personal")
	size := 77 << 20 / 10
	if testing.Short() {
		size = 1 << 20
	}
	textOf := func(v int) string {
		var t strings.Builder
		t.Grow(size + 100)
		for i := 1; t.Len() < size; i++ {
			switch {
			case i%1000 == 1:
				fmt.Fprintf(&t, "## Part %d\n", i/1000)
			case i == 500+v*1000:
				fmt.Fprintf(&t, "Line %d, as version %d left it.\n", i, v)
			default:
				fmt.Fprintf(&t, "Line %06d: the notes go on, a line at a time, %d.\n", i, i*7919%10007)
			}
		}
		return t.String()
	}
	d := mustCreate(b, s, "Large", textOf(1))
	for v := 2; v <= 10; v++ {
		saved, err := s.Write(b.Context(), d.ID, "", textOf(v), 0, north)
		if err != nil {
			b.Fatal(err)
		}
		d = saved.Document
	}
	return s, d
}

func touchReport(b *testing.B, run func() error) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
}

// BenchmarkTouchLinesOld reads two lines of version 1 (rebuilt through 9 deltas).
func BenchmarkTouchLinesOld(b *testing.B) {
	s, d := touchHistory(b)
	touchReport(b, func() error {
		return s.View(b.Context(), func(r *docstore.Reader) error {
			_, _, p, err := r.ReadLines(d.ID, 1, docstore.LineRange{From: 1500, To: 1501})
			if err == nil && !strings.Contains(p.Lines[0], "version 1 left it") {
				err = fmt.Errorf("lines %q", p.Lines)
			}
			return err
		})
	})
}

// BenchmarkTouchLinesLatest reads two lines of the latest version (kept whole).
func BenchmarkTouchLinesLatest(b *testing.B) {
	s, d := touchHistory(b)
	touchReport(b, func() error {
		return s.View(b.Context(), func(r *docstore.Reader) error {
			_, _, _, err := r.ReadLines(d.ID, 0, docstore.LineRange{From: 10500, To: 10501})
			return err
		})
	})
}

// BenchmarkTouchSectionOld reads a section of 1,000 lines of version 1.
func BenchmarkTouchSectionOld(b *testing.B) {
	s, d := touchHistory(b)
	touchReport(b, func() error {
		return s.View(b.Context(), func(r *docstore.Reader) error {
			_, _, p, _, err := r.ReadSection(d.ID, 1, "Part 1")
			if err == nil && len(p.Lines) != 1000 {
				err = fmt.Errorf("%d lines", len(p.Lines))
			}
			return err
		})
	})
}

// BenchmarkTouchDiff diffs version 1 against the latest.
func BenchmarkTouchDiff(b *testing.B) {
	s, d := touchHistory(b)
	touchReport(b, func() error {
		return s.View(b.Context(), func(r *docstore.Reader) error {
			_, diff, err := r.Diff(d.ID, 1, 0)
			if err == nil && !strings.Contains(diff, "version 1 left it") {
				err = fmt.Errorf("diff %.200q", diff)
			}
			return err
		})
	})
}

// BenchmarkTouchBlame works out the blame the page shows a window of.
func BenchmarkTouchBlame(b *testing.B) {
	s, d := touchHistory(b)
	touchReport(b, func() error {
		bl, err := s.Blame(b.Context(), d.ID)
		if err == nil && len(bl.Runs) < 10 {
			err = fmt.Errorf("%d runs", len(bl.Runs))
		}
		return err
	})
}

// BenchmarkTouchAppend appends a line to the latest version.
func BenchmarkTouchAppend(b *testing.B) {
	s, d := touchHistory(b)
	touchReport(b, func() error {
		_, err := s.Append(b.Context(), d.ID, "One more line.", north)
		return err
	})
}

// BenchmarkTouchRead reads the latest version whole.
func BenchmarkTouchRead(b *testing.B) {
	s, d := touchHistory(b)
	touchReport(b, func() error {
		return s.View(b.Context(), func(r *docstore.Reader) error {
			_, _, err := r.Read(d.ID, 0)
			return err
		})
	})
}

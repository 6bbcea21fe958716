package docstore_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
)

func TestParseLineRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want docstore.LineRange
		bad  bool
	}{
		{"120-180", docstore.LineRange{From: 120, To: 180}, false},
		{"120-", docstore.LineRange{From: 120}, false},
		{"-40", docstore.LineRange{To: 40}, false},
		{" 7 ", docstore.LineRange{From: 7, To: 7}, false},
		{"5-2", docstore.LineRange{}, true},
		{"-", docstore.LineRange{}, true},
		{"", docstore.LineRange{}, true},
		{"0-3", docstore.LineRange{}, true},
		{"a-b", docstore.LineRange{}, true},
		{"1-2-3", docstore.LineRange{}, true},
	} {
		got, err := docstore.ParseLineRange(tc.in)
		if tc.bad != (err != nil) || (!tc.bad && got != tc.want) {
			t.Errorf("ParseLineRange(%q) = %+v, %v", tc.in, got, err)
		}
		if err != nil && !errors.Is(err, docstore.ErrBadRange) {
			t.Errorf("ParseLineRange(%q): %v is no ErrBadRange", tc.in, err)
		}
	}
}

// ReadLines gives the same lines as cutting them out of Read's text, from the latest
// version (read in place) and from older ones (rebuilt from deltas), for every range.
func TestReadLines(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	texts := []string{"one\ntwo\r\nthree", "one\ntwo\nthree\n", "", "\n\n", "only"}
	d := mustCreate(t, s, "Lines", texts[0])
	for _, text := range texts[1:] {
		if _, err := s.Write(ctx, d.ID, "", text, 0, north); err != nil {
			t.Fatal(err)
		}
	}
	ranges := []docstore.LineRange{{From: 1, To: 1}, {From: 2}, {To: 2}, {From: 1, To: 9}, {From: 3, To: 3}, {From: 4}}
	for n := 1; n <= len(texts); n++ {
		_, v, err := read(t, s, d.ID, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range ranges {
			want, werr := docstore.Lines(v.Text, r)
			var got docstore.Version
			var part docstore.Part
			err := s.View(ctx, func(rd *docstore.Reader) (err error) {
				_, got, part, err = rd.ReadLines(d.ID, n, r)
				return err
			})
			if (werr == nil) != (err == nil) || !slices.Equal(part.Lines, want.Lines) || part.Total != want.Total || part.First != want.First || part.Last != want.Last {
				t.Errorf("version %d %+v: ReadLines %+v %v, Lines %+v %v", n, r, part, err, want, werr)
			}
			if got.Number != n || got.Text != "" {
				t.Errorf("version %d: ReadLines gave version %d with text %q", n, got.Number, got.Text)
			}
		}
	}
	part, _ := docstore.Lines("one\ntwo\r\nthree", docstore.LineRange{From: 2})
	if !slices.Equal(part.Lines, []string{"two", "three"}) || part.Total != 3 {
		t.Errorf("Lines: %+v", part)
	}
	var none *docstore.NoLinesError
	if _, err := docstore.Lines("a\n", docstore.LineRange{From: 2}); !errors.As(err, &none) || none.Total != 1 {
		t.Errorf("past the end: %v", err)
	}
}

// ReadLines of an older version follows the lines asked for down the deltas, without
// rebuilding the text: across a history of random changes (lines changed, added, removed,
// the last line's break taken away and given back), every range of every version is what
// the rebuilt text's lines are.
func TestReadLinesFollowsTheDeltas(t *testing.T) {
	for _, every := range []int{64, 4} { // 4: chains that cross versions kept whole
		t.Run(fmt.Sprint(every), func(t *testing.T) {
			defer docstore.SetSnapshotEvery(every)()
			readLinesFollowsTheDeltas(t)
		})
	}
}

func readLinesFollowsTheDeltas(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	r := rand.New(rand.NewPCG(51, 1))
	lines := make([]string, 40)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d\n", i)
	}
	d := mustCreate(t, s, "Changing", strings.Join(lines, ""))
	for v := 2; v <= 30; v++ {
		for range 1 + r.IntN(4) {
			i := r.IntN(len(lines) + 1)
			switch r.IntN(3) {
			case 0:
				lines = slices.Insert(lines, i, fmt.Sprintf("added in %d\r\n", v), fmt.Sprintf("and this, %d\n", v))
			case 1:
				if i < len(lines) {
					lines = slices.Delete(lines, i, min(i+1+r.IntN(3), len(lines)))
				}
			default:
				if i < len(lines) {
					lines[i] = fmt.Sprintf("changed in %d\n", v)
				}
			}
		}
		text := strings.Join(lines, "")
		if v%5 == 0 {
			text = strings.TrimSuffix(text, "\n")
		}
		saved, err := s.Write(ctx, d.ID, "", text, 0, north)
		if err != nil {
			t.Fatal(err)
		}
		d = saved.Document
	}
	if d.Version < 20 {
		t.Fatalf("only %d versions", d.Version)
	}
	// A diff of two versions, read as lines (pair), is the diff of their rebuilt texts.
	for range 60 {
		x, y := 1+r.IntN(d.Version), 1+r.IntN(d.Version)
		_, vx, err := read(t, s, d.ID, x)
		if err != nil {
			t.Fatal(err)
		}
		_, vy, err := read(t, s, d.ID, y)
		if err != nil {
			t.Fatal(err)
		}
		want := linediff.Unified(fmt.Sprintf("%s v%d", vx.Title, x), fmt.Sprintf("%s v%d", vy.Title, y), vx.Text, vy.Text, 3)
		var got string
		err = s.View(ctx, func(rd *docstore.Reader) (err error) {
			_, got, err = rd.Diff(d.ID, x, y)
			return err
		})
		if err != nil || got != want {
			t.Fatalf("Diff(%d, %d) = %q, %v; want %q", x, y, got, err, want)
		}
		// And what changed since x, the diff to the latest.
		_, latest, err := read(t, s, d.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		want = linediff.Unified(fmt.Sprintf("%s v%d", vx.Title, x), fmt.Sprintf("%s v%d", latest.Title, d.Version), vx.Text, latest.Text, 3)
		err = s.View(ctx, func(rd *docstore.Reader) (err error) {
			_, _, got, err = rd.Since(d.ID, x)
			return err
		})
		if err != nil || got != want {
			t.Fatalf("Since(%d) = %q, %v; want %q", x, got, err, want)
		}
	}
	for n := 1; n <= d.Version; n++ {
		_, v, err := read(t, s, d.ID, n)
		if err != nil {
			t.Fatal(err)
		}
		for range 20 {
			from, to := r.IntN(60), r.IntN(60)
			if to != 0 && to < from {
				from, to = to, from
			}
			rg := docstore.LineRange{From: from, To: to}
			if from == 0 && to == 0 {
				rg.To = 1
			}
			want, werr := docstore.Lines(v.Text, rg)
			var part docstore.Part
			err := s.View(ctx, func(rd *docstore.Reader) (err error) {
				_, _, part, err = rd.ReadLines(d.ID, n, rg)
				return err
			})
			if (werr == nil) != (err == nil) || !slices.Equal(part.Lines, want.Lines) || part.Total != want.Total || part.First != want.First || part.Last != want.Last {
				t.Fatalf("version %d %+v: ReadLines %+v %v, Lines of the rebuilt text %+v %v", n, rg, part, err, want, werr)
			}
		}
	}
}

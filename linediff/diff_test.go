package linediff

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLines(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n", []string{"\n"}},
		{"a", []string{"a"}},
		{"a\n", []string{"a\n"}},
		{"a\nb", []string{"a\n", "b"}},
		{"a\n\nb\n", []string{"a\n", "\n", "b\n"}},
		{"\r\n", []string{"\r\n"}},
	}
	for _, tt := range tests {
		if got := Lines(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Lines(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := strings.Join(Lines(tt.in), ""); got != tt.in {
			t.Errorf("Lines(%q) does not join back: %q", tt.in, got)
		}
	}
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want []Op
	}{
		{"both empty", "", "", nil},
		{"equal", "a\nb\n", "a\nb\n", []Op{{Equal, 0, 2, 0, 2}}},
		{"insert into empty", "", "a\nb\n", []Op{{Insert, 0, 0, 0, 2}}},
		{"delete all", "a\nb\n", "", []Op{{Delete, 0, 2, 0, 0}}},
		{"replace middle", "a\nb\nc\n", "a\nB\nc\n", []Op{
			{Equal, 0, 1, 0, 1}, {Delete, 1, 2, 1, 1}, {Insert, 2, 2, 1, 2}, {Equal, 2, 3, 2, 3},
		}},
		{"append", "a\n", "a\nb\n", []Op{{Equal, 0, 1, 0, 1}, {Insert, 1, 1, 1, 2}}},
		{"prepend", "b\n", "a\nb\n", []Op{{Insert, 0, 0, 0, 1}, {Equal, 0, 1, 1, 2}}},
		{"newline added at end", "a\nb", "a\nb\n", []Op{
			{Equal, 0, 1, 0, 1}, {Delete, 1, 2, 1, 1}, {Insert, 2, 2, 1, 2},
		}},
		{"line appended after unterminated", "a", "a\nb", []Op{
			{Delete, 0, 1, 0, 0}, {Insert, 1, 1, 0, 2},
		}},
		{"two changes", "a\nb\nc\nd\ne\n", "a\nB\nc\nD\ne\n", []Op{
			{Equal, 0, 1, 0, 1}, {Delete, 1, 2, 1, 1}, {Insert, 2, 2, 1, 2}, {Equal, 2, 3, 2, 3},
			{Delete, 3, 4, 3, 3}, {Insert, 4, 4, 3, 4}, {Equal, 4, 5, 4, 5},
		}},
		{"swap", "a\nb\n", "b\na\n", []Op{{Delete, 0, 1, 0, 0}, {Equal, 1, 2, 0, 1}, {Insert, 2, 2, 1, 2}}},
		// As in git, a paragraph inserted between blank lines is shown
		// with its trailing blank line.
		{"paragraph slides down", "p1\n\np2\n", "p1\n\nnew\n\np2\n", []Op{
			{Equal, 0, 2, 0, 2}, {Insert, 2, 2, 2, 4}, {Equal, 2, 3, 4, 5},
		}},
		{"deleted repeat slides down", "x\na\na\na\ny\n", "x\na\na\ny\n", []Op{
			{Equal, 0, 3, 0, 3}, {Delete, 3, 4, 3, 3}, {Equal, 4, 5, 3, 4},
		}},
		{"blank line removed", "a\n\n\nb\n", "a\n\nb\n", []Op{
			{Equal, 0, 2, 0, 2}, {Delete, 2, 3, 2, 2}, {Equal, 3, 4, 2, 3},
		}},
	}
	for _, tt := range tests {
		a, b := Lines(tt.a), Lines(tt.b)
		got := Diff(a, b)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Diff = %+v, want %+v", tt.name, got, tt.want)
		}
		if err := checkOps(a, b, got); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

func TestStats(t *testing.T) {
	tests := []struct {
		a, b           string
		added, removed int
	}{
		{"", "", 0, 0},
		{"a\n", "a\n", 0, 0},
		{"a\n", "b\n", 1, 1},
		{"", "a\nb\nc", 3, 0},
		{"a\nb\nc", "", 0, 3},
		{"a\nb\nc\n", "a\nc\n", 0, 1},
		{"a", "a\n", 1, 1},
		{"a\nb\nc\nd\n", "a\nx\nb\nd\ny\n", 2, 1},
	}
	for _, tt := range tests {
		added, removed := Stats(tt.a, tt.b)
		if added != tt.added || removed != tt.removed {
			t.Errorf("Stats(%q, %q) = +%d -%d, want +%d -%d", tt.a, tt.b, added, removed, tt.added, tt.removed)
		}
	}
}

// TestDiffMinimal compares edit counts with the dynamic programme on
// random texts small enough that the search's cost limits never bite.
func TestDiffMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		a := randText(r, r.IntN(40))
		b := a
		if r.IntN(2) == 0 {
			b = randText(r, r.IntN(40))
		} else {
			for range r.IntN(4) + 1 {
				b = mutate(r, b)
			}
		}
		al, bl := Lines(a), Lines(b)
		ops := Diff(al, bl)
		if err := checkOps(al, bl, ops); err != nil {
			t.Fatalf("case %d %q -> %q: %v", i, a, b, err)
		}
		added, removed := countOps(ops)
		l := lcs(al, bl)
		if added != len(bl)-l || removed != len(al)-l {
			t.Fatalf("case %d %q -> %q: +%d -%d, minimal is +%d -%d", i, a, b, added, removed, len(bl)-l, len(al)-l)
		}
		if sa, sr := Stats(a, b); sa != added || sr != removed {
			t.Fatalf("case %d: Stats +%d -%d, Diff +%d -%d", i, sa, sr, added, removed)
		}
	}
}

// TestDiffMinimalMedium exercises the search on regions large enough to
// need several levels of splitting, still below the cost limit.
func TestDiffMinimalMedium(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 20 {
		a := randText(r, 300+r.IntN(300))
		b := a
		for range 30 {
			b = mutate(r, b)
		}
		al, bl := Lines(a), Lines(b)
		ops := Diff(al, bl)
		if err := checkOps(al, bl, ops); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		added, removed := countOps(ops)
		l := lcs(al, bl)
		if added != len(bl)-l || removed != len(al)-l {
			t.Fatalf("case %d: +%d -%d, minimal is +%d -%d", i, added, removed, len(bl)-l, len(al)-l)
		}
	}
}

// TestDiffBounded runs the benchmark inputs, including those built to be
// expensive, and checks that each gives a correct diff promptly. The time
// limit is loose so that it holds under -race on a slow machine.
func TestDiffBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	for _, c := range bigCases() {
		start := time.Now()
		ops := Diff(c.a, c.b)
		el := time.Since(start)
		if err := checkOps(c.a, c.b, ops); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		added, removed := countOps(ops)
		t.Logf("%s: %d/%d lines, +%d -%d, %v", c.name, len(c.a), len(c.b), added, removed, el)
		if el > 5*time.Second {
			t.Errorf("%s took %v", c.name, el)
		}
	}
}

// TestDiffNearMinimalLarge checks that the cost limits leave big realistic
// diffs close to minimal: on a document with 1% of its lines changed the
// diff must be exact, and with half changed within a few percent.
func TestDiffNearMinimalLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	r := rand.New(rand.NewPCG(5, 6))
	a := genDoc(r, 4000)
	for _, frac := range []float64{0.01, 0.5} {
		b := changeLines(r, a, frac)
		ops := Diff(a, b)
		if err := checkOps(a, b, ops); err != nil {
			t.Fatal(err)
		}
		added, removed := countOps(ops)
		l := lcs(a, b)
		minimal := len(a) + len(b) - 2*l
		got := added + removed
		t.Logf("changed %.0f%%: %d edits, minimal %d", frac*100, got, minimal)
		if frac < 0.1 && got != minimal || float64(got) > 1.05*float64(minimal) {
			t.Errorf("changed %.0f%%: %d edits, minimal %d", frac*100, got, minimal)
		}
	}
}

// TestDiffBudgetExhausted checks that running out of search budget, at
// any point, still yields a correct diff.
func TestDiffBudgetExhausted(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 2000 {
		a := randText(r, r.IntN(60))
		b := randText(r, r.IntN(60))
		if r.IntN(2) == 0 {
			b = mutate(r, mutate(r, a))
		}
		al, bl := Lines(a), Lines(b)
		budget := r.IntN(200)
		ops := opsFromEdits(len(al), len(bl), diffEditsWithin(al, bl, budget))
		if err := checkOps(al, bl, ops); err != nil {
			t.Fatalf("case %d budget %d %q -> %q: %v", i, budget, a, b, err)
		}
	}
	r2 := rand.New(rand.NewPCG(42, 1))
	a := genDoc(r2, 5000)
	b := changeLines(r2, a, 0.5)
	for _, budget := range []int{0, 1, 1000, 100000} {
		ops := opsFromEdits(len(a), len(b), diffEditsWithin(a, b, budget))
		if err := checkOps(a, b, ops); err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		added, removed := countOps(ops)
		t.Logf("budget %d: +%d -%d", budget, added, removed)
	}
}

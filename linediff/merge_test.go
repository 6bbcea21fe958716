package linediff

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestMerge3(t *testing.T) {
	const base = "a\nb\nc\nd\ne\n"
	tests := []struct {
		name               string
		base, theirs, mine string
		want               string
		conflicts          []Conflict
	}{
		{"nothing changed", base, base, base, base, nil},
		{"theirs only", base, "a\nB\nc\nd\ne\n", base, "a\nB\nc\nd\ne\n", nil},
		{"mine only", base, base, "a\nb\nc\nD\ne\n", "a\nb\nc\nD\ne\n", nil},
		{"both, apart", base, "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "A\nb\nc\nd\nE\n", nil},
		{"same change on both sides", base, "a\nB\nc\nd\ne\n", "a\nB\nc\nd\ne\n", "a\nB\nc\nd\ne\n", nil},
		{"same change plus another", base, "a\nB\nc\nd\ne\n", "a\nB\nc\nd\nE\n", "a\nB\nc\nd\nE\n", nil},
		{"insert and delete apart", base, "a\nb\nx\nc\nd\ne\n", "a\nb\nc\nd\n", "a\nb\nx\nc\nd\n", nil},
		{"both from empty, same", "", "x\n", "x\n", "x\n", nil},
		{"newline added by one side", "a\nb\nc", "A\nb\nc", "a\nb\nc\n", "A\nb\nc\n", nil},
		{"overlap", base, "a\nB\nc\nd\ne\n", "a\nβ\nc\nd\ne\n", "", []Conflict{
			{2, []string{"b"}, 2, []string{"B"}, 2, []string{"β"}},
		}},
		{"adjacent lines", base, "a\nB\nc\nd\ne\n", "a\nb\nC\nd\ne\n", "", []Conflict{
			{2, []string{"b", "c"}, 2, []string{"B", "c"}, 2, []string{"b", "C"}},
		}},
		{"inserts at one spot", base, "a\nb\nx\nc\nd\ne\n", "a\nb\ny\nc\nd\ne\n", "", []Conflict{
			{3, []string{}, 3, []string{"x"}, 3, []string{"y"}},
		}},
		{"insert next to change", base, "a\nb\nx\nc\nd\ne\n", "a\nb\nC\nd\ne\n", "", []Conflict{
			{3, []string{"c"}, 3, []string{"x", "c"}, 3, []string{"C"}},
		}},
		{"delete against change", base, "a\nc\nd\ne\n", "a\nB\nc\nd\ne\n", "", []Conflict{
			{2, []string{"b"}, 2, []string{}, 2, []string{"B"}},
		}},
		{"two conflicts, offsets", base, "x\ny\nA\nb\nc\nd\nE\n", "a\nβ\nc\nd\nε\nz\n", "", []Conflict{
			{1, []string{"a", "b"}, 1, []string{"x", "y", "A", "b"}, 1, []string{"a", "β"}},
			{5, []string{"e"}, 7, []string{"E"}, 5, []string{"ε", "z"}},
		}},
		{"both append differently", "a\n", "a\nb\n", "a\nc\n", "", []Conflict{
			{2, []string{}, 2, []string{"b"}, 2, []string{"c"}},
		}},
		{"trailing newline both ways", "a\nb", "a\nb\n", "a\nb\nc", "", []Conflict{
			{2, []string{"b"}, 2, []string{"b"}, 2, []string{"b", "c"}},
		}},
	}
	for _, tt := range tests {
		got, conflicts := Merge3(tt.base, tt.theirs, tt.mine)
		if got != tt.want || !reflect.DeepEqual(conflicts, tt.conflicts) {
			t.Errorf("%s: Merge3 = %q, %+v; want %q, %+v", tt.name, got, conflicts, tt.want, tt.conflicts)
		}
	}
}

func TestMerge3Identities(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for i := range 3000 {
		base := randText(r, r.IntN(30))
		x := mutate(r, base)
		if r.IntN(4) == 0 {
			x = randText(r, r.IntN(30))
		}
		checkIdentities(t, fmt.Sprint("case ", i), base, x)
	}
}

func checkIdentities(t *testing.T, name, base, x string) {
	t.Helper()
	for _, c := range []struct {
		what               string
		base, theirs, mine string
	}{
		{"merge(base, base, x)", base, base, x},
		{"merge(base, x, base)", base, x, base},
		{"merge(base, x, x)", base, x, x},
	} {
		got, conflicts := Merge3(c.base, c.theirs, c.mine)
		if got != x || conflicts != nil {
			t.Fatalf("%s: %s with base %q, x %q = %q, %+v", name, c.what, base, x, got, conflicts)
		}
	}
}

// TestMerge3Disjoint builds edits that are at least one unchanged line
// apart, gives each to one side at random, and checks that the merge
// keeps them all. Lines are unique so that no diff can see the edits
// differently from how they were made.
func TestMerge3Disjoint(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	fresh := 0
	newLine := func() string { fresh++; return fmt.Sprintf("new %d\n", fresh) }
	for i := range 2000 {
		n := r.IntN(40) + 1
		base := make([]string, n)
		for k := range base {
			base[k] = fmt.Sprintf("line %d\n", k)
		}
		var theirs, mine, want []string
		for p := 0; p <= n; {
			// An edit at p replaces base[p:p+del] and is followed by
			// base[p+del], kept on both sides.
			if r.IntN(3) > 0 || p == n {
				if p < n {
					theirs, mine, want = append(theirs, base[p]), append(mine, base[p]), append(want, base[p])
				}
				p++
				continue
			}
			del := r.IntN(min(3, n-p) + 1)
			var ins []string
			for range r.IntN(3) {
				ins = append(ins, newLine())
			}
			if del == 0 && len(ins) == 0 {
				continue
			}
			edited, other := &theirs, &mine
			if r.IntN(2) == 0 {
				edited, other = other, edited
			}
			*edited = append(*edited, ins...)
			*other = append(*other, base[p:p+del]...)
			want = append(want, ins...)
			p += del
			if p < n {
				theirs, mine, want = append(theirs, base[p]), append(mine, base[p]), append(want, base[p])
				p++
			}
		}
		b, th, mi, w := strings.Join(base, ""), strings.Join(theirs, ""), strings.Join(mine, ""), strings.Join(want, "")
		got, conflicts := Merge3(b, th, mi)
		if got != w || conflicts != nil {
			t.Fatalf("case %d: Merge3(%q, %q, %q) = %q, %+v; want %q", i, b, th, mi, got, conflicts, w)
		}
	}
}

// TestMerge3Random checks, on texts of few distinct lines, the properties
// that must hold whatever the diffs make of them.
func TestMerge3Random(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	clean := 0
	for i := range 5000 {
		base := randText(r, r.IntN(25))
		theirs, mine := mutate(r, base), mutate(r, base)
		if r.IntN(5) == 0 {
			mine = randText(r, r.IntN(25))
		}
		if err := checkMerge(base, theirs, mine); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if _, c := Merge3(base, theirs, mine); c == nil {
			clean++
		}
	}
	t.Logf("%d of 5000 merges clean", clean)
}

// checkMerge verifies the properties of one merge that do not depend on
// knowing the intended result.
func checkMerge(base, theirs, mine string) error {
	merged, conflicts := Merge3(base, theirs, mine)
	if len(conflicts) > 0 {
		if merged != "" {
			return fmt.Errorf("conflicts and merged %q", merged)
		}
		for _, c := range conflicts {
			if err := checkConflict(base, theirs, mine, c); err != nil {
				return err
			}
		}
	} else {
		if conflicts != nil {
			return fmt.Errorf("empty non-nil conflicts")
		}
		known := map[string]bool{}
		for _, s := range []string{base, theirs, mine} {
			for _, l := range Lines(s) {
				known[l] = true
			}
		}
		for _, l := range Lines(merged) {
			if !known[l] {
				return fmt.Errorf("merge of %q, %q, %q = %q has new line %q", base, theirs, mine, merged, l)
			}
		}
		// Which side is which must not matter to a clean merge.
		if swapped, c := Merge3(base, mine, theirs); swapped != merged || c != nil {
			return fmt.Errorf("merge of %q, %q, %q = %q, swapped = %q, %+v", base, theirs, mine, merged, swapped, c)
		}
	}
	return nil
}

// checkConflict checks that a conflict quotes each text where it says.
func checkConflict(base, theirs, mine string, c Conflict) error {
	for _, s := range []struct {
		name  string
		text  string
		start int
		lines []string
	}{
		{"base", base, c.BaseStart, c.Base},
		{"theirs", theirs, c.TheirsStart, c.Theirs},
		{"mine", mine, c.MineStart, c.Mine},
	} {
		ls := Lines(s.text)
		if s.start < 1 || s.start-1+len(s.lines) > len(ls) {
			return fmt.Errorf("%s: conflict %+v out of range of %q", s.name, c, s.text)
		}
		for k, l := range s.lines {
			if strings.TrimSuffix(ls[s.start-1+k], "\n") != l {
				return fmt.Errorf("%s: conflict %+v misquotes %q", s.name, c, s.text)
			}
		}
	}
	return nil
}

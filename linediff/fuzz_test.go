package linediff

import (
	"strings"
	"testing"
)

// Run with:
//
// go test -fuzz=FuzzMerge3 ./linediff
// go test -fuzz=FuzzDiff ./linediff

var fuzzSeeds = [][3]string{
	{"", "", ""},
	{"a\nb\nc\n", "a\nB\nc\n", "a\nb\nC\n"},
	{"a\nb\nc\nd\ne\n", "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n"},
	{"a\nb", "a\nb\n", "a\nb\nc"},
	{"a", "a\n", "b"},
	{"\n\n\n", "\n\n", "\n\n\n\n"},
	{"# T\n\np\n\nq\n", "# T\n\np\n\nnew\n\nq\n", "# T\n\nq\n"},
	{"x\nx\nx\n", "x\nx\n", "x\ny\nx\nx\n"},
	{"a\r\nb\r\n", "a\nb\n", "a\r\nb\r\nc\r\n"},
}

// FuzzMerge3 checks the merge identities and the properties of checkMerge
// on arbitrary texts.
//
// go test -fuzz=FuzzMerge3 ./linediff
func FuzzMerge3(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, base, theirs, mine string) {
		for _, texts := range [][3]string{
			{base, theirs, mine},
			{lineify(base), lineify(theirs), lineify(mine)},
		} {
			for _, x := range texts[1:] {
				checkIdentities(t, "fuzz", texts[0], x)
			}
			if err := checkMerge(texts[0], texts[1], texts[2]); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzDiff checks that the ops are well formed and turn a into b, that
// Stats agrees with them, that they are minimal where the reference is
// affordable, and that the unified diff applies.
//
// go test -fuzz=FuzzDiff ./linediff
func FuzzDiff(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s[0], s[1])
		f.Add(s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		checkDiff(t, a, b)
		checkDiff(t, lineify(a), lineify(b))
	})
}

func checkDiff(t *testing.T, a, b string) {
	t.Helper()
	al, bl := Lines(a), Lines(b)
	if strings.Join(al, "") != a {
		t.Fatalf("Lines(%q) does not join back", a)
	}
	ops := Diff(al, bl)
	if err := checkOps(al, bl, ops); err != nil {
		t.Fatal(err)
	}
	added, removed := countOps(ops)
	if sa, sr := Stats(a, b); sa != added || sr != removed {
		t.Fatalf("Stats +%d -%d, Diff +%d -%d", sa, sr, added, removed)
	}
	// Up to 512 lines in all, the edit cost is at most 512 and the search
	// meets in the middle before its cost limit (256) can cut it short.
	if len(al)+len(bl) <= 512 {
		if l := lcs(al, bl); added != len(bl)-l || removed != len(al)-l {
			t.Fatalf("+%d -%d, minimal is +%d -%d", added, removed, len(bl)-l, len(al)-l)
		}
	}
	for _, context := range []int{0, 3} {
		d := Unified("a", "b", a, b, context)
		if got, err := applyUnified(a, d); err != nil || got != b {
			t.Fatalf("unified diff\n%s\napplies as %q, %v", d, got, err)
		}
	}
}

// lineify reads each byte as a line from vocab, so that the fuzzer's byte
// mutations become line edits over texts with many repeated lines, where
// diffs and merges are hard. It stops at 100 lines: a merge property
// takes a dozen merges, and longer texts of few distinct lines would slow
// the fuzzer (and its minimiser) far more than they add.
func lineify(s string) string {
	s = s[:min(len(s), 100)]
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		l := vocab[int(s[i])%len(vocab)]
		if i < len(s)-1 && !strings.HasSuffix(l, "\n") {
			l += "\n"
		}
		sb.WriteString(l)
	}
	return sb.String()
}

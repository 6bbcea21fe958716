package linediff

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// genDoc returns n lines of Markdown-like text, about 50 bytes a line on
// average, so that 20k lines make 1 MB. Headings, paragraphs, lists and
// blank lines give the mix of unique and repeated lines of real notes.
func genDoc(r *rand.Rand, n int) []string {
	ls := make([]string, 0, n+16)
	for sec := 1; len(ls) < n; sec++ {
		ls = append(ls, "## Section "+strconv.Itoa(sec)+" "+words(r, 3)+"\n", "\n")
		for range r.IntN(4) + 1 {
			for range r.IntN(6) + 2 {
				ls = append(ls, words(r, 9)+"\n")
			}
			ls = append(ls, "\n")
		}
		if r.IntN(3) == 0 {
			for range r.IntN(5) + 2 {
				ls = append(ls, "- "+words(r, 4)+"\n")
			}
			ls = append(ls, "\n")
		}
	}
	return ls[:n]
}

func words(r *rand.Rand, n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		for range r.IntN(6) + 2 {
			sb.WriteByte(byte('a' + r.IntN(26)))
		}
	}
	return sb.String()
}

// changeLines edits about frac of the lines of a for which where is true:
// rewording, deleting, inserting, and replacing with a blank line or a
// copy of another line (the edits that defeat anchoring on unique lines).
func changeLines(r *rand.Rand, a []string, frac float64) []string {
	return changeLinesWhere(r, a, frac, func(int) bool { return true })
}

func changeLinesWhere(r *rand.Rand, a []string, frac float64, where func(int) bool) []string {
	b := make([]string, 0, len(a)+len(a)/4)
	for i, l := range a {
		if !where(i) || r.Float64() >= frac {
			b = append(b, l)
			continue
		}
		switch k := r.IntN(10); {
		case k < 4:
			b = append(b, words(r, 9)+"\n")
		case k < 6:
		case k < 8:
			b = append(b, words(r, 9)+"\n", l)
		case k < 9:
			b = append(b, "\n")
		default:
			b = append(b, a[r.IntN(len(a))])
		}
	}
	return b
}

type bigCase struct {
	name string
	a, b []string
}

func bigCases() []bigCase {
	r := rand.New(rand.NewPCG(42, 1))
	doc := genDoc(r, 20000)
	shuffled := append([]string(nil), doc...)
	r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })

	// Blank lines moved about: most lines are unchanged, but the many
	// identical blank lines offer the search countless false matches.
	var noBlanks []string
	for _, l := range doc {
		if l != "\n" {
			noBlanks = append(noBlanks, l)
		}
	}
	reblanked := make([]string, 0, len(doc))
	for _, l := range noBlanks {
		if r.IntN(4) == 0 {
			reblanked = append(reblanked, "\n")
		}
		reblanked = append(reblanked, l)
	}

	// Few distinct lines in random order: the worst case for Myers.
	few := []string{"\n", "\n", "\n", "}\n", "---\n", "- [ ] todo\n", "```\n", "|---|---|\n"}
	fa, fb := make([]string, 20000), make([]string, 20000)
	for i := range fa {
		fa[i] = few[r.IntN(len(few))]
		fb[i] = few[r.IntN(len(few))]
	}

	return []bigCase{
		{"HalfChanged", doc, changeLines(r, doc, 0.5)},
		{"OnePercent", doc, changeLines(r, doc, 0.01)},
		{"Rewrite", doc, genDoc(r, 20000)},
		{"Shuffled", doc, shuffled},
		{"BlanksMoved", doc, reblanked},
		{"FewDistinct", fa, fb},
	}
}

func benchDiff(b *testing.B, name string) {
	for _, c := range bigCases() {
		if c.name != name {
			continue
		}
		b.SetBytes(int64(len(strings.Join(c.a, ""))))
		b.ReportAllocs()
		for b.Loop() {
			Diff(c.a, c.b)
		}
		return
	}
	b.Fatalf("no case %s", name)
}

func BenchmarkDiff1MBHalfChanged(b *testing.B) { benchDiff(b, "HalfChanged") }
func BenchmarkDiff1MBOnePercent(b *testing.B)  { benchDiff(b, "OnePercent") }
func BenchmarkDiff1MBRewrite(b *testing.B)     { benchDiff(b, "Rewrite") }
func BenchmarkDiff1MBShuffled(b *testing.B)    { benchDiff(b, "Shuffled") }
func BenchmarkDiff1MBBlanksMoved(b *testing.B) { benchDiff(b, "BlanksMoved") }
func BenchmarkDiff1MBFewDistinct(b *testing.B) { benchDiff(b, "FewDistinct") }

// mergeInputs changes about frac of the lines on each side, theirs in even
// blocks of 100 lines and mine in odd ones, keeping clear of block edges
// so that the merge is clean.
func mergeInputs(frac float64) (base, theirs, mine string) {
	r := rand.New(rand.NewPCG(7, 8))
	doc := genDoc(r, 20000)
	inner := func(i int) bool { return i%100 >= 2 && i%100 < 98 }
	t := changeLinesWhere(r, doc, frac, func(i int) bool { return (i/100)%2 == 0 && inner(i) })
	m := changeLinesWhere(r, doc, frac, func(i int) bool { return (i/100)%2 == 1 && inner(i) })
	return strings.Join(doc, ""), strings.Join(t, ""), strings.Join(m, "")
}

func benchMerge(b *testing.B, frac float64) {
	base, theirs, mine := mergeInputs(frac)
	b.SetBytes(int64(len(base)))
	b.ReportAllocs()
	var conflicts []Conflict
	for b.Loop() {
		_, conflicts = Merge3(base, theirs, mine)
	}
	b.ReportMetric(float64(len(conflicts)), "conflicts")
}

func BenchmarkMerge1MBHalf(b *testing.B)       { benchMerge(b, 0.5) }
func BenchmarkMerge1MBOnePercent(b *testing.B) { benchMerge(b, 0.01) }

package docstore

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// osa is the optimal string alignment distance, the whole table filled: what within must
// agree with wherever the distance is within its bound.
func osa(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j-1]+cost, d[i-1][j]+1, d[i][j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// distance runs a pattern of a over b: the bit-parallel distance under test.
func distance(a, b string) int {
	p := newPattern(a)
	run := p.start()
	for _, r := range b {
		p.step(&run, unaccented(r))
	}
	return run.score
}

// The bit-parallel distance is the whole table's: on random strings over a small alphabet
// (so that there are many near matches and swaps), of up to 64 characters, some not ASCII.
func TestBitParallelDistanceIsTheTables(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	word := func(n int) string {
		w := make([]rune, r.IntN(n+1))
		for i := range w {
			w[i] = []rune("abcé")[r.IntN(4)]
		}
		return string(w)
	}
	for i := range 100_000 {
		n := 12
		if i%10 == 0 {
			n = closeRunes
		}
		a, b := word(n), word(n)
		if a == "" {
			a = "a"
		}
		if got, want := distance(a, b), osa([]rune(a), []rune(b)); got != want {
			t.Fatalf("distance(%q, %q) = %d, want %d", a, b, got, want)
		}
	}
	// OSA edits no character twice: ca to abc is 3 (unrestricted Damerau–Levenshtein: 2).
	for _, tc := range []struct {
		a, b string
		want int
	}{{"ca", "abc", 3}, {"plna", "plan", 1}, {"lanch plan", "launch plan", 1}, {"cafe", "café", 0}, {"abc", "", 3}} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// However the titles and the name are made, one lookup takes at most closeBudget steps (and
// one title's past it), and a name too long to be a title takes none.
func TestCloseWorkHasABudget(t *testing.T) {
	long := strings.Repeat("ab", MaxTitle/2)
	f := newCloseFinder(long[:MaxTitle-1] + "z")
	for i := range 100_000 {
		f.consider([]byte(long[:MaxTitle-5]+string(rune('a'+i%26))+"zzz"), []byte("id"))
		if f.budget < -closeRunes*(1+closeWords) {
			t.Fatalf("after %d titles the budget is %d", i+1, f.budget)
		}
	}
	if f.budget > 0 {
		t.Errorf("100,000 near-identical titles left %d of the budget: the test shows nothing", f.budget)
	}
	if n := len(f.best); n > maxClose {
		t.Errorf("%d kept, want at most %d", n, maxClose)
	}
	f = newCloseFinder(strings.Repeat("a", MaxTitle+1))
	f.consider([]byte(strings.Repeat("a", MaxTitle)), []byte("id"))
	if len(f.best) != 0 {
		t.Errorf("a name longer than a title found %d close", len(f.best))
	}
}

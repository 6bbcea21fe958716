package docstore_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// closeTitles is what a lookup of name suggests: the titles of its NotFoundError's Close.
func closeTitles(t testing.TB, err error) []string {
	t.Helper()
	var nf *docstore.NotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, docstore.ErrNotFound) {
		t.Fatalf("err = %v, want a NotFoundError that is ErrNotFound", err)
	}
	var titles []string
	for _, d := range nf.Close {
		titles = append(titles, d.Title)
	}
	return titles
}

// A name that names nothing is refused with the titles close to it, closest first, and only
// close ones (issue 23.15: "Lanch plan" got no hint, though "Launch plan" is one letter away).
func TestNotFoundSuggestsCloseTitles(t *testing.T) {
	db := kvtest.Open(t)
	s := docstore.New(db, "personal")
	for _, title := range []string{"Launch plan", "Launch budget", "Lunch menu", "Notes", "Meeting notes 2026-11-08", "Plan B", "Plan C", "Café rénové"} {
		mustCreate(t, s, title, "x\n")
	}
	// A title of 300 bytes (Cyrillic) named with too many words for the word rule: its
	// first 64 characters are compared whole.
	var long []string
	for i := range 10 {
		long = append(long, strings.Repeat(string(rune('а'+i)), 14))
	}
	mustCreate(t, s, strings.Join(long, " "), "x\n")
	secret := docstore.New(db, "launch")
	mustCreate(t, secret, "Secret roadmap", "x\n")
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"Lanch plan", []string{"Launch plan"}},                                // a letter left out
		{"LANCH PLAN", []string{"Launch plan"}},                                // case doesn't count
		{"Launch plna", []string{"Launch plan"}},                               // two letters swapped: one edit
		{"launch-plan", []string{"Launch plan"}},                               // one word that isn't in any title
		{"Launch plans", []string{"Launch plan"}},                              // one letter too many
		{"Plan D", []string{"Plan B", "Plan C"}},                               // two as close: in the titles' order
		{"Ntoes", []string{"Notes", "Meeting notes 2026-11-08"}},               // whole first (same edits, nearer in length)
		{"lanch", []string{"Lunch menu", "Launch plan", "Launch budget"}},      // a word: at most three
		{"budgte launch", []string{"Launch budget"}},                           // every word, one of them mistyped
		{"cafe renove", []string{"Café rénové"}},                               // accents are letters: two edits of 11
		{"я" + strings.Join(long, " ")[2:], []string{strings.Join(long, " ")}}, // its first letter changed
		{"Roadmap", nil},       // nothing close
		{"Secret roadmp", nil}, // another space's title is never suggested
		{"Lnch pln", nil},      // three edits of 8: not close
		{"xy", nil},
		{"plan budget launch menu notes meeting lunch launch café", nil}, // nine words, none a title's
	} {
		_, err := find(t, s, tc.name)
		if got := closeTitles(t, err); !slices.Equal(got, tc.want) {
			t.Errorf("Find(%q) suggests %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Every lookup by name suggests, reads and writes alike, in the transaction of the lookup;
// undelete and purge suggest deleted titles.
func TestEveryLookupSuggests(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	plan := mustCreate(t, s, "Launch plan", "a\n")
	for name, call := range map[string]func() error{
		"Read": func() error { _, _, err := read(t, s, "Lanch plan", 0); return err },
		"Log": func() error {
			_, _, err := view2(t, s, func(r *docstore.Reader) (docstore.Document, []docstore.Version, error) { return r.Log("Lanch plan") })
			return err
		},
		"Append": func() error { _, err := s.Append(ctx, "Lanch plan", "b", north); return err },
		"Edit":   func() error { _, err := s.Edit(ctx, "Lanch plan", "a", "b", north); return err },
		"Write":  func() error { _, err := s.Write(ctx, "Lanch plan", "", "b\n", 0, north); return err },
		"Delete": func() error { _, err := s.Delete(ctx, "Lanch plan", north); return err },
	} {
		if got := closeTitles(t, call()); !slices.Equal(got, []string{"Launch plan"}) {
			t.Errorf("%s of Lanch plan suggests %q, want Launch plan", name, got)
		}
	}
	if _, err := s.Delete(ctx, plan.ID, north); err != nil {
		t.Fatal(err)
	}
	if got := closeTitles(t, func() error { _, err := find(t, s, "Lanch plan"); return err }()); got != nil {
		t.Errorf("Find suggests the deleted %q", got)
	}
	for name, call := range map[string]func() error{
		"Undelete": func() error { _, err := s.Undelete(ctx, "Lanch plan"); return err },
		"Purge":    func() error { _, err := s.Purge(ctx, "Lanch plan"); return err },
	} {
		if got := closeTitles(t, call()); !slices.Equal(got, []string{"Launch plan"}) {
			t.Errorf("%s of Lanch plan suggests %q, want the deleted Launch plan", name, got)
		}
	}
}

// A hostile name or a hostile space costs little: names longer than a title are refused
// before any title is read, and a space of near-identical long titles hits the work budget.
func TestCloseTitlesAreBounded(t *testing.T) {
	s := open(t, "personal")
	long := strings.Repeat("ab", docstore.MaxTitle/2)
	for i := range 300 {
		mustCreate(t, s, fmt.Sprintf("%s%03d", long[:docstore.MaxTitle-3], i), "x\n")
	}
	for _, name := range []string{
		strings.Repeat("a", 100<<10),
		strings.Repeat("ab ", 100<<10/3),
		long[:docstore.MaxTitle-1] + "x",
		strings.Repeat("abab ", docstore.MaxTitle/5-1) + "zz",
	} {
		runtime.LockOSThread() // the thread's CPU: a loaded machine's waits for a core are not Find's
		c0 := threadCPU()
		_, err := find(t, s, name)
		took := threadCPU() - c0
		runtime.UnlockOSThread()
		if took > 200*time.Millisecond {
			t.Errorf("Find(a name of %d bytes) took %s of CPU", len(name), took)
		}
		if len(closeTitles(t, err)) > 3 {
			t.Errorf("more than three suggestions")
		}
	}
}

// BenchmarkNotFound is one refused lookup among 10,000 titles, with its suggestions: the
// figures of docs/RELIABILITY.md (23.15). Each case cycles through 100 names, made (and
// checked to name nothing) before the clock starts; "found by words" is the lookup that
// succeeds by words, which scans the same titles.
//
//	go test -run '^$' -bench NotFound -benchtime 2000x ./docstore
func BenchmarkNotFound(b *testing.B) {
	s, titles := tenThousandTitles(b)
	r := rand.New(rand.NewPCG(5, 6))
	pick := func() string { return titles[r.IntN(len(titles))] }
	for _, bc := range []struct {
		name    string
		make    func() string
		refused bool // the names must name nothing
	}{
		{"one letter off", func() string { return typo(pick(), r) }, true},
		{"a word off", func() string { return typo(strings.Fields(pick())[0], r) }, true},
		{"nothing close", func() string { return fmt.Sprintf("quarterly review %d zz", r.IntN(1000)) }, true},
		{"200 characters", func() string { return strings.Repeat(pick()+" ", 40)[:docstore.MaxTitle] }, true},
		{"100 KB", func() string { return strings.Repeat(pick()+" ", 100<<10/8)[:100<<10] }, true},
		{"found by words", func() string { w := strings.Fields(pick()); return w[len(w)-1] + " " + w[0] }, false},
	} {
		var names []string
		suggested := 0
		for len(names) < 100 {
			name := bc.make()
			_, err := find(b, s, name)
			if bc.refused != errors.Is(err, docstore.ErrNotFound) {
				continue
			}
			if bc.refused && len(closeTitles(b, err)) > 0 {
				suggested++
			}
			names = append(names, name)
		}
		b.Run(bc.name, func(b *testing.B) {
			var wall, cpu []time.Duration
			for b.Loop() {
				var err error
				timed(&wall, &cpu, func() { _, err = find(b, s, names[len(wall)%len(names)]) })
				if bc.refused && !errors.Is(err, docstore.ErrNotFound) {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(suggested), "suggested/100")
			percentiles(b, wall, cpu)
			meanCPU(b, cpu)
		})
	}
}

// BenchmarkNotFoundHostileSpace is a refused 200-character name in a space of 10,000
// titles of 200 characters that all differ from it in a few of their last characters: the
// worst case, where every comparison goes to its end until the work budget stops it.
func BenchmarkNotFoundHostileSpace(b *testing.B) {
	db := boltNoSync(b)
	s := docstore.New(db, "personal")
	base := strings.Repeat("ab", docstore.MaxTitle/2)[:docstore.MaxTitle-4]
	for i := range 10_000 {
		mustCreate(b, s, fmt.Sprintf("%s%04d", base, i), "x\n")
	}
	name := base + "zzzz"
	var wall, cpu []time.Duration
	for b.Loop() {
		var err error
		if timed(&wall, &cpu, func() { _, err = find(b, s, name) }); !errors.Is(err, docstore.ErrNotFound) {
			b.Fatal(err)
		}
	}
	percentiles(b, wall, cpu)
	meanCPU(b, cpu)
}

// meanCPU reports the mean of the CPU times, in ms: the thread's CPU time is counted in
// scheduler ticks, so one lookup's reads 0 or a tick, but the mean over many is its cost.
func meanCPU(b *testing.B, cpu []time.Duration) {
	var sum time.Duration
	for _, c := range cpu {
		sum += c
	}
	b.ReportMetric(float64(sum.Microseconds())/1000/float64(max(1, len(cpu))), "mean-cpu-ms")
}

// tenThousandTitles is a space of 10,000 documents titled as people title them: two to four
// words of a vocabulary of 3,000, some with a number.
func tenThousandTitles(b *testing.B) (*docstore.Store, []string) {
	db := boltNoSync(b)
	s := docstore.New(db, "personal")
	r := rand.New(rand.NewPCG(7, 8))
	words := vocabulary(3000, r)
	seen := map[string]bool{}
	var titles []string
	for len(titles) < 10_000 {
		var w []string
		for range 2 + r.IntN(3) {
			w = append(w, words[r.IntN(len(words))])
		}
		if r.IntN(4) == 0 {
			w = append(w, fmt.Sprint(2020+r.IntN(7)))
		}
		title := strings.Join(w, " ")
		if seen[strings.ToLower(title)] {
			continue
		}
		seen[strings.ToLower(title)] = true
		titles = append(titles, title)
		mustCreate(b, s, title, "x\n")
	}
	return s, titles
}

// typo changes one letter of s, or swaps two, or drops one.
func typo(s string, r *rand.Rand) string {
	rs := []rune(s)
	i := r.IntN(len(rs) - 1)
	switch r.IntN(3) {
	case 0:
		rs[i] = 'q'
	case 1:
		rs[i], rs[i+1] = rs[i+1], rs[i]
	default:
		rs = append(rs[:i], rs[i+1:]...)
	}
	return string(rs)
}

// boltNoSync is a bbolt file that doesn't sync: for building a benchmark's space quickly.
func boltNoSync(b *testing.B) kv.DB {
	b.Helper()
	db, err := bolt.Open(filepath.Join(b.TempDir(), "compass.db"), time.Second)
	if err != nil {
		b.Fatal(err)
	}
	db.NoSync, db.MaxBatchSize = true, 1 // no sync, and no wait for a batch to fill
	b.Cleanup(func() { db.Close() })
	return bolt.Wrap(db)
}

package linediff

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestMergeAgainstGit runs Merge3 and git merge-file on thousands of generated cases, half
// with lines that each occur once and half with few distinct lines (where diffs can align in
// several ways). Every clean merge of ours must apply both sides' changes (see appliesBoth). Where git and we disagree, the case is printed (a few of each kind) and counted;
// each kind is explained in doc.go ("Beside git merge-file").
//
//	go test -run TestMergeAgainstGit -v ./linediff
func TestMergeAgainstGit(t *testing.T) {
	git := tool(t, "git")
	n := 2000
	if testing.Short() {
		n = 300
	}
	type result struct {
		kind string
		c    mergeCase
		git  string
	}
	cases := make(chan mergeCase)
	results := make(chan result)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir := t.TempDir()
			for c := range cases {
				ours, conflicts := Merge3(c.base, c.theirs, c.mine)
				if len(conflicts) == 0 {
					if err := appliesBoth(c, ours); err != nil {
						t.Errorf("%s: our clean merge is wrong: %v\n%s\nours:\n%q", c.name, err, c, ours)
					}
				}
				theirs, clean, err := gitMerge(git, filepath.Join(dir, fmt.Sprint(w)), c)
				if err != nil {
					t.Errorf("%s: git merge-file: %v", c.name, err)
					continue
				}
				kind := ""
				switch {
				case len(conflicts) > 0 && clean:
					kind = "we clash, git merges"
				case len(conflicts) == 0 && !clean:
					kind = "we merge, git clashes"
				case len(conflicts) == 0 && ours != theirs:
					kind = "both merge, differently"
				}
				results <- result{kind, c, theirs}
			}
		}()
	}
	go func() {
		r := rand.New(rand.NewPCG(20, 26))
		for i := range n {
			if i%2 == 0 {
				cases <- uniqueCase(r, fmt.Sprintf("unique %d", i))
			} else {
				cases <- repeatedCase(r, fmt.Sprintf("repeated %d", i))
			}
		}
		close(cases)
		wg.Wait()
		close(results)
	}()
	kinds := map[string]map[string]int{} // kind -> "unique"/"repeated" -> count
	shown := map[string]int{}
	total := 0
	for res := range results {
		total++
		if res.kind == "" {
			continue
		}
		regime, _, _ := strings.Cut(res.c.name, " ")
		if kinds[res.kind] == nil {
			kinds[res.kind] = map[string]int{}
		}
		kinds[res.kind][regime]++
		if shown[res.kind] < 2 {
			shown[res.kind]++
			ours, _ := Merge3(res.c.base, res.c.theirs, res.c.mine)
			t.Logf("%s: %s\n%s\nours:\n%q\ngit's:\n%q", res.c.name, res.kind, res.c, ours, res.git)
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range kinds {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range names {
		t.Logf("%-24s unique lines: %4d, repeated lines: %4d (of %d cases each)", k, kinds[k]["unique"], kinds[k]["repeated"], total/2)
		if !slices.Contains(explainedKinds, k) {
			t.Errorf("a kind of disagreement with git that doc.go doesn't explain: %s", k)
		}
	}
	// With unique lines a diff can align only one way, and there git and we agree on every case.
	for _, k := range names {
		if n := kinds[k]["unique"]; n > 0 {
			t.Errorf("%d cases with unique lines: %s", n, k)
		}
	}
}

// explainedKinds are the disagreements with git that doc.go explains.
var explainedKinds = []string{"we clash, git merges", "we merge, git clashes", "both merge, differently"}

type mergeCase struct {
	name, base, theirs, mine string
}

func (c mergeCase) String() string {
	return fmt.Sprintf("base:   %q\ntheirs: %q\nmine:   %q", c.base, c.theirs, c.mine)
}

// gitMerge runs git merge-file on c, mine as the current side, and says whether it merged
// cleanly (exit 0) or with conflicts (exit 1 to 127, their number).
func gitMerge(git, prefix string, c mergeCase) (string, bool, error) {
	files := []string{prefix + ".mine", prefix + ".base", prefix + ".theirs"}
	for i, text := range []string{c.mine, c.base, c.theirs} {
		if err := os.WriteFile(files[i], []byte(text), 0o644); err != nil {
			return "", false, err
		}
	}
	out, err := exec.Command(git, append([]string{"merge-file", "-p"}, files...)...).Output()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), true, nil
	case errors.As(err, &exit) && exit.ExitCode() > 0 && exit.ExitCode() < 128:
		return string(out), false, nil
	}
	return "", false, err
}

// appliesBoth checks a clean merge. With lines that occur once (uniqueCase), what each side
// changed is known exactly: the merge must hold the base's lines that neither side deleted
// and the lines either side added, each once, in the order of both sides. With few distinct
// lines, which of several equal lines a side changed can't be told (both "a"s of "a a" are
// the one deleted from "a a" to "a"), so several merges are right; there the merge must only
// be made of lines the three texts have, and its disagreements with git are reported.
func appliesBoth(c mergeCase, merged string) error {
	count := func(text string) map[string]int {
		m := map[string]int{}
		for _, l := range Lines(text) {
			m[strings.TrimSuffix(l, "\n")]++
		}
		return m
	}
	b, th, mi, got := count(c.base), count(c.theirs), count(c.mine), count(merged)
	all := map[string]bool{}
	for _, m := range []map[string]int{b, th, mi, got} {
		for l := range m {
			all[l] = true
		}
	}
	unique := strings.HasPrefix(c.name, "unique")
	for l := range all {
		if unique {
			kept := b[l] > 0 && th[l] > 0 && mi[l] > 0
			added := b[l] == 0 && (th[l] > 0 || mi[l] > 0)
			if want := kept || added; (got[l] > 0) != want || got[l] > 1 {
				return fmt.Errorf("line %q occurs %d times; in base %d, theirs %d, mine %d", l, got[l], b[l], th[l], mi[l])
			}
			continue
		}
		if got[l] > 0 && b[l] == 0 && th[l] == 0 && mi[l] == 0 {
			return fmt.Errorf("line %q is in none of the three texts", l)
		}
	}
	if !unique {
		return nil
	}
	for _, side := range []string{c.theirs, c.mine} {
		in := count(side)
		var keptOrder, sideOrder []string
		for _, l := range Lines(merged) {
			if in[strings.TrimSuffix(l, "\n")] > 0 {
				keptOrder = append(keptOrder, strings.TrimSuffix(l, "\n"))
			}
		}
		for _, l := range Lines(side) {
			if got[strings.TrimSuffix(l, "\n")] > 0 {
				sideOrder = append(sideOrder, strings.TrimSuffix(l, "\n"))
			}
		}
		if !slices.Equal(keptOrder, sideOrder) {
			return fmt.Errorf("the merge's lines are not in the order of %q", side)
		}
	}
	return nil
}

// uniqueCase is a base of distinct lines and two sides that each delete, replace and insert
// a few lines, every new line distinct from all others.
func uniqueCase(r *rand.Rand, name string) mergeCase {
	n := r.IntN(30)
	base := make([]string, n)
	for i := range base {
		base[i] = fmt.Sprintf("base line %d\n", i)
	}
	side := func(tag string) string {
		ls := slices.Clone(base)
		for k := range r.IntN(4) + 1 {
			p := r.IntN(len(ls) + 1)
			fresh := fmt.Sprintf("%s line %d\n", tag, k)
			switch r.IntN(3) {
			case 0:
				if p < len(ls) {
					ls = slices.Delete(ls, p, p+1)
				}
			case 1:
				ls = slices.Insert(ls, p, fresh)
			case 2:
				if p < len(ls) {
					ls[p] = fresh
				}
			}
		}
		return strings.Join(ls, "")
	}
	return mergeCase{name, strings.Join(base, ""), side("theirs"), side("mine")}
}

// repeatedCase is random text of few distinct lines, and two mutations of it.
func repeatedCase(r *rand.Rand, name string) mergeCase {
	base := randText(r, r.IntN(20))
	return mergeCase{name, base, mutate(r, base), mutate(r, base)}
}

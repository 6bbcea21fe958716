package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

var words = strings.Fields(`the plan launch review course page trailer record studio week budget
price team draft notes agenda call follow up ship beta users feedback design copy email list
date venue slides demo script goal risk owner status done next open`)

// lines makes n numbered Markdown lines of about 50 bytes each (so 2,000 make 100 KB), every
// one distinct, from seed.
func lines(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]string, n)
	for i := range out {
		out[i] = line(r, fmt.Sprintf("%d.", i+1))
	}
	return out
}

// line is a line that starts with prefix and is filled with words to about 50 bytes.
func line(r *rand.Rand, prefix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for b.Len() < 46 {
		b.WriteByte(' ')
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

func join(ls []string) string { return strings.Join(ls, "\n") + "\n" }

// halfChanged returns ls with about half its lines (chosen by seed) replaced, and which.
func halfChanged(ls []string, seed uint64) ([]string, []bool) {
	r := rand.New(rand.NewPCG(seed, 11))
	out := append([]string(nil), ls...)
	changed := make([]bool, len(ls))
	for i := range out {
		if r.IntN(2) == 0 {
			out[i] = line(r, fmt.Sprintf("%d. (rewritten %d)", i+1, seed))
			changed[i] = true
		}
	}
	return out, changed
}

// sparseChanges returns ls with about one line in every 100 replaced, each chosen where
// neither it nor its neighbours are marked in avoid: changes that merge cleanly with those.
func sparseChanges(ls []string, avoid []bool, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 13))
	out := append([]string(nil), ls...)
	last := 0
	for i := 1; i+1 < len(out); i++ {
		if i-last >= 100 && !avoid[i-1] && !avoid[i] && !avoid[i+1] {
			out[i] = line(r, fmt.Sprintf("%d. (the person's)", i+1))
			last = i
		}
	}
	return out
}

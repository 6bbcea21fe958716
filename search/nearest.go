package search

import "strings"

// Nearest is the one of names nearest to s, case aside (two edits at most, fewer for short
// names), or "" when none is near: for "did you mean" in refusals of a mistyped name.
func Nearest(s string, names []string) string {
	best, bestD := "", min(2, len(s)/3+1)+1
	for _, n := range names {
		if d := editDistance(strings.ToLower(s), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the number of one-byte insertions, deletions, substitutions and
// transpositions of neighbours that make a into b (optimal string alignment).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64 // not a name: never near
	}
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

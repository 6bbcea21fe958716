package docstore

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// A proposal's gist, read from the start of its added texts without decoding its ops whole,
// is the first lines a full decode gives (or fewer, when a line runs past what it reads).
//
//	go test -fuzz=FuzzProposalGist ./docstore
func FuzzProposalGist(f *testing.F) {
	for _, seed := range []string{
		"- send the invitations\n",
		"\n\n  \nfirst\n\nsecond \"quoted\" \\ back\nthird\nfourth\n",
		"é ü 漢字 \t tab\n" + strings.Repeat("ab\"\\", 3000) + "\nafter\n",
		strings.Repeat("x", 9000),
		strings.Repeat("é", 5000) + "\nnext\n",
		strings.Repeat("\n", 5000) + "late\n",
	} {
		f.Add(seed, "second text\n")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			// No proposal holds such a text: a write's text that isn't UTF-8 is refused
			// (ErrBadText) before any proposal is made, and JSON would store U+FFFD for it.
			t.Skip()
		}
		ops := []deltaOp{{C: []int{0, 2}}, {I: a}, {C: []int{3, 4}}, {I: b}}
		raw, err := encodeProposal(Proposal{Number: 1, Title: `"i":"not this"`}, ops)
		if err != nil {
			t.Skip()
		}
		var full []string
		for _, op := range ops {
			if op.I != "" {
				full = gist(full, op.I)
			}
		}
		got := proposalGist(raw)
		if len(got) > len(full) || !slices.Equal(got, full[:len(got)]) {
			t.Fatalf("the gist of %.200q, %.200q is %.300q; a full decode gives %.300q", a, b, got, full)
		}
		if len(a) < 500 && len(b) < 500 && !slices.Equal(got, full) {
			t.Fatalf("the gist of short texts %q, %q is %.300q, want %.300q", a, b, got, full)
		}
	})
}

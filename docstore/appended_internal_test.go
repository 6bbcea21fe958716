package docstore

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// appendedBySplit is appended as it was written before it read the text from its end
// (issue 51: it split and copied a text of megabytes twice): what appended must still give.
func appendedBySplit(text, add string) string {
	add = trimBlankLines(add)
	if add == "" {
		return text
	}
	eol := "\n"
	if i := strings.LastIndexByte(text, '\n'); i > 0 && text[i-1] == '\r' {
		eol = "\r\n"
	}
	if strings.HasSuffix(text, "\n") && !strings.HasSuffix(add, "\n") {
		add += eol
	}
	lines := strings.SplitAfter(text, "\n")
	last := len(lines) - 1
	for last >= 0 && strings.TrimSpace(lines[last]) == "" {
		last--
	}
	if last < 0 {
		return add
	}
	head := strings.Join(lines[:last+1], "")
	if !strings.HasSuffix(head, "\n") {
		head += eol
	}
	between := eol
	if last+1 < len(lines) && strings.HasSuffix(lines[last+1], "\n") {
		between = lines[last+1]
	}
	return head + between + add
}

func TestAppendedAsBySplit(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 2))
	pieces := []string{"a", "b c", " ", "\t", "\n", "\r\n", "\n\n", "  \n", "x\r\n"}
	gen := func() string {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	for range 20000 {
		text, add := gen(), gen()
		if got, want := appended(text, add), appendedBySplit(text, add); got != want {
			t.Fatalf("appended(%q, %q) = %q, want %q", text, add, got, want)
		}
	}
}

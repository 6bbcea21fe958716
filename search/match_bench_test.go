package search

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// hanPhrase is 330 distinct Han characters: the query of issue 23 (992 bytes quoted).
func hanPhrase() []rune {
	var rs []rune
	for r := rune(0x4e00); len(rs) < 330; r += 7 {
		rs = append(rs, r)
	}
	return rs
}

// BenchmarkMatchHan8MiB is the hostile case of issue 23: a quoted phrase of 330 distinct
// Han characters, in 8 MiB of them that nearly match it all along, read as Rank reads one
// item (a scanner made for the query, then the text).
//
//	go test -run '^$' -bench MatchHan8MiB ./search
func BenchmarkMatchHan8MiB(b *testing.B) {
	rs := hanPhrase()
	q, err := Parse(`"` + string(rs) + `"`)
	if err != nil {
		b.Fatal(err)
	}
	near := string(rs[:329])
	doc := Doc{Parts: []string{strings.Repeat(near, (8<<20)/len(near))}}
	b.SetBytes(int64(len(doc.Parts[0])))
	for b.Loop() {
		if h := newScanner(q, ones(q)).match(doc, 3); h.In != 0 {
			b.Fatal("found")
		}
	}
}

// BenchmarkMatchProse5MiB is a question of 12 words in 5 MiB of prose-like ASCII text.
func BenchmarkMatchProse5MiB(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there been one all we their has would when if so no will more can what out up who them some could into than time only new its other people about two may do these first any my now such like")
	var sb strings.Builder
	for sb.Len() < 5<<20 {
		for range 12 {
			sb.WriteString(words[r.IntN(len(words))])
			sb.WriteByte(' ')
		}
		sb.WriteString("studies recorded.\n")
	}
	doc := Doc{Parts: []string{sb.String()}}
	q, _ := Parse("what did the studies record about people who were in the first time")
	b.SetBytes(int64(len(doc.Parts[0])))
	for b.Loop() {
		newScanner(q, ones(q)).match(doc, 3)
	}
}

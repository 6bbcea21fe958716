package semantic

import (
	"crypto/sha256"
	"strings"
	"unicode/utf8"
)

// Limits on the passages a document is cut into.
const (
	// MaxPassage is the most bytes of one passage: paragraphs are put together up to it,
	// and a longer paragraph is cut at a line, else a space, else anywhere (on a character).
	MaxPassage = 2000
	// MaxPassages is the most passages of one document: a longer document's meaning is
	// that of its first MaxPassages·MaxPassage bytes (about 512 KB).
	MaxPassages = 256
)

// Passages cuts a document into the passages whose vectors stand for it: a heading (a
// line beginning with #) starts a passage, blank lines separate paragraphs, and
// paragraphs are put together while they fit in MaxPassage bytes. The first passage
// begins with the title, unless the text already does. Blank passages are left out.
func Passages(title, text string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" && len(out) < MaxPassages {
			out = append(out, s)
		}
		cur.Reset()
	}
	add := func(para string, heading bool) {
		if heading || cur.Len() > 0 && cur.Len()+2+len(para) > MaxPassage {
			flush()
		}
		for len(para) > MaxPassage {
			cut := cutAt(para, MaxPassage)
			flush()
			cur.WriteString(para[:cut])
			flush()
			para = strings.TrimLeft(para[cut:], " \n")
		}
		if para == "" {
			return
		}
		if cur.Len() > 0 {
			cur.WriteString("\n\n")
		}
		cur.WriteString(para)
	}
	title = strings.TrimSpace(title)
	if t := strings.TrimSpace(text); title != "" && !strings.HasPrefix(strings.TrimLeft(t, "# "), title) {
		add(title, false)
	}
	var para strings.Builder
	endPara := func(heading bool) {
		if s := strings.TrimSpace(para.String()); s != "" {
			add(s, heading)
		}
		para.Reset()
	}
	for line := range strings.Lines(text) {
		if len(out) >= MaxPassages {
			break
		}
		l := strings.TrimRight(line, "\r\n")
		switch {
		case strings.TrimSpace(l) == "":
			endPara(false)
			continue
		case strings.HasPrefix(l, "#"):
			endPara(false)
			para.WriteString(l)
			endPara(true) // the heading alone: the paragraphs after it join it
			continue
		}
		if para.Len() > 0 {
			para.WriteByte('\n')
		}
		para.WriteString(l)
	}
	endPara(false)
	flush()
	return out
}

// cutAt is where to cut s (longer than n) so that s[:cut] has at most n bytes: after its
// last line break, else its last space, in the second half of those n; else at a
// character's start.
func cutAt(s string, n int) int {
	if i := strings.LastIndexByte(s[:n], '\n'); i > n/2 {
		return i + 1
	}
	if i := strings.LastIndexByte(s[:n], ' '); i > n/2 {
		return i + 1
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n == 0 {
		_, n = utf8.DecodeRuneInString(s)
	}
	return n
}

// Hash is a passage's key among the vectors of model: the SHA-256 of the model's name and
// the text, so that the same text embedded by another model is another vector.
func Hash(model, passage string) [32]byte {
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	h.Write([]byte(passage))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

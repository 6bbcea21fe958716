package linediff

import (
	"strconv"
	"strings"
)

// Unified renders a unified diff (---/+++ headers with the given names, @@ hunks, `context` lines of context, "\ No newline at end of file" where relevant) of a to b; "" when equal.
//
// The format is GNU diff's, which patch(1) and git apply accept: hunks
// whose contexts would meet or overlap are joined, a range of one line is
// written without its count, and an empty range is numbered by the line
// before it. A negative context is taken as 0.
func Unified(fromName, toName, a, b string, context int) string {
	if a == b {
		return ""
	}
	return UnifiedLines(fromName, toName, Lines(a), Lines(b), context)
}

// UnifiedLines is Unified of two texts given as their Lines, for a caller that has them
// already: a text of megabytes is not split again.
func UnifiedLines(fromName, toName string, al, bl []string, context int) string {
	context = max(context, 0)
	es := diffEdits(al, bl)
	if len(es) == 0 {
		return ""
	}

	var sb strings.Builder
	sb.WriteString("--- " + fromName + "\n+++ " + toName + "\n")
	for i := 0; i < len(es); {
		// Gather the edits whose gaps are small enough for their
		// contexts to meet; they make one hunk.
		j := i + 1
		for j < len(es) && es[j].a0-es[j-1].a1 <= 2*context {
			j++
		}
		first, last := es[i], es[j-1]
		pre := min(context, first.a0)
		post := min(context, len(al)-last.a1)
		a0, a1 := first.a0-pre, last.a1+post
		b0, b1 := first.b0-pre, last.b1+post

		sb.WriteString("@@ -" + hunkRange(a0, a1) + " +" + hunkRange(b0, b1) + " @@\n")
		pa := a0
		for _, e := range es[i:j] {
			writeLines(&sb, ' ', al[pa:e.a0])
			writeLines(&sb, '-', al[e.a0:e.a1])
			writeLines(&sb, '+', bl[e.b0:e.b1])
			pa = e.a1
		}
		writeLines(&sb, ' ', al[pa:a1])
		i = j
	}
	return sb.String()
}

// hunkRange formats the half-open range [s,e) of 0-based lines.
func hunkRange(s, e int) string {
	switch e - s {
	case 0:
		return strconv.Itoa(s) + ",0"
	case 1:
		return strconv.Itoa(s + 1)
	}
	return strconv.Itoa(s+1) + "," + strconv.Itoa(e-s)
}

func writeLines(sb *strings.Builder, prefix byte, lines []string) {
	for _, l := range lines {
		sb.WriteByte(prefix)
		sb.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

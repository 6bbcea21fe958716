package mdscan

import "strings"

// Cut reports whether the reading of a text can be cut just before line, whose line before
// is prev (the text's start and end are cuts without asking): whatever the lines before it are,
// as long as no code fence is open there, the links of the text are those of the lines
// before it read as a text of their own, then those of line and the lines after read as
// another. A save reads only the lines between two cuts around what it changed, and so
// pays for the change, not for the text.
//
// Line and prev may end in their line break. It is a cut when line begins at the margin
// (no space, tab or >) and either prev is blank, or line ends whatever was open (a
// paragraph, a list item, a block quote's paragraph) by itself: it is an ATX heading, a
// code fence's opening line, or a bullet list item with text (not a lone "-", which after
// a paragraph underlines it).
func Cut(prev, line string) bool {
	line = lineText(line)
	if line == "" {
		return false
	}
	if c := line[0]; c == ' ' || c == '\t' || c == '>' || blank(line) {
		return false
	}
	if blank(lineText(prev)) {
		return true
	}
	switch line[0] {
	case '-', '*', '+':
		return len(line) > 1 && (line[1] == ' ' || line[1] == '\t') && strings.TrimSpace(line[1:]) != ""
	case '#':
		return atxLevel(line) > 0
	case '`', '~':
		return opensFence(line)
	}
	return false
}

// Fence is the code fence open at some line of a text, as Next follows it line by line:
// the zero Fence is none.
type Fence struct {
	c byte // ` or ~
	n int  // how many of them open it
}

// Open tells whether a fence is open.
func (f Fence) Open() bool { return f.c != 0 }

// Next is the fence open after line (which may end in its line break), f being the one
// open before it; false when that can't be told from the line alone: it may be a fence's
// line (MayFence) but begins neither at the margin with ``` or ~~~, nor with a letter
// (a fence in a list item or a block quote, or indented, is left to the whole text's
// reading). A fence that opens at the margin ends at the first line that closes it; no
// line but one at the margin can, and no other line can open one.
func (f Fence) Next(line string) (Fence, bool) {
	t := lineText(line)
	if !MayFence(t) {
		return f, true
	}
	switch c := t[0]; {
	case c == '`' || c == '~':
		if f.Open() {
			if closesFence(t, f.c, f.n) {
				return Fence{}, true
			}
			return f, true
		}
		if opensFence(t) {
			return Fence{c: c, n: runOf(t, c)}, true
		}
		return f, true
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
		return f, true
	}
	return f, false
}

// MayFence reports whether s may have a line that opens or closes a code fence: it has
// ``` or ~~~ somewhere.
func MayFence(s string) bool {
	return strings.Contains(s, "```") || strings.Contains(s, "~~~")
}

// lineText is a line as the walker reads it: without its line break, and one \r before it.
func lineText(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

// blank tells whether the walker reads s (without its line break) as a blank line.
func blank(s string) bool {
	_, t := indentOf(s)
	return t == ""
}

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
// paragraph, a list item, a block quote's paragraph) by itself: it is an ATX heading or a
// bullet list item with text (not a lone "-", which after a paragraph underlines it).
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
	}
	return false
}

// MayFence reports whether s may have a line that opens or closes a code fence: it has
// ``` or ~~~ somewhere. Cut holds in a text, up to where this is first true.
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

package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// The docs count the tools tools/list serves (issue 36, item 11: the README said eight,
// INSTALL.md and TESTING.md seven). Every "the eight tools", "eight MCP tools", "the
// manifest's eight" in the README and docs/ is read, across line breaks, and compared with
// the real server's list. Counts in figures ("8 tools") are measurements of a run, often of
// another server (PERFORMANCE.md), and are left to their tables.
func TestDocsCountTheTools(t *testing.T) {
	is := newIsolation(t)
	res, err := is.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen"}
	count := regexp.MustCompile(`(?i)\b(` + strings.Join(words, "|") + `)\s+(?:MCP\s+)?tools\b|manifest's\s+(` + strings.Join(words, "|") + `)\b`)
	root := filepath.Join("..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	seen := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		for _, m := range count.FindAllStringSubmatchIndex(text, -1) {
			w := m[2:4]
			if w[0] < 0 {
				w = m[4:6]
			}
			word := strings.ToLower(text[w[0]:w[1]])
			seen++
			if n := indexOf(words, word); n != len(res.Tools) {
				line := strings.Count(text[:m[0]], "\n") + 1
				t.Errorf("%s:%d says %q: tools/list serves %d tools", filepath.Base(f), line, text[m[0]:m[1]], len(res.Tools))
			}
		}
	}
	if seen < 5 {
		t.Errorf("only %d counts of the tools found in the docs: the reader is broken", seen)
	}
}

func indexOf(words []string, w string) int {
	for i, x := range words {
		if x == w {
			return i
		}
	}
	return -1
}

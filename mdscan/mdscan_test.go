package mdscan

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

const id = "01M8PGKZD91FPDJN4QQFFR0WBP"

func links(text string) []string {
	var out []string
	Links(text, func(l Link) bool {
		switch {
		case l.ID != "":
			out = append(out, "id:"+l.ID)
		case l.Shown != "":
			out = append(out, l.Title+"|"+l.Shown)
		default:
			out = append(out, l.Title)
		}
		return true
	})
	return out
}

func TestLinks(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string
	}{
		{"See [[Pricing]] and [[Course outline|the outline]].", "Pricing,Course outline|the outline"},
		{"[[ Pricing ]] [[pricing]]", "Pricing,pricing"},
		{"[again](compass://document/" + id + ")", "id:" + id},
		{"[again](/document/" + id + "/v/2 \"title\")", "id:" + id},
		{"[again](<http://127.0.0.1:7411/document/" + id + ">)", "id:" + id},
		{"<http://127.0.0.1:7411/document/" + id + ">", "id:" + id},
		{"[ref]: /document/" + id + "\n", "id:" + id},
		{"[x](https://example.com/about) [y](/document/nope)", ""},
		{"![img](/document/" + id + ")", ""},
		{"![[Embedded]] [![[in a link]]](x)", ""},
		{"| [[A]] | b |\n|---|---|\n| [[C\\|c]] | [[D|d]] | [[past the header]] |\n[[Row]]", "A,C|c,Row"},
		{"| [[A]] | [[B|b]] |\n|---|---|\n| [[C]] |", "A,B|b,C"},
		{"[[Before]]\n| a |\n|---|\n| [[Cell]] |", "Before,Cell"},
		{"| a | b |\n|---|\n[[Not a table]]", "Not a table"},
		{"`[[Code]]` and ``[[a `b` c]]`` but [[Real]]", "Real"},
		{"`unclosed [[Real]]", "Real"},
		{"\\[[Escaped]] \\[\\[Also]]", ""},
		{"```\n[[In a fence]]\n```\n[[After]]", "After"},
		{"~~~~\n[[In a fence]]\n~~~\n[[Still in]]\n~~~~\n[[After]]", "After"},
		{"    [[Indented code]]\n\npara\n    [[continuation]]", "continuation"},
		{"- item\n\n    [[In the item]]", "In the item"},
		{"- item\n  ```\n  [[fenced in item]]\n  ```\n- [[next]]", "next"},
		{"> quoted [[Q]]\n> ```\n> [[fenced quote]]\n> ```", "Q"},
		{"# Heading with [[Link]]\n", "Link"},
		{"Setext [[A]]\n---\n", "A"},
		{"[[]] [[ ]] [[a\nb]] [[a]b]] [[a[b]]", ""},
		{"[[" + strings.Repeat("x", 201) + "]]", ""},
		{"[[A|]] [[B|c|d]]", "A,B|c|d"},
		{"| [[A\\|a]] | b |", "A|a"},
		{"[outer [inner](/document/" + id + ")](/document/01M8PGKZD91FPDJN4QQFFR0WBQ)", "id:" + id},
		{"`a` [[between]] `b`", "between"},
		{"[a]( /document/" + id + " )", "id:" + id},
		{"[a](/document/" + id + " \"unclosed)", ""},
	} {
		got := strings.Join(links(tc.text), ",")
		if got != tc.want {
			t.Errorf("Links(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func headings(text string) []string {
	var out []string
	Headings(text, func(h Heading) bool {
		out = append(out, fmt.Sprintf("%d:%d:%s", h.Line, h.Level, h.Text))
		return true
	})
	return out
}

func TestHeadings(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string
	}{
		{"# Launch\n\n## Pricing ##\n\ntext\n### FAQ #\n", "1:1:Launch,3:2:Pricing,6:3:FAQ"},
		{"Title\n=====\n\nSub  title\nover lines\n---\n", "1:1:Title,4:2:Sub title over lines"},
		{"```\n# not\n```\n    # not either\n#not\n####### not\n# yes", "7:1:yes"},
		{"- # in a list\n> # in a quote\n\n# top", "4:1:top"},
		{"para\n\n---\n", ""},
		{"#\n# #\n", "1:1:,2:1:"},
		{"  ## indented two\n", "1:2:indented two"},
		{"text\n# interrupts\n", "2:1:interrupts"},
	} {
		got := strings.Join(headings(tc.text), ",")
		if got != tc.want {
			t.Errorf("Headings(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// Stopping early stops the pass.
func TestStop(t *testing.T) {
	n := 0
	Links(strings.Repeat("[[a]] ", 1000), func(Link) bool { n++; return n < 3 })
	if n != 3 {
		t.Errorf("fn ran %d times after returning false at 3", n)
	}
}

// Hostile texts of 8 MiB cost time linear in them: well under a second each.
func TestHostileTextsAreLinear(t *testing.T) {
	const size = 8 << 20
	limit := 2 * time.Second
	if testbin.Race { // the race detector makes a scan several times dearer: still far below a quadratic one
		limit *= 5
	}
	fill := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	for name, text := range map[string]string{
		"[[ a million times":    fill("[["),
		"[[a]] links":           fill("[[a]] "),
		"distinct links":        distinct(size),
		"brackets":              fill("[a]("),
		"unclosed titles":       fill("[a](/x ("),
		"backtick runs":         backtickRuns(size),
		"one long line of [":    fill("["),
		"lines of #":            fill("# a\n"),
		"autolink openers":      fill("<a:"),
		"fences":                fill("```\n"),
		"nested list and quote": fill("> - > - [[a]]\n"),
		"escapes":               fill("\\[\\`"),
	} {
		// The thread's CPU, not wall time: a busy machine's waits for a core are not the
		// scan's (CI's -race run on two loaded cores once took 2.3 s of wall here).
		runtime.LockOSThread()
		start, c0 := time.Now(), testbin.ThreadCPU()
		count := 0
		Links(text, func(Link) bool { count++; return true })
		Headings(text, func(Heading) bool { return true })
		used := testbin.ThreadCPU() - c0
		runtime.UnlockOSThread()
		t.Logf("%-22s %5.0f ms CPU, %5.0f ms wall, %d links", name, used.Seconds()*1000, time.Since(start).Seconds()*1000, count)
		if used > limit {
			t.Errorf("%s: %v of CPU for %d MiB (%d links), want at most %v", name, used, len(text)>>20, count, limit)
		}
	}
}

func distinct(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "[[t%d]] ", i)
	}
	return b.String()
}

// backtickRuns is runs of 1, 2, 3, ... backticks with a letter between: none closes.
func backtickRuns(size int) string {
	var b strings.Builder
	for n := 1; b.Len() < size; n++ {
		b.WriteString(strings.Repeat("`", n%5000+1))
		b.WriteString("a")
	}
	return b.String()
}

// FuzzScan: whatever the text, neither pass panics, every [[ ]] title is valid, and every
// id is a ULID in upper case.
//
//	go test -fuzz=FuzzScan ./mdscan
func FuzzScan(f *testing.F) {
	for _, s := range []string{"[[a]]", "```\n[[a]]", "- a\n    b", "[x](/document/" + id + ")", "> # q", "`a``b`", "[[a|b]]", "<a:b>", "Title\n==="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		Links(s, func(l Link) bool {
			if l.ID == "" && !ValidTitle(l.Title) || l.ID != "" && (len(l.ID) != 26 || strings.ToUpper(l.ID) != l.ID) || l.At < 0 || l.At >= len(s) {
				t.Fatalf("Links(%q) gave %+v", s, l)
			}
			// A [[Title]] is where it says: a rename rewrites the text there.
			if title, _, _, ok := WikiLink(s[l.At:]); l.ID == "" && (!ok || title != l.Title) {
				t.Fatalf("Links(%q) gave [[%s]] at %d, where %q begins", s, l.Title, l.At, s[l.At:])
			}
			return true
		})
		last := 0
		Headings(s, func(h Heading) bool {
			if h.Level < 1 || h.Level > 6 || h.Line <= last {
				t.Fatalf("Headings(%q) gave %+v after line %d", s, h, last)
			}
			last = h.Line
			return true
		})
	})
}

// Each link says where it begins: a [[Title]] at its [[ (WikiLink reads it again there), a
// Markdown link at its [, an autolink at its <, a definition at its line.
func TestLinksAt(t *testing.T) {
	text := "# [[Head]]\n\n- x [[A|a]] and [y](/document/" + id + ")\n> <compass://document/" + id + ">\n\n" +
		"| [[B\\|b]] | c |\n|---|---|\n\n[ref]: /document/" + id + "\n\n`[[code]]` [[C#H]]\n"
	var got []string
	Links(text, func(l Link) bool {
		if l.ID == "" {
			title, _, _, ok := WikiLink(text[l.At:])
			if !ok || title != l.Title {
				t.Errorf("[[%s]] is at %d, where %q begins", l.Title, l.At, text[l.At:min(l.At+12, len(text))])
			}
		}
		got = append(got, text[l.At:l.At+2])
		return true
	})
	if want := "[[,[[,[y,<c,[[,[r,[["; strings.Join(got, ",") != want {
		t.Errorf("the links begin with %q, want %q", strings.Join(got, ","), want)
	}
}

package tools_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// agent is an in-process MCP client of a server on a fresh store's personal space.
type agent struct {
	c *client.Client
}

func newAgent(t *testing.T) *agent {
	t.Helper()
	return newAgentOn(t, kvtest.Open(t))
}

// newAgentOn is newAgent on a store the test has filled.
func newAgentOn(t *testing.T, db kv.DB) *agent {
	t.Helper()
	c, _ := inProcess(t, db, tools.Config{Agent: "north", For: "ana"}, "links", nil)
	return &agent{c: c}
}

// call returns the answer's text and whether it is an error.
func (a *agent) call(t *testing.T, tool string, args map[string]any) (string, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := a.c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// ok calls a tool that must not refuse.
func (a *agent) ok(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	text, isError := a.call(t, tool, args)
	if isError {
		t.Fatalf("%s %v refused: %s", tool, args, text)
	}
	return text
}

var savedID = regexp.MustCompile(`/document/([0-9A-Z]{26})\)`)

// write makes a document and returns its id.
func (a *agent) write(t *testing.T, title, text string) string {
	t.Helper()
	m := savedID.FindStringSubmatch(a.ok(t, "write_document", map[string]any{"title": title, "text": text}))
	if m == nil {
		t.Fatalf("no id in write_document's answer for %s", title)
	}
	return m[1]
}

// lastLines is the answer's lines after its text: its links.
func lastLines(answer string, n int) string {
	lines := strings.Split(answer, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// The model sees a document's links at the end of read_document, follows them with
// list_documents, and the links stay with their documents through renames.
func TestReadDocumentShowsLinks(t *testing.T) {
	a := newAgent(t)
	pricing := a.write(t, "Pricing", "# Pricing\n\nTwelve a month. Back to [[Launch plan]].\n")
	outline := a.write(t, "Course outline", "1. Intro\n2. [[pricing|what it costs]]\n")
	plan := a.write(t, "Launch plan", "Prices: [[Pricing]]; the [[Course outline]].\nBudget: [[Budget]].\n\n```\n[[Not a link]]\n```\n")
	link := func(title, id string) string { return "[" + title + "](/document/" + id + ")" }

	got := a.ok(t, "read_document", map[string]any{"document": "Launch plan"})
	want := "```\n[[Not a link]]\n```\n\n" +
		"Links to: " + link("Course outline", outline) + ", " + link("Pricing", pricing) + " · Linked from: " + link("Pricing", pricing) + "\n" +
		"Broken links: no document here is [[Budget]]"
	if !strings.HasSuffix(got, want) {
		t.Errorf("read_document's end:\n%s\nwant it to end with:\n%s", lastLines(got, 6), want)
	}
	if got := a.ok(t, "read_document", map[string]any{"document": "Pricing"}); !strings.HasSuffix(got, "[[Launch plan]].\n\n"+
		"Links to: "+link("Launch plan", plan)+" · Linked from: "+link("Course outline", outline)+", "+link("Launch plan", plan)) {
		t.Errorf("Pricing's end:\n%s", lastLines(got, 3))
	}
	// An older version is read as it was, without the links of now.
	a.ok(t, "append_document", map[string]any{"document": "Pricing", "text": "Or 120 a year."})
	if got := a.ok(t, "read_document", map[string]any{"document": "Pricing", "version": 1}); strings.Contains(got, "Links to") {
		t.Errorf("version 1 of 2 shows links:\n%s", got)
	}

	// A rename (write_document with a new title) keeps every link, under the title now, and
	// rewrites [[Pricing]] in the texts that link to it, saying so.
	if got := a.ok(t, "write_document", map[string]any{"document": "Pricing", "title": "Prices", "text": "Twelve a month. Back to [[Launch plan]].\n"}); !strings.HasSuffix(got, ": +0 \u22124 lines, and updated links in 2 documents.") {
		t.Errorf("write_document with a new title says:\n%s", got)
	}
	if got := a.ok(t, "read_document", map[string]any{"document": "Course outline"}); !strings.Contains(got, "2. [[Prices|what it costs]]") {
		t.Errorf("Course outline after the rename:\n%s", got)
	}
	if got := a.ok(t, "read_document", map[string]any{"document": "Launch plan"}); !strings.Contains(got, "Links to: "+link("Course outline", outline)+", "+link("Prices", pricing)) {
		t.Errorf("after the rename:\n%s", lastLines(got, 2))
	}

	// The neighbours, named by title, id or link.
	for _, name := range []string{"Launch plan", plan, "http://127.0.0.1:7411/document/" + plan, link("Launch plan", plan)} {
		got := a.ok(t, "list_documents", map[string]any{"linked_from": name})
		if !strings.HasPrefix(got, "Documents "+link("Launch plan", plan)+" links to (2):\n- "+link("Course outline", outline)) || !strings.Contains(got, "- "+link("Prices", pricing)) || !strings.HasSuffix(got, "Broken links: no document here is [[Budget]]") {
			t.Errorf("linked_from %q:\n%s", name, got)
		}
	}
	if got := a.ok(t, "list_documents", map[string]any{"links_to": "Prices"}); !strings.HasPrefix(got, "Documents that link to "+link("Prices", pricing)+" (2), oldest made first:\n- "+link("Course outline", outline)) {
		t.Errorf("links_to Prices:\n%s", got)
	}
	if got := a.ok(t, "list_documents", map[string]any{"links_to": "Prices", "limit": 1}); !strings.Contains(got, "(1 of 2)") || !strings.Contains(got, "1 more: call list_documents with a larger limit") {
		t.Errorf("links_to Prices, limit 1:\n%s", got)
	}
	if got := a.ok(t, "list_documents", map[string]any{"links": "broken"}); !strings.HasPrefix(got, "Broken links here (1):\n- [[Budget]], in "+link("Launch plan", plan)+"\n") {
		t.Errorf("links=broken:\n%s", got)
	}
	if got := a.ok(t, "list_documents", map[string]any{"links": "none"}); !strings.HasPrefix(got, "Every document here is linked from another") {
		t.Errorf("links=none:\n%s", got)
	}

	// Making the document makes the broken link whole.
	budget := a.write(t, "Budget", "Ten.\n")
	if got := a.ok(t, "read_document", map[string]any{"document": "Launch plan"}); strings.Contains(got, "Broken links") || !strings.Contains(got, "Links to: "+link("Budget", budget)+", ") {
		t.Errorf("after making Budget:\n%s", lastLines(got, 2))
	}
	if got := a.ok(t, "list_documents", map[string]any{"links": "broken"}); got != "No broken links here: every link names a document of this space." {
		t.Errorf("links=broken after:\n%s", got)
	}
	if got := a.ok(t, "list_documents", map[string]any{"links": "none"}); !strings.HasPrefix(got, "Every document here") {
		t.Errorf("links=none after:\n%s", got)
	}
	lone := a.write(t, "Lone", "Nobody links here; I link to [[Budget]].\n")
	if got := a.ok(t, "list_documents", map[string]any{"links": "none"}); !strings.HasPrefix(got, "Documents nothing here links to (1), latest saved first:\n- "+link("Lone", lone)) {
		t.Errorf("links=none with Lone:\n%s", got)
	}

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"links": "sideways"}, `list_documents's links is none (the documents nothing links to) or broken (the links to no document); it got "sideways".`},
		{map[string]any{"links": "none", "query": "x"}, "list_documents takes one of query, linked_from, links_to and links at a time."},
		{map[string]any{"links_to": "Nowhere"}, `No document "Nowhere" in this space: list_documents shows what's here.`},
	} {
		if got, isError := a.call(t, "list_documents", tc.args); !isError || got != tc.want {
			t.Errorf("list_documents %v = %q (error %v), want %q", tc.args, got, isError, tc.want)
		}
	}
}

// More links than read_document names are counted, with the call that lists them.
func TestReadDocumentCountsManyLinks(t *testing.T) {
	a := newAgent(t)
	var text strings.Builder
	for i := range 30 {
		fmt.Fprintf(&text, "[[Note %02d]] ", i)
	}
	hub := a.write(t, "Hub", text.String()+"\n")
	for i := range 30 {
		a.write(t, fmt.Sprintf("Note %02d", i), "[[Hub]]\n")
	}
	got := a.ok(t, "read_document", map[string]any{"document": "Hub"})
	end := lastLines(got, 1)
	for _, want := range []string{"[Note 23](/document/", " and 6 more (list_documents linked_from=" + hub + ")", " and 6 more (list_documents links_to=" + hub + ")"} {
		if !strings.Contains(end, want) {
			t.Errorf("Hub's links line lacks %q:\n%s", want, end)
		}
	}
	if strings.Contains(end, "[Note 24]") || strings.Count(end, "](/document/") != 2*tools.MaxLinksShown {
		t.Errorf("Hub's links line names %d documents, want %d:\n%s", strings.Count(end, "](/document/"), 2*tools.MaxLinksShown, end)
	}
}

const plan = `# Launch

Intro.

## Pricing

Twelve a month.

## FAQ

Why?

# Course

## FAQ

What?
`

// read_document's section answers a heading's lines, numbered as lines numbers them, and
// an unknown or ambiguous section is refused naming the headings.
func TestReadDocumentSection(t *testing.T) {
	a := newAgent(t)
	id := a.write(t, "Plan", plan)
	head := "[Plan](/document/" + id + ") · version 1 of 1 · saved by north for ana "
	got := a.ok(t, "read_document", map[string]any{"document": "Plan", "section": "pricing"})
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, ` · section "Launch/Pricing", lines 5-8 of 17`+"\n\n5\t## Pricing\n6\n7\tTwelve a month.\n8") {
		t.Errorf("section pricing:\n%s", got)
	}
	if got := a.ok(t, "read_document", map[string]any{"document": "Plan", "section": "Course/FAQ"}); !strings.HasSuffix(got, ` · section "Course/FAQ", lines 15-17 of 17`+"\n\n15\t## FAQ\n16\n17\tWhat?") {
		t.Errorf("section Course/FAQ:\n%s", got)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"section": "FAQ"}, `"FAQ" is 2 sections of Plan at version 1: "Launch/FAQ" (line 9), "Course/FAQ" (line 15). Give the path of the one you want, or read its lines.`},
		{map[string]any{"section": "Budget"}, `Plan has no section "Budget" at version 1. Its headings: "Launch" (line 1), "Launch/Pricing" (line 5), "Launch/FAQ" (line 9), "Course" (line 13), "Course/FAQ" (line 15). Give one of them, or its path.`},
		{map[string]any{"section": "FAQ", "lines": "1-2"}, "read_document takes lines or section, not both: section reads a heading's lines, numbered; lines reads the lines given."},
		{map[string]any{"section": "FAQ", "since": 1}, "read_document takes section or since, not both: since shows what changed as a diff; section reads a heading's part of a version."},
	} {
		tc.args["document"] = "Plan"
		if got, isError := a.call(t, "read_document", tc.args); !isError || got != tc.want {
			t.Errorf("read_document %v = %q (error %v)\nwant %q", tc.args, got, isError, tc.want)
		}
	}
	a.write(t, "Flat", "no headings here\n")
	if got, _ := a.call(t, "read_document", map[string]any{"document": "Flat", "section": "x"}); got != `Flat has no headings at version 1, so no section "x": read it whole, or some of its lines (lines).` {
		t.Errorf("a section of a text without headings: %q", got)
	}
}

// Saving and showing hostile texts costs at most a second of CPU each, at the 8 MiB limit
// (1 MiB with -short or -race): a million [[, a million links to one document, more
// distinct links than are kept, links to itself, two documents linking each other, two
// million headings.
//
//	go test -run TestHostileLinksAreBounded -v ./tools
func TestHostileLinksAreBounded(t *testing.T) {
	size := docstore.MaxText
	if testing.Short() || testbin.Race {
		size = 1 << 20
	}
	fill := func(unit string) string { return strings.Repeat(unit, (size-64)/len(unit)) } // room for the appends
	var distinct strings.Builder
	for i := 0; distinct.Len() < size-64; i++ {
		fmt.Fprintf(&distinct, "[[t%d]] ", i)
	}
	a := newAgent(t)
	costs := a.carriage(t, size)
	a.write(t, "Target", "x\n")
	for _, tc := range []struct{ title, text string }{
		{"Brackets", fill("[[")},
		{"Many", fill("[[Target]] ")},
		{"Distinct", distinct.String()},
		{"Self", fill("[[Self]] ")},
		{"Ping", fill("[[Pong]] ")},
		{"Pong", fill("[[Ping]] ")},
		{"Headings", fill("# a\n")},
	} {
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"write_document", map[string]any{"title": tc.title, "text": tc.text}},
			{"read_document", map[string]any{"document": tc.title}},
			{"read_document", map[string]any{"document": tc.title, "section": "a"}},
			{"list_documents", map[string]any{"linked_from": tc.title}},
			{"list_documents", map[string]any{"links_to": tc.title}},
			{"append_document", map[string]any{"document": tc.title, "text": "[[Target]]"}},
		} {
			m := a.measure(t, call.tool, call.args, costs)
			t.Logf("%-9s %-15s %s", tc.title, call.tool, m)
			// Not under -race: there a write of 20,000 distinct links to PostgreSQL took 1.07 s
			// beyond carrying it (0.55 s without -race, at 8 MiB), the detector's cost on each
			// key the write puts.
			if m.work() > time.Second && !testbin.Race {
				t.Errorf("%s of %s (%d MiB): %v of CPU beyond carrying it, want at most 1 s", call.tool, tc.title, size>>20, m.work())
			}
		}
	}
	// Distinct keeps the first MaxLinks targets it names: the [[Target]] appended after them is text.
	if got := a.ok(t, "list_documents", map[string]any{"links_to": "Target"}); !strings.Contains(got, "(6)") {
		t.Errorf("links_to Target after the appends:\n%s", got)
	}
	if got := a.ok(t, "read_document", map[string]any{"document": "Self"}); strings.Contains(lastLines(got, 1), "Self](") {
		t.Errorf("a document's link to itself is listed:\n%s", lastLines(got, 1))
	}
	got := a.ok(t, "list_documents", map[string]any{"linked_from": "Distinct"})
	if !strings.Contains(got, "no document here is [[t0]], [[t1]], [[t10]]") || !strings.Contains(got, fmt.Sprintf("and %d more (list_documents links=broken)", docstore.MaxLinks-50)) {
		t.Errorf("the distinct links:\n%s", lastLines(got, 1)[:300])
	}
}

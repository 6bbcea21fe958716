package command

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// Links between documents and reading one section, as the model meets them: read_document
// ends with the links, which stay with their documents through a rename; list_documents
// follows them and finds the broken ones, which making the document mends; section reads
// one heading's part.
var linksSteps = []step{
	{"write_document", map[string]any{"title": "Pricing", "text": "# Pricing\n\nTwelve a month. See the [[Launch plan]].\n\n## FAQ\n\nWhy twelve? Ask Ana.\n"}},
	{"write_document", map[string]any{"title": "Course outline", "text": "1. Intro\n2. [[pricing|What it costs]]\n"}},
	{"write_document", map[string]any{"title": "Launch plan", "text": "# Launch\n\nPrices are in [[Pricing]]; the course in [[Course outline|the outline]].\nThe budget is in [[Budget]].\n\n```\n[[Not a link]]\n```\n\n## Pricing\n\nSee above.\n"}},
	{"read_document", map[string]any{"document": "Launch plan"}},
	{"read_document", map[string]any{"document": "Pricing"}},
	{"write_document", map[string]any{"document": "Pricing", "title": "Prices and plans", "text": "# Pricing\n\nTwelve a month. See the [[Launch plan]].\n\n## FAQ\n\nWhy twelve? Ask Ana.\n"}},
	{"read_document", map[string]any{"document": "Launch plan"}},
	{"list_documents", map[string]any{"linked_from": "Launch plan"}},
	{"list_documents", map[string]any{"links_to": "Prices and plans"}},
	{"list_documents", map[string]any{"links": "broken"}},
	{"write_document", map[string]any{"title": "Budget", "text": "Ten thousand.\n"}},
	{"read_document", map[string]any{"document": "Launch plan", "lines": "3-4"}},
	{"list_documents", map[string]any{"linked_from": "Launch plan"}},
	{"list_documents", map[string]any{"links": "broken"}},
	{"list_documents", map[string]any{"links": "none"}},
	{"read_document", map[string]any{"document": "Prices and plans", "section": "faq"}},
	{"read_document", map[string]any{"document": "Launch plan", "section": "Pricing"}},
	{"read_document", map[string]any{"document": "Launch plan", "section": "Launch/Pricing"}},
	{"read_document", map[string]any{"document": "Launch plan", "section": "Roadmap"}},
	{"read_document", map[string]any{"document": "Course outline", "section": "Intro"}},
	{"list_documents", map[string]any{"links": "all"}},
}

func TestLinksScenarioOverStdio(t *testing.T) {
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	c := stdioClient(t, data, "--agent", "north")
	golden(t, "links.txtar", runSession(t, c, linksSteps))
	c.Close()

	// The person's side: docs show lists the latest version's links on stderr, under the
	// header; stdout is the text alone.
	out, errs := cliBoth(t, data, "docs", "show", "Launch plan")
	if !strings.HasPrefix(out, "# Launch\n") || strings.Contains(out, "links to") {
		t.Errorf("docs show's stdout:\n%s", out)
	}
	for _, want := range []string{"links to: Budget (", "Course outline (", "Prices and plans (", "linked from: Prices and plans ("} {
		if !strings.Contains(errs, want) {
			t.Errorf("docs show's stderr lacks %q:\n%s", want, errs)
		}
	}
	cli(t, data, "docs", "delete", "Budget")
	if _, errs := cliBoth(t, data, "docs", "show", "Launch plan"); !strings.Contains(errs, "broken links: Budget (") || !strings.Contains(errs, ", deleted)") {
		t.Errorf("docs show after deleting Budget, stderr:\n%s", errs)
	}
	if _, errs := cliBoth(t, data, "docs", "show", "Prices and plans", "--version", "1"); errs == "" || strings.Contains(errs, "links") {
		t.Errorf("docs show of an older version names links:\n%s", errs)
	}
	if err := docstore.New(kvtest.OpenData(t, data), "personal").CheckLinks(t.Context()); err != nil {
		t.Error(err)
	}
}

// cliBoth runs compass-mcp with args and returns its stdout and stderr, failing the test on
// a non-zero exit.
func cliBoth(t *testing.T, data string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(testbin.Path, args...)
	cmd.Env = append(os.Environ(), testEnv(data)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("compass-mcp %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

// A file written before links has its links index built when the server starts: the first
// read shows the links its texts had. It is a bbolt file whatever the tests' store.
func TestAnOlderFileHasItsLinksAtStart(t *testing.T) {
	data := filepath.Join(t.TempDir(), "compass.db")
	raw, err := os.ReadFile("../../../testdata/layout/v2-links-before-index.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	c := stdioClient(t, data, "--agent", "north")
	text := callTool(t, c, "read_document", map[string]any{"document": "Launch plan"}).text
	lines := strings.Split(text, "\n")
	end := strings.Join(lines[len(lines)-2:], "\n")
	if !strings.Contains(end, "Links to: [Course outline](") || !strings.Contains(end, "Linked from: [Pricing](") || !strings.Contains(end, "Broken links: no document here is [[Budget]]") {
		t.Errorf("the older file's Launch plan ends:\n%s", end)
	}
	c.Close()
	db := kvtest.OpenData(t, data)
	if err := docstore.New(db, "personal").CheckLinks(t.Context()); err != nil {
		t.Error(err)
	}
}

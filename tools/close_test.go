package tools_test

import (
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// Every tool that names a document suggests the close titles of its own space when a name
// names nothing (issue 23.15), as links, and never another space's.
func TestNotFoundSuggestsCloseTitles(t *testing.T) {
	is := newIsolation(t)
	ours := docstore.New(is.db, "personal")
	var plan docstore.Document
	for _, title := range []string{"Launch plan", "Budget [draft]"} {
		saved, err := ours.Create(t.Context(), title, "a\n", docstore.KindWrite, docstore.Author{By: "person:ana"})
		if err != nil {
			t.Fatal(err)
		}
		if plan.ID == "" {
			plan = saved.Document
		}
	}
	link := "[Launch plan](/document/" + plan.ID + ")"
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_document", map[string]any{"document": "Lanch plan"}, `No document "Lanch plan" in this space: list_documents shows what's here. Close: ` + link + "."},
		{"read_document", map[string]any{"document": "Lanch plan", "since": 1}, "Close: " + link + "."},
		{"read_document", map[string]any{"document": "Lanch plan", "lines": "1"}, "Close: " + link + "."},
		{"write_document", map[string]any{"document": "Lanch plan", "text": "b\n"}, "Close: " + link + "."},
		{"append_document", map[string]any{"document": "Lanch plan", "text": "b"}, "Close: " + link + "."},
		{"edit_document", map[string]any{"document": "Lanch plan", "old": "a", "new": "b"}, "Close: " + link + "."},
		// A title's brackets are escaped in its link, as everywhere.
		{"read_document", map[string]any{"document": "budgte [draft]"}, `Close: [Budget \[draft\]](/document/`},
		// Nothing close: the refusal alone.
		{"read_document", map[string]any{"document": "Roadmap"}, `No document "Roadmap" in this space: list_documents shows what's here.`},
	} {
		text, isError := is.call(t, tc.tool, tc.args)
		if !isError || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v = %q (isError %v), want %q in it", tc.tool, tc.args, text, isError, tc.want)
		}
		if strings.HasSuffix(tc.want, "here.") && text != tc.want {
			t.Errorf("%s %v = %q, want only %q", tc.tool, tc.args, text, tc.want)
		}
	}
	// Another space's "Secret plan", misspelled: ours are suggested if close, never it.
	for _, name := range []string{"Secret plna", "Secrte plan", "secret pla"} {
		text, _ := is.call(t, "read_document", map[string]any{"document": name})
		if s := is.shows(text, name); s != "" {
			t.Errorf("read_document %q shows %q of the other space: %q", name, s, text)
		}
	}
}

package tools_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/embedtest"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/semantic"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestSearchByMeaning: with the semantic tier on, a query whose words no document has
// finds the document alike in meaning, marked so, and never one of another space; a
// query the words answer keeps the words' answer first.
func TestSearchByMeaning(t *testing.T) {
	// A fake endpoint: texts about cars are alike, about bread alike, the rest apart.
	endpoint := embedtest.New(t, func(_ int, s string) []float64 {
		s = strings.ToLower(s)
		switch {
		case strings.Contains(s, "automobile") || strings.Contains(s, "vehicle"):
			return []float64{1, 0, 0.1}
		case strings.Contains(s, "bread") || strings.Contains(s, "loaf"):
			return []float64{0, 1, 0.1}
		}
		return []float64{0, 0, 1}
	})
	db, err := bolt.OpenFile(filepath.Join(t.TempDir(), "meaning.db"), bolt.DefaultTimeout, bolt.DefaultIdle)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	by := docstore.Author{By: "agent:north", For: "person:ana"}
	for _, d := range []struct{ space, title, text string }{
		{"personal", "Garage", "The automobile needs new brakes before winter."},
		{"personal", "Baking", "A loaf of bread wants a starter and patience."},
		{"personal", "Taxes", "File the forms in April."},
		{"team", "Fleet", "Every vehicle of the team's fleet, by plate."},
	} {
		if _, err := docstore.New(db, d.space).Create(t.Context(), d.title, d.text, docstore.KindWrite, by); err != nil {
			t.Fatal(err)
		}
	}
	tier := semantic.NewTier(t.Context(), db, &semantic.Client{URL: endpoint.URL(), Model: "fake"}, semantic.Options{Interval: time.Millisecond}, false)
	for _, space := range []string{"personal", "team"} {
		if err := tier.Space(space).Update(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := inProcess(t, db, tools.Config{Agent: "north", For: "ana", Semantic: tier}, "meaning", nil)
	search := func(query string) string {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "list_documents", map[string]any{"query": query}
		res, err := c.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			t.Fatalf("%q: %v %v", query, err, res)
		}
		return textOf(res)
	}
	got := search("vehicle maintenance")
	for _, want := range []string{"(0 with every word, 0 with some, 1 by meaning)", "[Garage]", "(found by meaning, not by the query's words)"} {
		if !strings.Contains(got, want) {
			t.Errorf("vehicle maintenance: no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "Fleet") || strings.Contains(got, "Baking") || strings.Contains(got, "Taxes") {
		t.Errorf("vehicle maintenance found more than its meaning, or another space's:\n%s", got)
	}
	// Words that find a document: it comes first, by its words, not marked.
	got = search("forms")
	if !strings.HasPrefix(strings.SplitN(got, "\n", 3)[1], "- [Taxes]") || strings.Contains(got, "found by meaning") {
		t.Errorf("forms:\n%s", got)
	}
}

package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/mark3labs/mcp-go/mcp"
)

// A search finds nothing of another space, and nothing an agent did privately.
func TestSearchShowsNothingOfAnotherSpaceNorPrivate(t *testing.T) {
	is := newIsolation(t)
	if _, err := threads.New(is.db, "personal").Say(t.Context(), is.ourConv, "", threads.Message{From: "agent:north", Text: "list_documents → zebra-step", Private: true}); err != nil {
		t.Fatal(err)
	}
	long := "public notes" + strings.Repeat(" the of", 10)
	for i := range 70 {
		long += fmt.Sprintf(" word%d", i)
	}
	for _, tc := range []struct {
		tool, query, want string
	}{
		{"list_documents", long, "Public notes"},
		{"list_documents", long, "Only 64 words and phrases of the query, 512 words in all, were looked for: its quoted phrases and its rarest words in the index."},
		{"list_documents", "secret plan", "(0 with every word, 1 with some)"}, // "secret" is in Public notes
		{"list_documents", "launch", "No document here has"},
		{"list_documents", "quiet", "No document here has"},
		{"list_documents", `"secret plan"`, "No document here has"},
		{"list_documents", "nothing secret", "Public notes"},
		{"list_conversations", "launch", "No other conversation here has"},
		{"list_conversations", "nobody", "No other conversation here has"},
		{"list_conversations", "zebra", "No other conversation here has"},
		{"list_conversations", "list_documents", "No other conversation here has"},
		{"list_conversations", "hello personal", is.ourText},
	} {
		text, isError := is.call(t, tc.tool, map[string]any{"query": tc.query})
		if isError || !strings.Contains(text, tc.want) {
			t.Errorf("%s query=%q = %q (isError %v), want %q in it", tc.tool, tc.query, text, isError, tc.want)
		}
		if s := is.shows(text, tc.query); s != "" {
			t.Errorf("%s query=%q shows %q of the other space: %q", tc.tool, tc.query, s, text)
		}
		if strings.Contains(text, "zebra-step") || strings.Contains(text, "→") {
			t.Errorf("%s query=%q shows a private step: %q", tc.tool, tc.query, text)
		}
	}
}

// The tools' definitions, as tools/list sends them, stay small: every conversation
// pays for them in its context.
func TestToolsListIsSmall(t *testing.T) {
	is := newIsolation(t)
	res, err := is.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 8 || len(raw) > 6<<10 {
		t.Errorf("tools/list has %d tools in %d bytes, want 8 in at most 6 KB", len(res.Tools), len(raw))
	}
	t.Logf("tools/list: %d tools, %d bytes", len(res.Tools), len(raw))
}

package command

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/threads"
)

// Finding things: search documents and conversations, and read part of a long document.
var searchSteps = []step{
	{"write_document", map[string]any{"title": "Launch plan", "text": "# Launch\n\nRecord the trailer on Tuesday.\nReview the **course page** at the Café.\n"}},
	{"write_document", map[string]any{"title": "Trailer", "text": "Shoot it in 東京 on Friday.\n"}},
	{"write_document", map[string]any{"title": "Long notes", "text": longNotes()}},
	{"list_documents", map[string]any{"query": "trailer"}},
	{"list_documents", map[string]any{"query": `cafe "course page"`}},
	{"list_documents", map[string]any{"query": "京"}},
	{"list_documents", map[string]any{"query": "on", "limit": 1}},
	{"list_documents", map[string]any{"query": "notes 12"}},
	{"list_documents", map[string]any{"query": "podcast"}},
	{"list_documents", map[string]any{"query": "** --"}},
	{"read_document", map[string]any{"document": "Long notes", "lines": "98-102"}},
	{"read_document", map[string]any{"document": "Long notes", "lines": "-3"}},
	{"read_document", map[string]any{"document": "Long notes", "lines": "149-"}},
	{"read_document", map[string]any{"document": "Launch plan", "lines": "3"}},
	{"edit_document", map[string]any{"document": "Launch plan", "old": "Tuesday", "new": "Wednesday"}},
	{"list_documents", map[string]any{"query": "tuesday"}},
	{"read_document", map[string]any{"document": "Launch plan", "lines": "3", "version": 1}},
	{"read_document", map[string]any{"document": "Launch plan", "lines": "9-"}},
	{"read_document", map[string]any{"document": "Launch plan", "lines": "5-2"}},
	{"read_document", map[string]any{"document": "Launch plan", "lines": "ten"}},
	{"read_document", map[string]any{"document": "Launch plan", "lines": "1-2", "since": 1}},
	{"list_conversations", map[string]any{"query": "12 month"}},
	{"list_conversations", map[string]any{"query": "list_documents"}},
	// Ranked retrieval: a question as an agent asks it, words as people write them.
	{"list_documents", map[string]any{"query": "When did we record the trailer music?"}},
	{"list_documents", map[string]any{"query": "recorded trailers"}},
	{"list_documents", map[string]any{"query": `"recorded" trailer`}},
	{"list_conversations", map[string]any{"query": "what price did we settle on?"}},
}

// longNotes is 150 numbered lines.
func longNotes() string {
	var b strings.Builder
	for i := 1; i <= 150; i++ {
		fmt.Fprintf(&b, "Note %d.\n", i)
	}
	return b.String()
}

func TestSearchScenarioOverStdio(t *testing.T) {
	t.Parallel()
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	cli(t, data, "import", "../../../testdata/import/pricing.jsonl")
	c := stdioClient(t, data, "--agent", "north")
	golden(t, "search.txtar", runSession(t, c, searchSteps))
	c.Close()
}

// A file written before search is indexed when the server starts, and answers at once.
// It is a bbolt file whatever the tests' store: only bbolt files were written before search.
func TestAnOlderFileIsIndexedAtStart(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "compass.db")
	raw, err := os.ReadFile("../../../testdata/layout/v1-full-texts.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	c := stdioClient(t, data, "--agent", "north")
	text := callTool(t, c, "list_documents", map[string]any{"query": `"long history" line`}).text
	if !strings.Contains(text, "Long history") {
		t.Errorf("a search of the older file: %q", text)
	}
	c.Close()
	db := kvtest.OpenData(t, data)
	if err := docstore.New(db, "personal").CheckIndex(t.Context()); err != nil {
		t.Error(err)
	}
}

// A file whose search index is of the format before stems (testdata/layout/v1-search-index.db,
// written by the server before issue 24: three documents, a conversation, both indexes
// built) has both indexes built again when the server starts: stems find what the old
// index couldn't, and each index is what a rebuild makes.
func TestAnOlderIndexIsBuiltAgainAtStart(t *testing.T) {
	data := filepath.Join(t.TempDir(), "compass.db")
	raw, err := os.ReadFile("../../../testdata/layout/v1-search-index.db")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	c := stdioClient(t, data, "--agent", "north")
	if text := callTool(t, c, "list_documents", map[string]any{"query": "recorded trailers"}).text; !strings.Contains(text, "(2 with every word, 0 with some)") || !strings.Contains(text, "Record the trailer on Tuesday.") || !strings.Contains(text, "The recording studio is booked.") {
		t.Errorf("a search of the older file: %q", text)
	}
	if text := callTool(t, c, "list_conversations", map[string]any{"query": "prices"}).text; !strings.Contains(text, "we settled on 12 a month") {
		t.Errorf("a search of the older file's conversations: %q", text)
	}
	c.Close()
	db := kvtest.OpenData(t, data)
	if err := docstore.New(db, "personal").CheckIndex(t.Context()); err != nil {
		t.Error(err)
	}
	if err := threads.New(db, "personal").CheckIndex(t.Context()); err != nil {
		t.Error(err)
	}
}

package command

import (
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// The seed's scenario: list nothing, make "Launch plan", be told a second one with that
// title exists, append, edit, fail to edit text that isn't there, read now and as
// version 1, list, and misspell it.
var seedSteps = []step{
	{"list_documents", map[string]any{}},
	{"write_document", map[string]any{"title": "Launch plan", "text": "Record the trailer, then review the course page.\n"}},
	{"write_document", map[string]any{"title": "launch plan", "text": "A second plan.\n"}},
	{"append_document", map[string]any{"document": "Launch plan", "text": "- Book the studio for Tuesday."}},
	{"edit_document", map[string]any{"document": "launch", "old": "review the course page", "new": "review the course page with Ana"}},
	{"edit_document", map[string]any{"document": "Launch plan", "old": "Record the podcast", "new": "Record the video"}},
	{"read_document", map[string]any{"document": "Launch plan"}},
	{"read_document", map[string]any{"document": "Launch plan", "version": 1}},
	{"list_documents", map[string]any{}},
	{"read_document", map[string]any{"document": "Lanch plan"}}, // the contract's near miss: "Close: [Launch plan](...)."
}

// Refusals a model can act on, each followed by a call that shows the server is still up.
var refusalSteps = []step{
	{"write_document", map[string]any{"title": "Notes", "text": "- one\n- two\n  - indented\n- one\n"}},
	{"edit_document", map[string]any{"document": "Notes", "old": "- one", "new": "- 1"}},
	{"edit_document", map[string]any{"document": "Notes", "old": "- two\n- indented", "new": "x"}},
	{"edit_document", map[string]any{"document": "Notes", "old": "", "new": "x"}},
	{"edit_document", map[string]any{"document": "Notes", "old_text": "- two", "new": "x"}},
	{"edit_document", map[string]any{"document": "Notes", "old": "- two"}},
	{"edit_document", map[string]any{"document": "Notes", "old": "- two\n", "new": "- two\n"}},
	{"read_document", map[string]any{"document": "Notes", "version": 7}},
	{"read_document", map[string]any{"document": "Notes", "version": "x"}},
	{"read_document", map[string]any{"document": "Notes", "version": 0}},
	{"read_document", map[string]any{"document": "Lanch plan"}},
	{"read_document", map[string]any{"document": 42}},
	{"write_document", map[string]any{"title": "Plan B", "text": "b\n"}},
	{"read_document", map[string]any{"document": "plan"}},
	{"write_document", map[string]any{"title": "Plan C", "text": "c\n"}},
	{"read_document", map[string]any{"document": "plan"}},
	{"edit_document", map[string]any{"document": "PLAN c", "old": "c", "new": "see"}},
	{"write_document", map[string]any{"title": "   ", "text": "x"}},
	{"write_document", map[string]any{"title": "Bad\x00title", "text": "x"}},
	{"write_document", map[string]any{"title": "Two\nlines", "text": "x"}},
	{"write_document", map[string]any{"title": "No text"}},
	{"write_document", map[string]any{"document": "Plan B", "title": "notes", "text": "b\n"}},
	{"append_document", map[string]any{"document": "Plan B", "text": "  \n"}},
	{"list_documents", map[string]any{"limit": 0}},
	{"list_documents", map[string]any{"limit": 1}},
	{"append_document", map[string]any{"document": "Plan D", "text": "d"}}, // two as close
}

func TestSeedScenarioOverStdio(t *testing.T) {
	t.Parallel()
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	c := stdioClient(t, data, "--agent", "north")
	golden(t, "seed.txtar", runSession(t, c, seedSteps))
	c.Close()
	checkAuthors(t, data, "Launch plan", 3)
}

func TestSeedScenarioOverHTTP(t *testing.T) {
	t.Parallel()
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	url, stop := httpServer(t, data, "--agent", "north")
	golden(t, "seed.txtar", runSession(t, httpClient(t, url, "test-client"), seedSteps))
	stop()
	checkAuthors(t, data, "Launch plan", 3)
}

func TestRefusalsOverStdio(t *testing.T) {
	t.Parallel()
	data := newData(t)
	golden(t, "refusals.txtar", runSession(t, stdioClient(t, data, "--agent", "north"), refusalSteps))
}

func TestRefusalsOverHTTP(t *testing.T) {
	t.Parallel()
	data := newData(t)
	url, _ := httpServer(t, data, "--agent", "north")
	golden(t, "refusals.txtar", runSession(t, httpClient(t, url, "test-client"), refusalSteps))
}

// checkAuthors opens the data file the server has let go of and checks that the named
// document has the given number of versions, every one by agent:north for person:ana.
func checkAuthors(t *testing.T, data, name string, versions int) {
	t.Helper()
	db := kvtest.OpenData(t, data)
	vs, err := view(t, docstore.New(db, "personal"), versionsOf(name))
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != versions {
		t.Errorf("%s has %d versions, want %d", name, len(vs), versions)
	}
	for _, v := range vs {
		if v.Author.By != "agent:north" || v.Author.For != "person:ana" {
			t.Errorf("version %d is by %q for %q, want agent:north for person:ana", v.Number, v.Author.By, v.Author.For)
		}
	}
}

// Without --agent, versions say the client's name from initialize.
func TestAgentIsTheClientsName(t *testing.T) {
	t.Parallel()
	data := newData(t)
	url, _ := httpServer(t, data)
	c := httpClient(t, url, "Claude Desktop")
	callTool(t, c, "write_document", map[string]any{"title": "Hello", "text": "hi\n"})
	a := callTool(t, c, "read_document", map[string]any{"document": "Hello"})
	if !strings.Contains(a.text, "saved by Claude-Desktop for ana") {
		t.Errorf("read_document says %q, want it saved by Claude-Desktop for ana", a.text)
	}
}

// Writing from a version, and reading what changed since one.
var historySteps = []step{
	{"write_document", map[string]any{"title": "Plan", "text": "# Plan\n\nRecord the trailer.\nReview the page.\nBook the studio.\n"}},
	{"edit_document", map[string]any{"document": "Plan", "old": "Review the page.", "new": "Review the course page."}},
	{"write_document", map[string]any{"document": "Plan", "version": 1, "text": "# Launch plan\n\nRecord the trailer.\nReview the page.\nBook the studio.\n"}},
	{"write_document", map[string]any{"document": "Plan", "version": 1, "text": "# Plan\n\nRecord the trailer.\nReview the page twice.\nBook the studio.\n"}},
	{"read_document", map[string]any{"document": "Plan", "since": 1}},
	{"read_document", map[string]any{"document": "Plan", "since": 3}},
	{"read_document", map[string]any{"document": "Plan", "since": 4}},
	{"read_document", map[string]any{"document": "Plan"}},
	{"read_document", map[string]any{"document": "Plan", "since": 0}},
	{"read_document", map[string]any{"document": "Plan", "since": 1, "version": 2}},
	{"write_document", map[string]any{"title": "New", "text": "x\n", "version": 1}},
	{"write_document", map[string]any{"document": "Plan", "text": "x\n", "version": -1}},
}

func TestHistoryOverStdio(t *testing.T) {
	t.Parallel()
	data := newData(t)
	golden(t, "history.txtar", runSession(t, stdioClient(t, data, "--agent", "north"), historySteps))
}

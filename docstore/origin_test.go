package docstore_test

import (
	"encoding/json"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// A version recorded before doors and sessions were decodes as it did, and says so.
func TestVersionBeforeSessions(t *testing.T) {
	var v docstore.Version
	old := `{"n":3,"title":"Plan","kind":"edit","author":{"by":"agent:north","for":"person:ana"},"at":"2026-11-01T10:00:00Z","added":1,"removed":1}`
	if err := json.Unmarshal([]byte(old), &v); err != nil {
		t.Fatal(err)
	}
	if v.Author.Door != "" || v.Author.Session != "" || v.Author.Via() != "before sessions were recorded" {
		t.Errorf("an old version: %+v, %q", v.Author, v.Author.Via())
	}
	raw, _ := json.Marshal(docstore.Author{By: "person:ana"})
	if string(raw) != `{"by":"person:ana"}` {
		t.Errorf("an author with no door is stored as %s: the new fields cost nothing unset", raw)
	}
}

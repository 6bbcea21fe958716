package web

import (
	"encoding/json"
	"os"
	"testing"
)

// xssCorpus reads testdata/xss.json: Markdown an agent might write to attack the person's
// browser (raw script, event attributes, javascript: and data: links, entities, nested
// tricks). The page must render every one without a script, an event attribute or a
// script URL reaching the DOM. The browser tests read it too.
func xssCorpus(t testing.TB, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var corpus []string
	if err := json.Unmarshal(raw, &corpus); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return corpus
}

package command

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/compass-mcp/compass-mcp/threads/claudecode"
)

// An import says what it imported, and, again, that it was all there already; a bad line
// imports nothing, and says where it is.
func TestImportConversations(t *testing.T) {
	ctx := t.Context()
	store := threads.New(kvtest.Open(t), "personal")
	jsonl, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "import", "pricing.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out, errs strings.Builder
	if err := ImportConversations(ctx, store, "personal", "ana", strings.NewReader(string(jsonl)), &out, &errs); err != nil {
		t.Fatal(err)
	}
	if want := "Imported 2 conversations and 5 messages into space personal; 0 messages already there.\n"; out.String() != want || errs.Len() != 0 {
		t.Errorf("said %q and %q; want %q and nothing on errs", out.String(), errs.String(), want)
	}
	out.Reset()
	if err := ImportConversations(ctx, store, "personal", "ana", strings.NewReader(string(jsonl)), &out, &errs); err != nil {
		t.Fatal(err)
	}
	if want := "Imported 0 conversations and 0 messages into space personal; 5 messages already there.\n"; out.String() != want {
		t.Errorf("again: said %q; want %q", out.String(), want)
	}
	out.Reset()
	bad := `{"conversation":"new","from":"person:ana","text":"fine"}` + "\n" + `{"conversation":"new","text":` + "\n"
	err = ImportConversations(ctx, store, "personal", "ana", strings.NewReader(bad), &out, &errs)
	var ie *threads.ImportError
	if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "nothing was imported: ") || !strings.Contains(err.Error(), "2") || out.Len() != 0 {
		t.Errorf("a bad second line: %v, said %q", err, out.String())
	}
	if convs, err := view(t, store, func(r *threads.Reader) ([]threads.Conversation, error) { return r.Recent(10, "") }); err != nil || len(convs) != 2 {
		t.Errorf("after the refused import: %d conversations, %v; want the 2 imported before", len(convs), err)
	}
}

// A pass over Claude Code's transcripts says what it imported, from how many transcripts,
// and the lines that were not JSON; a second pass finds nothing new.
func TestImportClaudeCode(t *testing.T) {
	ctx := t.Context()
	store := threads.New(kvtest.Open(t), "personal")
	cc, err := claudecode.New(store, claudecode.Options{Dir: filepath.Join("..", "..", "..", "testdata", "import", "claude-code"), Me: "person:ana"})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := ImportClaudeCode(ctx, cc, "personal", &out); err != nil {
		t.Fatal(err)
	}
	if want := "Imported 3 conversations and 27 messages from 4 transcripts into space personal; 0 messages already there.\nSkipped 1 line: not JSON.\n"; out.String() != want {
		t.Errorf("said %q; want %q", out.String(), want)
	}
	out.Reset()
	if err := ImportClaudeCode(ctx, cc, "personal", &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "Imported 0 conversations and 0 messages from 0 transcripts into space personal") || strings.Contains(out.String(), "Skipped") {
		t.Errorf("again: said %q", out.String())
	}
}

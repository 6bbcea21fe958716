package claudecode

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/threads"
)

// FuzzClaudeCodeLine reads any transcript line: it never panics, and every message it gives
// is one the store keeps (so no line can fail an import), in a conversation it can name.
//
//	go test -fuzz=FuzzClaudeCodeLine ./claudecode
func FuzzClaudeCodeLine(f *testing.F) {
	_ = filepath.WalkDir(filepath.Join("..", "..", "testdata", "import", "claude-code"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(path)
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l)
		}
		return nil
	})
	f.Add([]byte(`{"type":"user","message":{"content":"\u0000"}}`))
	f.Add([]byte(`{"type":"assistant","timestamp":"0001-01-01T00:00:00Z","message":{"content":[{"type":"tool_use","input":null}]}}`))
	f.Add([]byte(`{"type":"user","sessionId":"","uuid":"\n","message":{"content":[{"type":"text","text":"  "}]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		cf := &transcript{stem: "stem", mod: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		it, ok := cf.parseLine(line, "person:ana")
		if !ok {
			return
		}
		if len(it.Messages) > 0 && threads.CheckID(it.Conversation) != nil {
			t.Fatalf("conversation %q can't be named", it.Conversation)
		}
		for _, m := range it.Messages {
			if err := threads.CheckMessage(m); err != nil {
				t.Fatalf("message %+v: %v", m, err)
			}
			if err := threads.CheckExternal(m.External); err != nil {
				t.Fatalf("external id of %+v: %v", m, err)
			}
		}
	})
}

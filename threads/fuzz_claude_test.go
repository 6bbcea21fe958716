package threads

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"
	"time"
)

// claudePlace is how an ImportError of a Claude export begins: the conversation's index, or
// the export as a whole.
var claudePlace = regexp.MustCompile(`^(conversation at index \d+|Claude export): `)

// FuzzImportClaude imports any Claude export: it never panics; a refusal names the
// conversation (or the export) and leaves nothing imported; an import, done again, adds
// nothing.
//
// go test -fuzz=FuzzImportClaude ./threads
func FuzzImportClaude(f *testing.F) {
	if seed, err := os.ReadFile(filepath.Join("..", "testdata", "import", "claude-conversations.json")); err == nil {
		f.Add(seed)
	}
	for _, s := range []string{
		`[]`,
		`[{"uuid":"c1","name":"Pricing","chat_messages":[{"uuid":"m1","sender":"human","text":"12 a month?"},{"sender":"assistant","content":[{"type":"text","text":"Yes."}]}]}]`,
		`[{"uuid":"c1","chat_messages":[{"sender":"assistant","content":[{"type":"tool_use","name":"search","input":{"q":"x"}},{"type":"tool_result","content":"found"},{"type":"tool_result","content":[{"type":"text","text":"a"}]}]}]}]`,
		`[{"uuid":"c1","created_at":"2026-10-01T08:00:00.000000Z","chat_messages":[{"sender":"human","text":"x","created_at":"2026-10-01T08:00:10Z"}]}]`,
		`[{"uuid":"c1","chat_messages":[{"sender":"human","text":"same"},{"sender":"human","text":"same"}]}]`,
		`[{"uuid":"c1","chat_messages":[{"sender":"robot","text":"x"}]}]`,
		`[{"uuid":5}]`,
		`[{"uuid":"c1","chat_messages":[{"sender":"human","text":"x"`,
		`[{"uuid":"c1","chat_messages":[]}] trailing`,
		`[{"uuid":"c\n1","name":"a\u0000b","chat_messages":[{"sender":"human","text":"x","created_at":"yesterday"}]}]`,
		` [{"uuid":"c1","chat_messages":[{"sender":"human","uuid":"m1","content":[{"type":"image"},{"type":"text","text":""}]}]}]`,
	} {
		f.Add([]byte(s))
	}
	db := openDB(f)
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, in []byte) {
		if !looksClaude(in) {
			t.Skip("JSON Lines, not a Claude export (FuzzImportJSONL)")
		}
		s := New(db, fmt.Sprintf("claude%d", n.Add(1))).WithClock(func() time.Time { return t0 })
		importTwice(t, s, in, func(ie *ImportError, err error) bool {
			return ie.Line == 0 && ie.Index >= -1 && claudePlace.MatchString(err.Error())
		})
	})
}

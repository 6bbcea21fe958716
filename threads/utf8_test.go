package threads

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestUTF8Reader(t *testing.T) {
	good := strings.Repeat("héllo wörld ✓ 𝄞 ", 5000)
	// One byte at a time cuts every character: it must come through whole.
	got, err := io.ReadAll(&utf8Reader{r: iotest.OneByteReader(strings.NewReader(good))})
	if err != nil || string(got) != good {
		t.Fatalf("valid text: %v, %d of %d bytes", err, len(got), len(good))
	}
	for _, bad := range []string{"ok\xffrest", "ok\xe2\x9c", "\xc3(", good + "\x80"} {
		_, err := io.ReadAll(&utf8Reader{r: iotest.HalfReader(strings.NewReader(bad))})
		if err == nil || !strings.Contains(err.Error(), "not valid UTF-8 at byte") {
			t.Errorf("%q: %v, want an error naming the byte", bad[max(0, len(bad)-8):], err)
		}
	}
}

func TestClaudeConversationTooBig(t *testing.T) {
	ctx := t.Context()
	s := New(openDB(t), "personal")
	huge := `[{"uuid":"c1","name":"` + strings.Repeat("x", maxConversation+1<<20) + `","chat_messages":[]}]`
	_, err := s.Import(ctx, bytes.NewReader([]byte(huge)), "ana", nil)
	if err == nil || !strings.Contains(err.Error(), "over 64 MiB") {
		t.Errorf("a 64 MiB conversation: %v", err)
	}
}

// A NUL in what was said is refused with the place, from either format; in a private tool
// step it is written as ␀.
func TestImportRefusesNUL(t *testing.T) {
	ctx := t.Context()
	s := New(openDB(t), "personal")
	_, err := s.Import(ctx, strings.NewReader(`{"conversation":"c","from":"person:ana","text":"a\u0000b"}`), "ana", nil)
	if err == nil || !strings.Contains(err.Error(), `line 1: field "text"`) || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("JSON Lines with a NUL: %v", err)
	}
	claude := `[{"uuid":"c1","name":"n","chat_messages":[{"uuid":"m1","sender":"human","text":"a\u0000b","created_at":"2026-11-08T10:42:00Z"}]}]`
	if _, err := s.Import(ctx, strings.NewReader(claude), "ana", nil); err == nil || !strings.Contains(err.Error(), "index 0") || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("a Claude export with a NUL: %v", err)
	}
	step := `[{"uuid":"c2","name":"n","chat_messages":[{"uuid":"m2","sender":"assistant","created_at":"2026-11-08T10:42:00Z","content":[{"type":"tool_result","content":"bin\u0000ary"},{"type":"text","text":"done"}]}]}]`
	if _, err := s.Import(ctx, strings.NewReader(step), "ana", nil); err != nil {
		t.Errorf("a tool step with a NUL: %v", err)
	}
}

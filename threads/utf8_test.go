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
	s := New(openDB(t), "personal")
	huge := `[{"uuid":"c1","name":"` + strings.Repeat("x", maxConversation+1<<20) + `","chat_messages":[]}]`
	_, err := s.Import(bytes.NewReader([]byte(huge)), "ana", nil)
	if err == nil || !strings.Contains(err.Error(), "over 64 MiB") {
		t.Errorf("a 64 MiB conversation: %v", err)
	}
}

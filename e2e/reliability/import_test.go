package reliability

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/threads"
)

// importStdin runs compass-mcp import - with in as its stdin, and returns what it said, how
// long it took, its peak resident memory in bytes, as /proc last saw it (VmHWM), and its exit
// error. The exit's rusage won't do: a child forked from this test process starts with
// this process's high-water mark.
func importStdin(t *testing.T, data string, in io.Reader) (out string, took time.Duration, peak int64, err error) {
	t.Helper()
	cmd := exec.Command(testbin.Path, "import", "-")
	cmd.Env = append(os.Environ(), serverEnv(data)...)
	cmd.Stdin = in
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err = <-done:
			return b.String(), time.Since(start), peak, err
		case <-tick.C:
			if raw, rerr := os.ReadFile(status); rerr == nil {
				if m := vmHWM.FindSubmatch(raw); m != nil {
					kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
					peak = max(peak, kb<<10)
				}
			}
		}
	}
}

var vmHWM = regexp.MustCompile(`VmHWM:\s+(\d+) kB`)

// nothingImported checks the space has no conversation.
func nothingImported(t *testing.T, data, what string) {
	t.Helper()
	db := openChecked(t, data)
	defer db.Close()
	var got []threads.Conversation
	err := threads.New(db, "personal").View(t.Context(), func(r *threads.Reader) error {
		var err error
		got, err = r.Recent(10, "")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 0 {
		t.Errorf("%s: a failed import left %d conversations", what, len(got))
	}
}

const goodLines = `{"conversation":"pricing","title":"Pricing","from":"person:ana","to":"agent:north","text":"12 a month."}
{"conversation":"pricing","from":"agent:north","text":"Noted."}
`

// TestImportRefusesWithThePlace imports bad JSON Lines and bad Claude exports: each is
// refused naming the line (or the conversation's index), and nothing of it is imported,
// though good lines come before the bad one.
func TestImportRefusesWithThePlace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		what, in, want string
	}{
		{"truncated JSON", goodLines + `{"conversation":"pricing","from":"person:ana","text":"half`, "line 3: not valid JSON"},
		{"text a number", goodLines + `{"conversation":"pricing","from":"person:ana","text":5}`, `line 3: field "text" must be a string`},
		{"conversation a number", goodLines + `{"conversation":7,"from":"person:ana","text":"x"}`, `line 3: field "conversation"`},
		{"private a string", goodLines + `{"conversation":"pricing","from":"person:ana","text":"x","private":"yes"}`, `line 3: field "private"`},
		{"a line that is a list", goodLines + `["pricing","person:ana","x"]`, "line 3:"},
		{"an unknown sender", goodLines + `{"conversation":"pricing","from":"robot:x","text":"beep"}`, `line 3: field "from"`},
		{"no sender", goodLines + `{"conversation":"pricing","text":"who?"}`, "line 3:"},
		{"no conversation", goodLines + `{"from":"person:ana","text":"where?"}`, "line 3:"},
		{"an empty text", goodLines + `{"conversation":"pricing","from":"person:ana","text":""}`, "line 3:"},
		{"a time that isn't", goodLines + `{"conversation":"pricing","from":"person:ana","text":"x","at":"yesterday"}`, `line 3: field "at"`},
		{"a leap second in 9999", goodLines + `{"conversation":"pricing","from":"person:ana","text":"x","at":"9999-12-31T23:59:60Z"}`, "line 3:"},
		{"an unknown field", goodLines + `{"conversation":"pricing","from":"person:ana","text":"x","colour":"red"}`, `line 3: unknown field "colour"`},
		{"a conversation id with a newline", goodLines + `{"conversation":"pri\ncing","from":"person:ana","text":"x"}`, "line 3:"},
		{"Claude: truncated", `[{"uuid":"c1","name":"Pricing","chat_messages":[{"sender":"human","text":"x"`, "conversation at index 0"},
		{"Claude: uuid a number", `[{"uuid":5,"chat_messages":[]}]`, "conversation at index 0: field uuid"},
		{"Claude: an unknown sender", `[{"uuid":"c1","chat_messages":[{"sender":"human","text":"hi"}]},{"uuid":"c2","chat_messages":[{"sender":"robot","text":"beep"}]}]`, `conversation at index 1: message at index 0: sender "robot"`},
		{"Claude: content a string", `[{"uuid":"c1","chat_messages":[{"sender":"human","content":"hi"}]}]`, "conversation at index 0"},
		{"Claude: more after the array", `[{"uuid":"c1","chat_messages":[{"sender":"human","text":"hi"}]}] {}`, "more after the array"},
		{"Claude: not conversations", `[1, 2]`, "conversation at index 0"},
	} {
		data := newData(t)
		out, _, _, err := importStdin(t, data, strings.NewReader(tc.in+"\n"))
		if err == nil || !strings.Contains(out, "nothing was imported") || !strings.Contains(out, tc.want) {
			t.Errorf("%s: %v, said %q; want a refusal with %q", tc.what, err, out, tc.want)
		}
		nothingImported(t, data, tc.what)
	}
}

// Imports refuse what the tools refuse, as the README says: raw invalid UTF-8, a NUL,
// and an escape of half a character (\ud800), which the decoder turned into U+FFFD and the
// test that covered it only logged. Nothing of the input is imported.
func TestImportRefusesWhatTheToolsRefuse(t *testing.T) {
	t.Parallel()
	good := `{"conversation":"c","from":"person:ana","text":"fine"}` + "\n"
	for _, tc := range []struct{ what, in, want string }{
		{"raw invalid UTF-8 in a text", good + "{\"conversation\":\"c\",\"from\":\"person:ana\",\"text\":\"bad \xff byte\"}", "line 2: the line is not valid UTF-8"},
		{"a NUL in a text", good + `{"conversation":"c","from":"person:ana","text":"a\u0000b"}`, "line 2: field \"text\""},
		{"a lone surrogate in a text", good + `{"conversation":"c","from":"person:ana","text":"a\ud800b"}`, "line 2: field \"text\" has an escape of half a character"},
		{"a lone low surrogate in a title", good + `{"conversation":"c","title":"\udc00","from":"person:ana","text":"x"}`, "line 2: field \"title\" has an escape of half a character"},
		{"Claude: a lone surrogate in a text", `[{"uuid":"c1","chat_messages":[{"sender":"human","text":"ok"}]},{"uuid":"c2","chat_messages":[{"sender":"human","text":"a\ud800b"}]}]`, "conversation at index 1: an escape of half a character"},
		{"Claude: a lone surrogate in a name", `[{"uuid":"c1","name":"\ud83d","chat_messages":[]}]`, "conversation at index 0: an escape of half a character"},
	} {
		data := newData(t)
		out, _, _, err := importStdin(t, data, strings.NewReader(tc.in+"\n"))
		if err == nil || !strings.Contains(out, "nothing was imported") || !strings.Contains(out, tc.want) {
			t.Errorf("%s: %v, said %q; want a refusal with %q", tc.what, err, out, tc.want)
		}
		nothingImported(t, data, tc.what)
	}
	// A pair of escapes is one character, and imports.
	data := newData(t)
	if out, _, _, err := importStdin(t, data, strings.NewReader(`{"conversation":"c","from":"person:ana","text":"\ud83d\ude00"}`+"\n")); err != nil {
		t.Errorf("a surrogate pair: %v %s", err, out)
	}
}

// lazyLine is good lines, then a line of size bytes of text, made as it is read.
type lazyLine struct {
	head io.Reader
	left int64
}

func (l *lazyLine) Read(p []byte) (int, error) {
	if n, err := l.head.Read(p); n > 0 || err != io.EOF {
		return n, err
	}
	if l.left <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), l.left)
	for i := range n {
		p[i] = 'x'
	}
	l.left -= n
	return int(n), nil
}

// A 1 GB line, made as it is piped in: refused at once with its line number, nothing
// imported, and the memory the import takes stays far below the line's size.
func TestImportRefusesAGigabyteLine(t *testing.T) {
	t.Parallel()
	data := newData(t)
	in := &lazyLine{head: strings.NewReader(goodLines + `{"conversation":"pricing","from":"person:ana","text":"`), left: 1 << 30}
	out, took, peak, err := importStdin(t, data, in)
	t.Logf("a 1 GB line: %s in %s, peak memory %d MiB, %d MiB of the line read", strings.TrimSpace(out), took.Round(time.Millisecond), peak>>20, ((1<<30)-in.left)>>20)
	if err == nil || !regexp.MustCompile(`nothing was imported: line 3: .*longer than`).MatchString(out) {
		t.Errorf("a 1 GB line: %v, said %q; want it refused, naming line 3", err, out)
	}
	if took > raceSlack(10*time.Second) {
		t.Errorf("a 1 GB line took %s to refuse", took)
	}
	if peak > raceSlack[int64](256<<20) {
		t.Errorf("a 1 GB line took %d MiB of memory to refuse", peak>>20)
	}
	nothingImported(t, data, "a 1 GB line")
}

// The same for a Claude export of one conversation with a 1 GB title. Claude exports are
// read a conversation at a time, each whole, so one is refused past 64 MiB of JSON (it
// took 6 GB of memory and half a minute, then was imported, before that bound).
func TestImportBoundsAGigabyteClaudeConversation(t *testing.T) {
	data := newData(t)
	in := io.MultiReader(&lazyLine{head: strings.NewReader(`[{"uuid":"c1","name":"`), left: 1 << 30}, strings.NewReader(`","chat_messages":[]}]`))
	out, took, peak, err := importStdin(t, data, in)
	t.Logf("a 1 GB Claude conversation: %s in %s, peak memory %d MiB", strings.TrimSpace(out), took.Round(time.Millisecond), peak>>20)
	if err == nil || !regexp.MustCompile(`nothing was imported: conversation at index 0: .*over 64 MiB`).MatchString(out) {
		t.Errorf("a 1 GB Claude conversation: %v, said %q; want it refused, naming the conversation and the bound", err, out)
	}
	if took > raceSlack(10*time.Second) || peak > raceSlack[int64](256<<20) {
		t.Errorf("a 1 GB Claude conversation took %s and %d MiB to refuse; want it quick, in bounded memory", took, peak>>20)
	}
	nothingImported(t, data, "a 1 GB Claude conversation")
}

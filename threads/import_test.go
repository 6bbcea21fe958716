package threads

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

func importFile(t *testing.T, s *Store, name string) ImportSummary {
	t.Helper()
	ctx := t.Context()
	f, err := os.Open(filepath.Join("..", "testdata", "import", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := s.Import(ctx, f, "ana", nil)
	if err != nil {
		t.Fatalf("importing %s: %v", name, err)
	}
	return sum
}

func TestImportJSONL(t *testing.T) {
	s := New(openDB(t), "personal").WithClock(clock(t0))
	sum := importFile(t, s, "pricing.jsonl")
	if want := (ImportSummary{Conversations: 2, Messages: 5}); sum != want {
		t.Errorf("first import: %+v, want %+v", sum, want)
	}
	recent, err := readRecent(t, s, 20, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pricing", "trailer"}; !slices.Equal(ids(recent), want) {
		t.Fatalf("Recent = %v, want %v", ids(recent), want)
	}
	p := recent[0]
	if p.Title != "Pricing" || p.Count != 2 || p.First.Text != "Pricing: we settled on 12 a month." ||
		p.Latest.Text != "You said: Ana: Pricing: we settled on 12 a month." || p.First.To != "agent:north" ||
		!p.Last.Equal(time.Date(2026, 11, 8, 10, 42, 2, 0, time.UTC)) {
		t.Errorf("pricing = %+v", p)
	}
	tr := recent[1]
	// 10:00:05+01:00 is 09:00:05Z: five seconds after the opening message.
	if tr.First.External != "trailer-1" || tr.Latest.Text != "Noted: the trailer on Monday." ||
		!tr.Last.Equal(time.Date(2026, 11, 7, 9, 0, 5, 0, time.UTC)) {
		t.Errorf("trailer = %+v", tr)
	}

	again := importFile(t, s, "pricing.jsonl")
	if want := (ImportSummary{Skipped: 5}); again != want {
		t.Errorf("second import: %+v, want %+v", again, want)
	}
	if c, _ := readGet(t, s, "pricing"); c.Count != 2 {
		t.Errorf("after a re-import pricing has %d messages, want 2", c.Count)
	}
}

func TestImportClaude(t *testing.T) {
	s := New(openDB(t), "personal").WithClock(clock(t0))
	sum := importFile(t, s, "claude-conversations.json")
	if want := (ImportSummary{Conversations: 2, Messages: 6}); sum != want {
		t.Errorf("first import: %+v, want %+v", sum, want)
	}
	recent, err := readRecent(t, s, 20, "")
	if err != nil {
		t.Fatal(err)
	}
	course, packing := "0b6f4c1e-7d2a-4e8b-9c61-3f5a2d8e1a01", "3a7c2e91-0f4d-4b6a-8e15-9d2c7b4f6a02"
	if want := []string{packing, course}; !slices.Equal(ids(recent), want) {
		t.Fatalf("Recent = %v, want %v", ids(recent), want)
	}
	c := recent[1]
	if c.Title != "Course outline" || c.Count != 2 || c.First.From != "person:ana" || c.First.To != "agent:claude" || c.Latest.From != "agent:claude" {
		t.Errorf("course = %+v", c)
	}
	if !c.Created.Equal(time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("course created %s, want its created_at", c.Created)
	}
	msgs, _, err := readPage(t, s, course, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Draft an outline for a five-lesson course on sourdough.",
		"Let me check what you already wrote.\n\n1. The starter\n2. Mixing\n3. Folding\n4. Shaping\n5. Baking",
	}
	if !slices.Equal(texts(msgs), want) {
		t.Errorf("course page = %q, want %q", texts(msgs), want)
	}
	if p := recent[0]; p.Title != "Packing list" || p.First.Text != "What should I pack for two days of hiking?" {
		t.Errorf("packing = %+v (text falls back to the message's text when content is empty)", p)
	}

	// The tool steps are kept, privately.
	err = s.db.View(t.Context(), func(tx kv.Tx) error {
		b := readView(tx, "personal").private.Bucket([]byte(course))
		var got []string
		_ = b.ForEach(func(k, v []byte) error {
			m, err := decodeMessage(k, v)
			if err != nil {
				return err
			}
			got = append(got, m.Text)
			return nil
		})
		want := []string{`tool_use search_notes {"query":"sourdough"}`, "tool_result notes/bread.md: starter at 1:1:1"}
		if !slices.Equal(got, want) {
			t.Errorf("private steps = %q, want %q", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	again := importFile(t, s, "claude-conversations.json")
	if want := (ImportSummary{Skipped: 6}); again != want {
		t.Errorf("second import: %+v, want %+v", again, want)
	}
}

func TestImportBadLine(t *testing.T) {
	ctx := t.Context()
	s := New(openDB(t), "personal")
	in := `{"conversation":"a","from":"person:ana","text":"one"}
{"conversation":"b","from":"person:ana","text":"two"}
{"conversation":"a","from":"ana","text":"three"}
{"conversation":"a","from":"person:ana","text":"four"}
`
	_, err := s.Import(ctx, strings.NewReader(in), "ana", nil)
	var ie *ImportError
	if !errors.As(err, &ie) || ie.Line != 3 || !strings.Contains(err.Error(), "line 3") || !errors.Is(err, spaces.ErrBadActor) {
		t.Fatalf("Import = %v, want an error naming line 3 and the bad actor", err)
	}
	if got, _ := readRecent(t, s, 10, ""); len(got) != 0 {
		t.Errorf("after a failed import, Recent = %v, want nothing", ids(got))
	}
	if _, err := readGet(t, s, "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after a failed import, Get(a) = %v, want ErrNotFound", err)
	}
}

func TestImportErrors(t *testing.T) {
	ctx := t.Context()
	ok := `{"conversation":"c","from":"person:ana","text":"fine"}` + "\n"
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"type", ok + `{"conversation":"c","from":"person:ana","text":5}`, []string{"line 2", `"text" must be a string, got a number`}},
		{"private type", `{"conversation":"c","from":"person:ana","text":"x","private":"yes"}`, []string{"line 1", `"private"`}},
		{"unknown", `{"conversation":"c","from":"person:ana","text":"x","txt":"y","when":1}`, []string{"line 1", `unknown fields "txt", "when"`}},
		{"missing", ok + ok + `{"conversation":"c","text":"x"}`, []string{"line 3", `"from" is missing`}},
		{"bare from", `{"conversation":"c","from":"ana","text":"x"}`, []string{"line 1", `"from"`, "person:<id>"}},
		{"bad to", `{"conversation":"c","from":"agent:north","to":"north","text":"x"}`, []string{"line 1", `"to"`}},
		{"empty text", `{"conversation":"c","from":"agent:north","text":""}`, []string{"line 1", `"text"`}},
		{"bad at", `{"conversation":"c","from":"agent:north","text":"x","at":"yesterday"}`, []string{"line 1", `"at"`, "RFC 3339"}},
		{"old at", `{"conversation":"c","from":"agent:north","text":"x","at":"1969-12-31T23:59:59Z"}`, []string{"line 1", `"at"`, "1970"}},
		{"bad id", `{"conversation":"","from":"agent:north","text":"x"}`, []string{"line 1", `"conversation"`}},
		{"not an object", ok + "\n" + `"just a string"`, []string{"line 3", "one JSON object"}},
		{"not JSON", ok + `{"conversation":`, []string{"line 2", "not valid JSON"}},
		{"long line", ok + `{"conversation":"c","from":"person:ana","text":"` + strings.Repeat("x", maxLine) + `"}`, []string{"line 2", "16 MiB"}},
		{"long text", ok + `{"conversation":"c","from":"person:ana","text":"` + strings.Repeat("x", MaxText+1) + `"}`, []string{"line 2", `"text"`, "8 MiB"}},
		{"claude sender", `[{"uuid":"u1","chat_messages":[]},{"uuid":"u2","chat_messages":[{"sender":"bot","text":"x"}]}]`, []string{"conversation at index 1", "message at index 0", `"bot"`}},
		{"claude type", `[{"uuid":"u1","chat_messages":[{"sender":"human","text":7}]}]`, []string{"conversation at index 0", "chat_messages.text"}},
		{"claude uuid", `[{"uuid":"u1"},{"name":"no uuid"}]`, []string{"conversation at index 1", "uuid"}},
		{"claude trailing", `[] x`, []string{"Claude export", "more after the array"}},
		{"claude truncated", `[{"uuid":"u1"}`, []string{"Claude export"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(openDB(t), "personal")
			_, err := s.Import(ctx, strings.NewReader(tc.in), "ana", nil)
			var ie *ImportError
			if !errors.As(err, &ie) {
				t.Fatalf("Import = %v, want an *ImportError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Import = %v, want it to say %s", truncate(err.Error(), 300), w)
				}
			}
			if got, _ := readRecent(t, s, 10, ""); len(got) != 0 {
				t.Errorf("after a failed import, Recent = %v", ids(got))
			}
		})
	}
}

func TestImportIdenticalLines(t *testing.T) {
	ctx := t.Context()
	s := New(openDB(t), "personal").WithClock(clock(t0))
	in := "\uFEFF" + strings.Repeat(`{"conversation":"c","from":"person:ana","text":"ok"}`+"\r\n", 2) + "\n   \n" +
		`{"conversation":"c","from":"person:ana","text":"ok","at":"2026-11-08T10:00:00Z"}`
	sum, err := s.Import(ctx, strings.NewReader(in), "ana", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ImportSummary{Conversations: 1, Messages: 3}); sum != want {
		t.Errorf("import: %+v, want %+v (identical lines are each a message)", sum, want)
	}
	sum, err = s.Import(ctx, strings.NewReader(in), "ana", nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ImportSummary{Skipped: 3}); sum != want {
		t.Errorf("re-import: %+v, want %+v", sum, want)
	}
}

func TestImportProgress(t *testing.T) {
	ctx := t.Context()
	s := New(openDB(t), "personal").WithClock(clock(t0))
	var in bytes.Buffer
	for i := range 2500 {
		fmt.Fprintf(&in, `{"conversation":"c%d","from":"person:ana","text":"m%d"}`+"\n", i%7, i)
	}
	var calls []int
	sum, err := s.Import(ctx, &in, "", func(done int) { calls = append(calls, done) })
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1000, 2000, 2500}; !slices.Equal(calls, want) {
		t.Errorf("progress calls %v, want %v", calls, want)
	}
	if sum.Conversations != 7 || sum.Messages != 2500 {
		t.Errorf("import: %+v", sum)
	}
}

func TestImportClaudeNeedsMe(t *testing.T) {
	ctx := t.Context()
	s := New(openDB(t), "personal")
	for _, me := range []string{"", "agent:north"} {
		if _, err := s.Import(ctx, strings.NewReader(`[]`), me, nil); err == nil {
			t.Errorf("Import of a Claude export with me %q: no error", me)
		}
	}
}

// go test -fuzz=FuzzImportJSONL ./threads
func FuzzImportJSONL(f *testing.F) {
	if seed, err := os.ReadFile(filepath.Join("..", "testdata", "import", "pricing.jsonl")); err == nil {
		f.Add(seed)
	}
	f.Add([]byte(`{"conversation":"c","from":"person:ana","text":"x"}` + "\n" + `{"conversation":"c","from":"ana","text":"x"}`))
	f.Add([]byte(`{"conversation":"c","from":"agent:n","text":"x","id":"1","private":true,"at":"2026-01-01T00:00:00.5+02:00"}`))
	f.Add([]byte("\n\n{\"text\":5}\r\n"))
	db := openDB(f)
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, in []byte) {
		if looksClaude(in) {
			t.Skip("a Claude export, not JSON Lines")
		}
		s := New(db, fmt.Sprintf("fuzz%d", n.Add(1))).WithClock(func() time.Time { return t0 })
		importTwice(t, s, in, func(ie *ImportError, err error) bool {
			return ie.Line >= 1 && strings.HasPrefix(err.Error(), fmt.Sprintf("line %d: ", ie.Line))
		})
	})
}

// looksClaude is Import's test for a Claude export, on bytes.
func looksClaude(in []byte) bool {
	in = bytes.TrimPrefix(in, []byte("\uFEFF"))
	in = bytes.TrimLeft(in, " \t\r\n")
	return len(in) > 0 && in[0] == '['
}

// importTwice imports in: a refusal must be an *ImportError whose place placed accepts,
// and leave nothing behind; an import done again must add nothing.
func importTwice(t *testing.T, s *Store, in []byte, placed func(*ImportError, error) bool) {
	t.Helper()
	ctx := t.Context()
	sum, err := s.Import(ctx, bytes.NewReader(in), "ana", nil)
	if err != nil {
		var ie *ImportError
		if !errors.As(err, &ie) || !placed(ie, err) {
			t.Fatalf("Import error %q does not say where", err)
		}
		if got, _ := readRecent(t, s, 1, ""); len(got) != 0 {
			t.Fatalf("a failed import left %v", ids(got))
		}
		return
	}
	again, err := s.Import(ctx, bytes.NewReader(in), "ana", nil)
	if err != nil {
		t.Fatalf("re-import failed: %v", err)
	}
	if again.Messages != 0 || again.Skipped != sum.Messages+sum.Skipped {
		t.Fatalf("re-import %+v after %+v: want every message skipped", again, sum)
	}
}

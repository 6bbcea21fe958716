package claudecode

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

const (
	ccTrailer = "3f2b9e14-8a6c-4d21-b7e0-5c9a1d3f6e02" // old shape: string content, a summary, a half-written last line
	ccPricing = "7c1d0a52-5b8e-4f7a-9d3c-2e6f1a8b4c07" // new shape: blocks, thinking, tools, images, a sub-agent, odd lines
	ccNotes   = "e91a7b40-2c3d-4e5f-8a9b-0c1d2e3f4a05" // another project: a custom title, a line without a time
)

// ccFixtures copies testdata/import/claude-code to a temporary folder (tests append to it).
func ccFixtures(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "..", "testdata", "import", "claude-code")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func openDB(tb testing.TB) kv.DB { return kvtest.Open(tb) }

func ccImporter(t testing.TB, s *threads.Store, dir, project string) *Importer {
	t.Helper()
	cc, err := New(s, Options{Dir: dir, Project: project, Me: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	return cc
}

func pass(t testing.TB, cc *Importer) Summary {
	t.Helper()
	sum, err := cc.Pass(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// inView reads with fn in a View of its own: a test's read, in one snapshot. fn may run
// more than once (kv.DB.View); what inView returns is its last run's.
func inView[T any](tb testing.TB, s *threads.Store, fn func(*threads.Reader) (T, error)) (T, error) {
	tb.Helper()
	return threads.ReadIn(tb.Context(), s, fn)
}

// readGet is conversation id's summary, read in a View of its own.
func readGet(tb testing.TB, s *threads.Store, id string) (threads.Conversation, error) {
	tb.Helper()
	return inView(tb, s, func(r *threads.Reader) (threads.Conversation, error) { return r.Get(id) })
}

// pageOf is what Page shows of a conversation, one "from: text" a message.
func pageOf(t testing.TB, s *threads.Store, conv string) []string {
	t.Helper()
	msgs, err := inView(t, s, func(r *threads.Reader) ([]threads.Message, error) {
		msgs, _, err := r.Page(conv, 500, "")
		return msgs, err
	})
	if err != nil {
		t.Fatalf("Page(%s): %v", conv, err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, m.From+": "+m.Text)
	}
	return out
}

// privateTexts is every private step of conv, in order. No read of threads.Reader returns
// one (none that reads for people may), so this reads them where threads keeps them (see
// its Layout: conversations/private/<conversation id>/<ULID>, a JSON record each).
func privateTexts(t testing.TB, db kv.DB, space, conv string) []string {
	t.Helper()
	var out []string
	err := db.View(t.Context(), func(tx kv.Tx) error {
		out = out[:0] // the View may run again
		root := spaces.Sub(tx, space, "conversations")
		if root == nil {
			return nil
		}
		var b kv.Bucket
		if priv := root.Bucket([]byte("private")); priv != nil {
			b = priv.Bucket([]byte(conv))
		}
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, val []byte) error {
			var m struct{ From, Text string }
			err := json.Unmarshal(val, &m)
			out = append(out, m.From+": "+m.Text)
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The fixtures give three conversations: the person's prompts and the assistant's text are
// public; tool steps, thinking, meta notes, command wrappers, a compaction's summary and the
// sub-agent's whole transcript are private; other records and a line that isn't JSON are
// skipped; the half-written last line waits. A second pass adds nothing.
func TestClaudeCodeImport(t *testing.T) {
	db := openDB(t)
	s := threads.New(db, "personal")
	dir := ccFixtures(t)
	sum := pass(t, ccImporter(t, s, dir, ""))
	if want := (Summary{Files: 4, Conversations: 3, Messages: 27, Unreadable: 1}); sum != want {
		t.Errorf("first pass: %+v, want %+v", sum, want)
	}
	want := map[string][]string{
		ccTrailer: {
			"person:ana: When do we record the trailer?",
			"agent:claude-code: Tuesday morning, per the launch plan.",
			"person:ana: Move it to Monday.",
			"agent:claude-code: Done: the trailer is on Monday.",
		},
		ccPricing: {
			"person:ana: Check the pricing page against the plan, and fix the typo in   the header.\nThe screenshot is attached.\n\n[image]",
			"agent:claude-code: I'll read the pricing page first.",
			"agent:claude-code: The page says 12 a month, as the plan does. I fixed the header:\n\n`# Pricng` is now `# Pricing`.",
			"person:ana: Thanks. Keep the price at 12.",
			"agent:claude-code: Kept at 12.",
		},
	}
	for conv, w := range want {
		if got := pageOf(t, s, conv); !slices.Equal(got, w) {
			t.Errorf("%s reads\n%q\nwant\n%q", conv, got, w)
		}
	}
	priv := privateTexts(t, db, "personal", ccPricing)
	for _, p := range []string{
		"person:ana: <command-name>/clear</command-name>",
		"person:ana: Caveat: The messages below",
		"agent:claude-code: thinking The user wants the pricing page checked.",
		"agent:claude-code: tool_use Read {\"file_path\":\"/home/ana/launch/pricing.md\"}",
		"person:ana: tool_result      1\t# Pricng",
		"person:ana: tool_result Screenshot of /pricing\n[image]",
		"person:ana: This session is being continued",
		"agent:claude-code: thinking (redacted)",
		"person:ana: Read plan.md and list the prices it names.", // the sub-agent's task
		"agent:claude-code: The plan names 12 a month.",          // and its answer
	} {
		if !slices.ContainsFunc(priv, func(s string) bool { return strings.HasPrefix(s, p) }) {
			t.Errorf("no private step starting %q among\n%q", p, priv)
		}
	}
	if len(priv) != 15 {
		t.Errorf("%d private steps in %s, want 15: %q", len(priv), ccPricing, priv)
	}
	for conv, title := range map[string]string{
		ccTrailer: "Trailer recording plan",
		ccPricing: "Check the pricing page against the plan, and fix the typo in the header.",
		ccNotes:   "Course page notes",
	} {
		if c, err := readGet(t, s, conv); err != nil || c.Title != title {
			t.Errorf("%s: title %q (%v), want %q", conv, c.Title, err, title)
		}
	}
	// The line without a time takes the one before it; +01:00 is read as such.
	notes, _ := inView(t, s, func(r *threads.Reader) ([]threads.Message, error) {
		notes, _, err := r.Page(ccNotes, 10, "")
		return notes, err
	})
	if len(notes) != 3 || !notes[0].At.Equal(time.Date(2026, 11, 9, 7, 30, 0, 0, time.UTC)) || !notes[2].At.Equal(notes[1].At) {
		t.Errorf("notes: %+v", notes)
	}

	again := pass(t, ccImporter(t, s, dir, ""))
	if again != (Summary{}) {
		t.Errorf("a second importer read again what was read: %+v", again)
	}
}

// --project keeps to one project's sessions, named by its path or by its folder.
func TestClaudeCodeProject(t *testing.T) {
	dir := ccFixtures(t)
	for _, project := range []string{"/home/ana/notes", "-home-ana-notes"} {
		s := threads.New(openDB(t), "personal")
		pass(t, ccImporter(t, s, dir, project))
		recent, err := inView(t, s, func(r *threads.Reader) ([]threads.Conversation, error) { return r.Recent(10, "") })
		if err != nil {
			t.Fatal(err)
		}
		if len(recent) != 1 || recent[0].ID != ccNotes {
			t.Errorf("--project %s imported %v", project, recent)
		}
	}
}

// A half-written last line is read once it is whole, a file that shrinks or is replaced is
// read again from its start, and nothing is added twice.
func TestClaudeCodeGrowTruncateReplace(t *testing.T) {
	db := openDB(t)
	s := threads.New(db, "personal")
	dir := ccFixtures(t)
	cc := ccImporter(t, s, dir, "")
	pass(t, cc)
	file := filepath.Join(dir, "-home-ana-launch", ccTrailer+".jsonl")
	appendTo(t, file, ` be the trailer's first frame."},"uuid":"a0000000-0000-4000-8000-000000000005","timestamp":"2026-11-07T09:02:00.000Z"}`+"\n")
	if sum := pass(t, cc); sum.Messages != 1 || sum.Files != 1 || sum.Skipped != 0 {
		t.Errorf("after the line was finished: %+v", sum)
	}
	got := pageOf(t, s, ccTrailer)
	if last := got[len(got)-1]; last != "person:ana: And the thumbnail? It should be the trailer's first frame." {
		t.Errorf("the finished line reads %q", last)
	}

	// Truncated to its first two lines, then grown with one new line: read again from the
	// start, the old lines found there already, the new one added.
	b, _ := os.ReadFile(file)
	lines := strings.SplitAfter(string(b), "\n")
	head := strings.Join(lines[:2], "")
	if err := os.WriteFile(file, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if sum := pass(t, cc); sum.Messages != 0 || sum.Skipped != 1 {
		t.Errorf("after truncating: %+v", sum)
	}
	appendTo(t, file, ccLine(ccTrailer, "user", "a0000000-0000-4000-8000-000000000006", "2026-11-07T09:03:00Z", "Thumbnail done.")+"\n")
	if sum := pass(t, cc); sum.Messages != 1 || sum.Skipped != 0 {
		t.Errorf("after growing again: %+v", sum)
	}

	// Replaced by a file of the same length whose first bytes differ: read from the start.
	repl := strings.Replace(head+ccLine(ccTrailer, "user", "a0000000-0000-4000-8000-000000000006", "2026-11-07T09:03:00Z", "Thumbnail done.")+"\n", "When do we record the trailer?", "When do we record the TRAILER?", 1)
	repl = strings.Replace(repl, "a0000000-0000-4000-8000-000000000001", "a0000000-0000-4000-8000-0000000000f1", 1)
	if err := os.WriteFile(file+".new", []byte(repl), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file+".new", file); err != nil {
		t.Fatal(err)
	}
	if sum := pass(t, cc); sum.Messages != 1 || sum.Skipped != 1 {
		t.Errorf("after replacing: %+v", sum)
	}
	got = pageOf(t, s, ccTrailer)
	if !slices.Contains(got, "person:ana: When do we record the TRAILER?") || len(got) != 7 {
		t.Errorf("after replacing, the conversation reads %q", got)
	}
}

func appendTo(t testing.TB, file, text string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// ccLine is one transcript line of a user's prompt (string content) or an assistant's text (blocks).
func ccLine(session, typ, uuid, at, text string) string {
	if typ == "user" {
		return fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"sessionId":%q,"type":"user","message":{"role":"user","content":%q},"uuid":%q,"timestamp":%q}`, session, text, uuid, at)
	}
	return fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"sessionId":%q,"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":%q}]},"uuid":%q,"timestamp":%q}`, session, text, uuid, at)
}

// Following: lines appended to a transcript, and a new session's, are in the store within
// a second; a follower started again reads nothing twice.
func TestClaudeCodeFollow(t *testing.T) {
	db := openDB(t)
	s := threads.New(db, "personal")
	dir := ccFixtures(t)
	f := follow(t, s, dir, 200*time.Millisecond)
	waitFor := func(conv, text string) {
		t.Helper()
		t.Logf("%q seen after %v", text, f.waitLatest(conv, text, time.Second).Round(time.Millisecond))
	}
	file := filepath.Join(dir, "-home-ana-notes", ccNotes+".jsonl")
	waitFor(ccNotes, "which three?")
	for i := range 3 {
		text := fmt.Sprintf("Answer %d.", i)
		appendTo(t, file, ccLine(ccNotes, "assistant", fmt.Sprintf("f0000000-0000-4000-8000-00000000000%d", i), "2026-11-09T07:40:0"+fmt.Sprint(i)+"Z", text)+"\n")
		waitFor(ccNotes, text)
	}
	// A new project and session, made while following.
	newDir := filepath.Join(dir, "-home-ana-new")
	if err := os.Mkdir(newDir, 0o755); err != nil {
		t.Fatal(err)
	}
	appendTo(t, filepath.Join(newDir, "11111111-2222-4333-8444-555555555555.jsonl"), ccLine("11111111-2222-4333-8444-555555555555", "user", "g1", "2026-11-10T08:00:00Z", "A new session.")+"\n")
	waitFor("11111111-2222-4333-8444-555555555555", "A new session.")
	if err := f.stop(10 * time.Second); err != nil {
		t.Error(err)
	}

	// Started again, with a line written while it was stopped: that line only is read.
	appendTo(t, file, ccLine(ccNotes, "user", "f0000000-0000-4000-8000-000000000010", "2026-11-09T07:50:00Z", "While it was stopped.")+"\n")
	sum := pass(t, ccImporter(t, s, dir, ""))
	if want := (Summary{Files: 1, Conversations: 1, Messages: 1}); sum != want {
		t.Errorf("after a restart: %+v, want %+v", sum, want)
	}
}

// importedLine is what Follow logs after a pass that imported something, once the pass has
// written it: what a test of a follower waits for, rather than the clock.
const importedLine = "imported from Claude Code"

// follower is a Follow under way in a test, its log telling of each pass that imported.
type follower struct {
	t        *testing.T
	s        *threads.Store
	imported chan struct{} // a token after a pass logged importedLine (one for all not yet taken)
	cancel   context.CancelFunc
	done     chan error
	stopped  bool  // stop was called
	err      error // what Follow returned
}

// follow starts a follower of dir into s that looks at every file each poll (with file
// notifications: each rescan), stopped when the test ends.
func follow(t *testing.T, s *threads.Store, dir string, poll time.Duration) *follower {
	t.Helper()
	f := &follower{t: t, s: s, imported: make(chan struct{}, 1), done: make(chan error, 1)}
	cc, err := New(s, Options{Dir: dir, Me: "ana", Log: slog.New(passLog(f.imported))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	go func() { f.done <- cc.Follow(ctx, poll) }()
	t.Cleanup(func() { f.stop(10 * time.Second) })
	return f
}

// stop tells the follower to stop and returns what Follow returned, failing the test if it
// did not return within.
func (f *follower) stop(within time.Duration) error {
	f.t.Helper()
	if f.stopped {
		return f.err
	}
	f.stopped = true // told once: a follower that did not stop is not waited for again
	f.cancel()
	select {
	case f.err = <-f.done:
	case <-time.After(within):
		f.t.Fatalf("the follower did not stop within %v of being told to", within)
	}
	return f.err
}

// waitPass waits for a pass that imported something, failing the test if none did within.
func (f *follower) waitPass(within time.Duration) {
	f.t.Helper()
	select {
	case <-f.imported:
	case <-time.After(within):
		f.t.Fatalf("no pass of the follower said %q within %v", importedLine, within)
	}
}

// waitLatest waits for conv's latest message to be text, looking again after each pass
// that imported something, and returns how long it waited; it fails the test if the
// message is not there within.
func (f *follower) waitLatest(conv, text string, within time.Duration) time.Duration {
	f.t.Helper()
	start := time.Now()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		if c, err := readGet(f.t, f.s, conv); err == nil && c.Latest.Text == text {
			return time.Since(start)
		}
		select {
		case <-f.imported:
		case <-deadline.C:
			if c, err := readGet(f.t, f.s, conv); err == nil && c.Latest.Text == text {
				f.t.Fatalf("%q imported, but no pass said %q within %v", text, importedLine, within)
			}
			f.t.Fatalf("%q not imported within %v", text, within)
		}
	}
}

// passLog is a log that drops what it is told but importedLine, for which it leaves a
// token on its channel (if none is there yet).
type passLog chan struct{}

func (p passLog) Enabled(context.Context, slog.Level) bool { return true }
func (p passLog) WithAttrs([]slog.Attr) slog.Handler       { return p }
func (p passLog) WithGroup(string) slog.Handler            { return p }

func (p passLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == importedLine {
		select {
		case p <- struct{}{}:
		default:
		}
	}
	return nil
}

// A transcript longer than the head that is hashed, cut back to a part still longer than it
// (so its first bytes are the same), then grown again past where it was read to, all between
// two looks: every line written after the cut is read, none that was read before is added
// twice. Cut back without growing past, the next line is read too.
func TestClaudeCodeTruncatedPastTheHead(t *testing.T) {
	db := openDB(t)
	s := threads.New(db, "personal")
	dir := t.TempDir()
	proj := filepath.Join(dir, "-home-ana-long")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	const session = "22222222-3333-4444-8555-666666666666"
	file := filepath.Join(proj, session+".jsonl")
	line := func(i int, text string) string {
		return ccLine(session, "user", fmt.Sprintf("b0000000-0000-4000-8000-%012d", i), fmt.Sprintf("2026-11-12T08:%02d:00Z", i), text) + "\n"
	}
	var kept string
	for i := range 20 {
		appendTo(t, file, line(i, fmt.Sprintf("Line %d.", i)))
		if i == 9 {
			b, _ := os.ReadFile(file)
			kept = string(b)
		}
	}
	if len(kept) <= headSize {
		t.Fatalf("the first ten lines are %d bytes: not past the head's %d", len(kept), headSize)
	}
	cc := ccImporter(t, s, dir, "")
	if sum := pass(t, cc); sum.Messages != 20 {
		t.Fatalf("first pass: %+v", sum)
	}

	// Cut back to ten lines, then one more: shorter than what was read.
	if err := os.WriteFile(file, []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	appendTo(t, file, line(20, "After the cut."))
	if sum := pass(t, cc); sum.Messages != 1 {
		t.Errorf("after cutting back and one line: %+v, want that line", sum)
	}

	// Cut back again, then grown past where it was read with other lines.
	if err := os.WriteFile(file, []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 30; i < 45; i++ {
		appendTo(t, file, line(i, fmt.Sprintf("Rewritten %d.", i)))
	}
	if sum := pass(t, cc); sum.Messages != 15 || sum.Skipped != 10 {
		t.Errorf("after cutting back and growing past: %+v, want the 15 new lines added and the 10 kept skipped", sum)
	}
	if got := pageOf(t, s, session); len(got) != 36 || got[len(got)-1] != "person:ana: Rewritten 44." {
		t.Errorf("the conversation has %d messages, last %q", len(got), got[len(got)-1])
	}
}

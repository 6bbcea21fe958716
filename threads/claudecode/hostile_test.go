//go:build unix

package claudecode

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/threads"
)

// syncBuffer is a log's buffer that the importer's workers and the test may use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func loggedImporter(t testing.TB, s *threads.Store, dir string) (*Importer, *syncBuffer) {
	t.Helper()
	var logs syncBuffer
	cc, err := New(s, Options{Dir: dir, Me: "ana", Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return cc, &logs
}

// mkfifo makes a FIFO at path, and, when the test ends, opens it for writing (which lets a
// reader blocked in open go on, so that a failing test doesn't leave it stuck).
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}

// A FIFO named like a transcript (mkfifo ~/.claude/projects/p/zz.jsonl) is not read: a pass
// returns at once, says on the log which file it skipped, and imports the good transcripts
// beside it. A follower stops when told to.
func TestClaudeCodeFIFO(t *testing.T) {
	s := threads.New(openDB(t), "personal")
	dir := ccFixtures(t)
	fifo := filepath.Join(dir, "-home-ana-launch", "zz.jsonl")
	mkfifo(t, fifo)
	cc, logs := loggedImporter(t, s, dir)
	done := make(chan Summary, 1)
	go func() { done <- pass(t, cc) }()
	select {
	case sum := <-done:
		if sum.Files != 4 || sum.Messages != 27 {
			t.Errorf("beside the FIFO, the pass imported %+v, want the 4 transcripts' 27 messages", sum)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a pass over a folder with a FIFO did not return within 10 s")
	}
	if !strings.Contains(logs.String(), "zz.jsonl") || !strings.Contains(logs.String(), "not a regular file") {
		t.Errorf("the log doesn't say the FIFO was skipped:\n%s", logs)
	}
	if c, err := readGet(t, s, ccTrailer); err != nil || c.Count != 4 {
		t.Errorf("the trailer session beside the FIFO: %+v, %v", c, err)
	}
	// Said once, not at every pass.
	pass(t, cc)
	if n := strings.Count(logs.String(), "zz.jsonl"); n != 1 {
		t.Errorf("the FIFO is named %d times in the log after two passes, want once:\n%s", n, logs)
	}

	// A follower that has passed over the folder (its store is new: the pass imports the
	// transcripts beside the FIFO, and says so) stops when told to.
	f := follow(t, threads.New(openDB(t), "personal"), dir, 50*time.Millisecond)
	f.waitPass(10 * time.Second)
	if err := f.stop(5 * time.Second); err != nil {
		t.Error(err)
	}
}

// A transcript made sparse (truncate -s 4G x.jsonl) costs next to nothing to pass over: its
// hole is no line, and what is written after it is read. Before, a pass read the 4 GiB
// (7.8 s of one core).
func TestClaudeCodeSparse(t *testing.T) {
	s := threads.New(openDB(t), "personal")
	dir := ccFixtures(t)
	const session = "33333333-4444-4555-8666-777777777777"
	file := filepath.Join(dir, "-home-ana-launch", session+".jsonl")
	appendTo(t, file, ccLine(session, "user", "c0000000-0000-4000-8000-000000000001", "2026-11-12T08:00:00Z", "Before the hole.")+"\n")
	if err := os.Truncate(file, 4<<30); err != nil {
		t.Fatal(err)
	}
	appendTo(t, file, "\n"+ccLine(session, "user", "c0000000-0000-4000-8000-000000000002", "2026-11-12T08:01:00Z", "After the hole.")+"\n")
	cc := ccImporter(t, s, dir, "")
	before := cpuNow(t)
	start := time.Now()
	sum := pass(t, cc)
	cpu := cpuNow(t) - before
	t.Logf("a pass over a 4 GiB sparse transcript and the fixtures: %v of CPU, %v", cpu.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if cpu > 500*time.Millisecond {
		t.Errorf("the pass took %v of CPU, want under 0.5 s", cpu)
	}
	if got := pageOf(t, s, session); len(got) != 2 || got[1] != "person:ana: After the hole." {
		t.Errorf("the sparse transcript reads %q", got)
	}
	if sum.Unreadable != 2 { // the fixtures' line, and the hole
		t.Errorf("%+v: want 2 lines unreadable", sum)
	}
}

// One pass reads at most about passBudget bytes of a file (the rest is left to the next),
// however much was written; the import of the other files doesn't wait for it, and
// following, the next pass comes at once.
func TestClaudeCodePassBudget(t *testing.T) {
	b := passBudget
	t.Cleanup(func() { passBudget = b }) // after the follower's cleanup has stopped it
	passBudget = 256 << 10
	s := threads.New(openDB(t), "personal")
	dir := ccFixtures(t)
	const session = "44444444-5555-4666-8777-888888888888"
	file := filepath.Join(dir, "-home-ana-launch", session+".jsonl")
	var lines strings.Builder
	for i := range 4000 {
		lines.WriteString(ccLine(session, "user", fmt.Sprintf("d0000000-0000-4000-8000-%012d", i), "2026-11-12T08:00:00Z", fmt.Sprintf("Line %d, long enough to count: %s.", i, strings.Repeat("x", 200))) + "\n")
	}
	appendTo(t, file, lines.String())
	size := int64(lines.Len())
	cc := ccImporter(t, s, dir, "")
	first := pass(t, cc)
	if first.Pending != 1 || first.Messages >= 4000 {
		t.Fatalf("the first pass over %d bytes with a budget of %d: %+v, want the file left pending", size, passBudget, first)
	}
	if c, err := readGet(t, s, ccTrailer); err != nil || c.Count != 4 {
		t.Errorf("the other sessions wait for the long one: %+v, %v", c, err)
	}
	passes, total := 1, first.Messages
	for sum := first; sum.Pending > 0; passes++ {
		sum = pass(t, cc)
		total += sum.Messages
		if passes > 100 {
			t.Fatal("no end of passes")
		}
	}
	if total != 4000+27 || passes < int(size/passBudget) {
		t.Errorf("%d passes imported %d messages; want %d in at least %d", passes, total, 4000+27, size/passBudget)
	}

	// Following, the passes come one after the other, not a rescan apart.
	f := follow(t, threads.New(openDB(t), "personal"), dir, time.Hour)
	f.waitLatest(session, fmt.Sprintf("Line 3999, long enough to count: %s.", strings.Repeat("x", 200)), 10*time.Second)
}

// A transcript's line can't write into a conversation that Claude Code's import did not
// make: a sessionId that isn't a Claude Code session's (a UUID) is no session, and a
// session id naming a conversation made otherwise is refused, said on the log. Before, a
// line with "sessionId":"slack-pricing" was appended to the chat bridge's #pricing.
func TestClaudeCodeForeignConversation(t *testing.T) {
	ctx := t.Context()
	s := threads.New(openDB(t), "personal")
	const taken = "55555555-6666-4777-8888-999999999999" // a UUID, but the chat's
	for _, id := range []string{"slack-pricing", taken} {
		if _, err := s.Say(ctx, id, "#pricing", threads.Message{At: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), From: "person:bo", Text: "We settled on 12 a month."}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	proj := filepath.Join(dir, "-home-ana-x")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	const own = "66666666-7777-4888-8999-aaaaaaaaaaaa"
	appendTo(t, filepath.Join(proj, own+".jsonl"),
		ccLine("slack-pricing", "user", "e0000000-0000-4000-8000-000000000001", "2026-11-12T08:00:00Z", "Price is 0 now.")+"\n"+
			`{"type":"summary","summary":"Hijacked","sessionId":"slack-pricing"}`+"\n"+
			ccLine(taken, "assistant", "e0000000-0000-4000-8000-000000000002", "2026-11-12T08:01:00Z", "Confirmed: 0.")+"\n")
	cc, logs := loggedImporter(t, s, dir)
	pass(t, cc)
	for _, id := range []string{"slack-pricing", taken} {
		if c, err := readGet(t, s, id); err != nil || c.Count != 1 || c.Title != "#pricing" {
			t.Errorf("%s after the import: %+v, %v", id, c, err)
		}
	}
	if got := pageOf(t, s, own); len(got) != 1 || got[0] != "person:ana: Price is 0 now." {
		t.Errorf("the transcript's own session reads %q: want the line whose sessionId is no session's", got)
	}
	if !strings.Contains(logs.String(), taken) {
		t.Errorf("the log doesn't say %s was refused:\n%s", taken, logs)
	}
}

// cpuNow is the CPU time (user and system) this process has used.
func cpuNow(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Stopping a follower that is stuck (here: waiting for the store, which another writer
// holds) returns within its grace, and says it left the follower; one that isn't stops.
func TestClaudeCodeStopDeadline(t *testing.T) {
	db := openDB(t)
	w := &writeAsked{DB: db, asked: make(chan struct{})}
	s := threads.New(w, "personal")
	dir := ccFixtures(t)
	held, hold := make(chan struct{}), make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release) // before the store is closed, which waits for the writer
	go db.Update(t.Context(), func(kv.Tx) error {
		close(held)
		<-hold
		return nil
	})
	<-held
	cc, logs := loggedImporter(t, s, dir)
	stop := cc.Start(context.Background(), time.Hour)
	t.Cleanup(func() { release(); stop(5 * time.Second) })
	select {
	case <-w.asked: // read, and waiting to write (the write goes on when its context ends)
	case <-time.After(10 * time.Second):
		t.Fatal("the follower did not come to write what it read within 10 s")
	}
	start := time.Now()
	if stop(500 * time.Millisecond) {
		t.Error("stop reports a follower stuck in a write as stopped")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("stop took %v with a grace of 0.5 s", took)
	}
	if !strings.Contains(logs.String(), "did not stop in time") {
		t.Errorf("the log doesn't say the follower was left:\n%s", logs)
	}
	release()
	if !stop(5 * time.Second) {
		t.Error("the follower left did not end within 5 s of the store being free")
	}
	if !ccImporter(t, s, dir, "").Start(context.Background(), time.Hour)(5 * time.Second) {
		t.Error("a follower at rest did not stop within 5 s")
	}
}

// writeAsked is a store that says when a write transaction is first asked of it: from then
// on, the writer has the store's lock or waits for it.
type writeAsked struct {
	kv.DB
	once  sync.Once
	asked chan struct{} // closed at the first Update or Batch
}

func (w *writeAsked) Update(ctx context.Context, fn func(kv.Tx) error) error {
	w.once.Do(func() { close(w.asked) })
	return w.DB.Update(ctx, fn)
}

func (w *writeAsked) Batch(ctx context.Context, fn func(kv.Tx) error) error {
	w.once.Do(func() { close(w.asked) })
	return w.DB.Batch(ctx, fn)
}

// A transcript of written NUL bytes (no hole to skip: head -c 64M /dev/zero) costs a pass
// only what it reads of it, about passBudget; the line it is is skipped once its end comes.
func TestClaudeCodeZeros(t *testing.T) {
	s := threads.New(openDB(t), "personal")
	dir := ccFixtures(t)
	const session = "77777777-8888-4999-8aaa-bbbbbbbbbbbb"
	file := filepath.Join(dir, "-home-ana-launch", session+".jsonl")
	zeros := make([]byte, 64<<20)
	if err := os.WriteFile(file, append(zeros, "\n"+ccLine(session, "user", "f1000000-0000-4000-8000-000000000001", "2026-11-12T09:00:00Z", "After the zeros.")+"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	cc := ccImporter(t, s, dir, "")
	passes := 0
	var worst time.Duration
	for sum := (Summary{Pending: 1}); sum.Pending > 0; passes++ {
		before := cpuNow(t)
		sum = pass(t, cc)
		worst = max(worst, cpuNow(t)-before)
		if passes > 20 {
			t.Fatal("no end of passes")
		}
	}
	t.Logf("64 MiB of NUL bytes: %d passes, the costliest %v of CPU", passes, worst.Round(time.Millisecond))
	if passes < 64<<20/int(passBudget) || worst > 500*time.Millisecond {
		t.Errorf("%d passes, the costliest %v: want at least %d, each under 0.5 s", passes, worst, 64<<20/int(passBudget))
	}
	if got := pageOf(t, s, session); len(got) != 1 || got[0] != "person:ana: After the zeros." {
		t.Errorf("the transcript reads %q", got)
	}
}

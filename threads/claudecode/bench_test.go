//go:build unix

package claudecode

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/threads"
)

// ccCorpus writes sessions transcripts of lines lines each into a new folder of 10
// projects: a realistic mix of prompts, thinking, text, tool calls and results (some with
// images), sub-agent lines, and records that are skipped.
func ccCorpus(b *testing.B, sessions, lines int) string {
	b.Helper()
	dir := b.TempDir()
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for s := range sessions {
		proj := filepath.Join(dir, fmt.Sprintf("-home-ana-project%d", s%10))
		if err := os.MkdirAll(proj, 0o755); err != nil {
			b.Fatal(err)
		}
		session := fmt.Sprintf("%08x-0000-4000-8000-%012x", s, s)
		f, err := os.Create(filepath.Join(proj, session+".jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(f)
		for i := range lines {
			uuid := fmt.Sprintf("%08x-%04x-4000-8000-000000000000", s, i)
			ts := at.Add(time.Duration(s*lines+i) * time.Second).Format(time.RFC3339Nano)
			common := fmt.Sprintf(`"parentUuid":null,"isSidechain":%v,"userType":"external","cwd":"/home/ana/project","sessionId":%q,"version":"2.0.31","gitBranch":"main","uuid":%q,"timestamp":%q`, i%10 == 9, session, uuid, ts)
			switch i % 8 {
			case 0:
				fmt.Fprintf(w, `{%s,"type":"user","message":{"role":"user","content":"Prompt %d: please look at the pricing page again and tell me what changed since yesterday."}}`+"\n", common, i)
			case 1:
				fmt.Fprintf(w, `{%s,"type":"assistant","message":{"id":"msg_%d","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"I should read the page, then compare it with the plan before answering.","signature":"EqQBCkYIBxgCKkB"}],"usage":{"input_tokens":4,"output_tokens":120}}}`+"\n", common, i)
			case 2, 5:
				fmt.Fprintf(w, `{%s,"type":"assistant","message":{"id":"msg_%d","role":"assistant","content":[{"type":"tool_use","id":"toolu_%d","name":"Read","input":{"file_path":"/home/ana/project/pricing.md"}}]}}`+"\n", common, i, i)
			case 3:
				fmt.Fprintf(w, `{%s,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%d","type":"tool_result","content":"     1\t# Pricing\n     2\t12 a month, billed yearly; 15 billed monthly.\n     3\tTeams: ask."}]}}`+"\n", common, i-1)
			case 4:
				fmt.Fprintf(w, `{"type":"file-history-snapshot","messageId":%q,"snapshot":{"trackedFileBackups":{},"timestamp":%q},"isSnapshotUpdate":false}`+"\n", uuid, ts)
			case 6:
				fmt.Fprintf(w, `{%s,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%d","type":"tool_result","content":[{"type":"text","text":"Screenshot"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="}}]}]}}`+"\n", common, i-1)
			case 7:
				fmt.Fprintf(w, `{%s,"type":"assistant","message":{"id":"msg_%d","role":"assistant","content":[{"type":"text","text":"Answer %d: the yearly price stayed at 12 a month; the monthly one went from 14 to 15."}]}}`+"\n", common, i, i)
			}
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	return dir
}

// BenchmarkClaudeCodeImport imports 1,000 sessions of 1,000 lines each (the goal:
// within 10 s) into a new data file.
//
//	go test -run XXX -bench ClaudeCodeImport -benchtime 1x ./claudecode
func BenchmarkClaudeCodeImport(b *testing.B) {
	sessions, lines := 1000, 1000
	if testing.Short() {
		sessions, lines = 20, 100
	}
	dir := ccCorpus(b, sessions, lines)
	var cpu time.Duration
	for range b.N {
		b.StopTimer()
		s := threads.New(openDB(b), "bench")
		cc := ccImporter(b, s, dir, "")
		before := cpuTime(b)
		b.StartTimer()
		sum := pass(b, cc)
		b.StopTimer()
		cpu += cpuTime(b) - before
		if sum.Files != sessions || sum.Messages < sessions*lines*3/4 {
			b.Fatalf("%+v", sum)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(sessions*lines), "ns/line")
	// On a busy machine the wall time says more of the others than of the import: the CPU
	// time it took (on all cores together) says what it costs.
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkClaudeCodeFollowAtRest follows 1,000 imported sessions of 1,000 lines and
// measures the CPU the process uses while nothing changes for 10 s (the goal: at
// most 1% of a core), reported as "%core": woken by inotify, and looking every second (as
// where there are no file notifications).
//
//	go test -run XXX -bench ClaudeCodeFollowAtRest -benchtime 1x ./claudecode
func BenchmarkClaudeCodeFollowAtRest(b *testing.B) {
	sessions, lines, rest := 1000, 1000, 10*time.Second
	if testing.Short() {
		sessions, lines, rest = 20, 100, time.Second
	}
	dir := ccCorpus(b, sessions, lines)
	for _, poll := range []bool{false, true} {
		name := "notified"
		if poll {
			name = "polling"
		}
		b.Run(name, func(b *testing.B) { followAtRest(b, dir, sessions, rest, poll) })
	}
}

func followAtRest(b *testing.B, dir string, sessions int, rest time.Duration, poll bool) {
	s := threads.New(openDB(b), "bench")
	ended := make(chan struct{}, 1)
	cc, err := New(s, Options{Dir: dir, Me: "ana", NoNotify: poll, Log: slog.New(passEnds{ended})})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cc.Follow(ctx, time.Second) }()
	// Wait until a pass that read everything has ended (Follow says so once its writes are
	// done), after which the follower rests.
	last := fmt.Sprintf("%08x-0000-4000-8000-%012x", sessions-1, sessions-1)
	giveUp := time.After(10 * time.Minute)
	for {
		select {
		case <-ended:
		case <-giveUp:
			b.Fatal("the first pass did not end within 10 minutes")
		}
		if c, err := readGet(b, s, last); err == nil && c.Count > 0 {
			break
		}
	}
	b.ResetTimer()
	var share float64
	for range b.N {
		before := cpuTime(b)
		start := time.Now()
		// A genuine sleep (internal/style's TestNoSleeps allows it): what is measured is the
		// CPU the follower uses over a span of wall time in which nothing happens; no event
		// ends it, the time passing is the measurement.
		time.Sleep(rest)
		share = float64(cpuTime(b)-before) / float64(time.Since(start))
	}
	b.StopTimer()
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(share*100, "%core")
}

// passEnds is a log handler that signals ended (without waiting: signals coalesce) when the
// follower says a pass imported something, which it says once the pass's writes are done.
type passEnds struct{ ended chan struct{} }

func (h passEnds) Enabled(context.Context, slog.Level) bool { return true }

func (h passEnds) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "imported from Claude Code" {
		select {
		case h.ended <- struct{}{}:
		default:
		}
	}
	return nil
}

func (h passEnds) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h passEnds) WithGroup(string) slog.Handler      { return h }

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkClaudeCodeParse parses the lines of the import benchmark's transcripts, one
// goroutine, no store: the part of the import that the readers share, per line.
//
//	go test -run XXX -bench ClaudeCodeParse ./claudecode
func BenchmarkClaudeCodeParse(b *testing.B) {
	dir := ccCorpus(b, 1, 1000)
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	if err != nil || len(files) != 1 {
		b.Fatal(files, err)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	b.SetBytes(int64(len(raw)))
	b.ResetTimer()
	before := cpuTime(b)
	msgs := 0
	for range b.N {
		var f transcript
		for _, l := range lines {
			it, _ := f.parseLine(l, "person:ana")
			msgs += len(it.Messages)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/line")
	// The CPU time (GC included) says more than the wall time on a busy machine.
	b.ReportMetric(float64(cpuTime(b)-before)/float64(b.N*len(lines)), "cpu-ns/line")
	if msgs == 0 {
		b.Fatal("no messages")
	}
}

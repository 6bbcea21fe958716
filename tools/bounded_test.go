package tools_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// cpu is this process's CPU time so far, user and system.
func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// costs are what carrying a call costs this process a byte, apart from the server's work on
// it: the in-process client encodes the call and decodes the answer, and mcp-go decodes the
// call four times before the handler sees it. At 8 MiB that is about 0.4 s of CPU here, and
// under -race about 0.6 s at 1 MiB, which left a bound of 1 s on the whole call 0.3 s of
// margin that a slower machine ate (CI at 1.02 s on a write of 1 MiB under -race).
type costs struct {
	call, answer float64 // CPU seconds a byte
}

// carriage measures costs on documents of n bytes: the call, as the least CPU of three calls
// refused at once (list_documents with an unknown argument of n bytes: mcp-go decodes it all
// before the server looks); the answer, as the least of three reads of a document of one line
// of n bytes (one Get and a copy), less the call's cost. The least, so that a pause of the
// machine during one of them makes the baseline smaller, and the bound stricter, not looser.
func (a *agent) carriage(t *testing.T, n int) costs {
	t.Helper()
	least := func(tool string, args map[string]any) time.Duration {
		best := time.Duration(1 << 62)
		for range 3 {
			before := cpu()
			a.call(t, tool, args)
			best = min(best, cpu()-before)
		}
		return best
	}
	pad := strings.Repeat("p", n)
	call := least("list_documents", map[string]any{"pad": pad})
	a.ok(t, "write_document", map[string]any{"title": "Carried", "text": pad})
	answer := least("read_document", map[string]any{"document": "Carried"})
	c := costs{call: call.Seconds() / float64(n), answer: max(answer.Seconds(), 0) / float64(n)}
	t.Logf("carrying %d bytes: %.0f ms CPU a call, %.0f ms an answer", n, call.Seconds()*1000, answer.Seconds()*1000)
	return c
}

// measured is one call's CPU and time, its answer, and what carrying it cost.
type measured struct {
	used, took, carried time.Duration
	answer              string
	isError             bool
}

// work is the call's CPU beyond carrying it.
func (m measured) work() time.Duration { return m.used - m.carried }

func (m measured) String() string {
	return fmt.Sprintf("%5.0f ms CPU (%5.0f ms of it carrying), %5.0f ms, answer %7d bytes, error %v",
		m.used.Seconds()*1000, m.carried.Seconds()*1000, m.took.Seconds()*1000, len(m.answer), m.isError)
}

// measure calls tool and measures it: the bytes of its string arguments and of its answer,
// at costs, are what carrying it cost.
func (a *agent) measure(t *testing.T, tool string, args map[string]any, c costs) measured {
	t.Helper()
	in := 0
	for _, v := range args {
		if s, ok := v.(string); ok {
			in += len(s)
		}
	}
	before, start := cpu(), time.Now()
	answer, isError := a.call(t, tool, args)
	used, took := cpu()-before, time.Since(start)
	carried := time.Duration((c.call*float64(in) + c.answer*float64(len(answer))) * float64(time.Second))
	return measured{used: used, took: took, carried: carried, answer: answer, isError: isError}
}

// Every call that used to take seconds to minutes on a large document, at the 8 MiB limit
// (1 MiB with -short or -race): each takes at most 1 s of CPU beyond carrying its call and
// its answer (costs), and a refusal is at most 16 KB of text. "aa" in 2 MiB of "a" took 41 s
// and answered 6.3 MB; at 8 MiB it was about ten minutes a call. Without -race, at 8 MiB,
// the whole of each call, carrying included, is within 0.9 s here.
//
//	go test -run TestNoCallIsUnbounded -v ./tools
func TestNoCallIsUnbounded(t *testing.T) {
	size := docstore.MaxText
	if testing.Short() || testbin.Race {
		size = 1 << 20
	}
	db := kvtest.Open(t)
	ctx := t.Context()
	as := docstore.Author{By: "person:ana"}
	docs := docstore.New(db, "personal")
	line := "some notes about the launch, and the studio on tuesday\n"
	for title, text := range map[string]string{
		"As":     strings.Repeat("a", size),
		"Notes":  strings.Repeat(line, size/len(line)),
		"Tasks":  strings.Repeat("- [ ] task\n", size/11),
		"One":    strings.Repeat("word  ", size/6),
		"Ticks":  strings.Repeat("`", size/2) + strings.Repeat("a`", size/4),
		"Spaces": strings.Repeat(" ", size),
		"Half":   strings.Repeat(line, size/2/len(line)) + "the one marker\n",
	} {
		if _, err := docs.Create(ctx, title, text, docstore.KindWrite, as); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1000 {
		if _, err := docs.Create(ctx, fmt.Sprintf("Meeting notes %d e", i), "x\n", docstore.KindWrite, as); err != nil {
			t.Fatal(err)
		}
	}
	a := newAgentOn(t, db)
	costs := a.carriage(t, size)
	names := strings.Repeat("e ", size/2)
	for _, tc := range []struct {
		what string
		tool string
		args map[string]any
	}{
		{"edit aa in a's", "edit_document", map[string]any{"document": "As", "old": "aa", "new": "b"}},
		{"edit a space in notes", "edit_document", map[string]any{"document": "Notes", "old": " ", "new": "_"}},
		{"edit a repeated line", "edit_document", map[string]any{"document": "Tasks", "old": "- [ ] task", "new": "x"}},
		{"edit near matches of a huge line", "edit_document", map[string]any{"document": "One", "old": strings.Repeat("word ", 1000), "new": "x"}},
		{"edit an old as long as the text", "edit_document", map[string]any{"document": "As", "old": strings.Repeat("a", size-1) + "b", "new": "x"}},
		{"edit near a text of backticks", "edit_document", map[string]any{"document": "Ticks", "old": "a ` a", "new": "x"}},
		{"edit only spaces", "edit_document", map[string]any{"document": "Spaces", "old": "  ", "new": "x"}},
		{"read by a name of e's", "read_document", map[string]any{"document": names}},
		{"append by a name of e's", "append_document", map[string]any{"document": names, "text": "x"}},
		{"comment by a name of e's", "comment_document", map[string]any{"document": names, "lines": "1", "text": "x"}},
		{"read since 1", "read_document", map[string]any{"document": "Notes", "since": 1}},
		{"write the whole text again, changed", "write_document", map[string]any{"document": "Notes", "text": strings.Repeat(strings.ToUpper(line), size/len(line))}},
		{"append", "append_document", map[string]any{"document": "Half", "text": "one more line"}},
		{"edit once", "edit_document", map[string]any{"document": "Half", "old": "the one marker", "new": "the marker"}},
		{"read since 1 after those", "read_document", map[string]any{"document": "Half", "since": 1}},
	} {
		m := a.measure(t, tc.tool, tc.args, costs)
		t.Logf("%-36s %s", tc.what, m)
		if m.work() > time.Second {
			t.Errorf("%s on %d MiB: %s of CPU beyond carrying it, want at most 1 s", tc.what, size>>20, m.work())
		}
		if m.isError && len(m.answer) > 16<<10 && tc.tool != "read_document" {
			t.Errorf("%s: a refusal of %d bytes, want at most 16 KB", tc.what, len(m.answer))
		}
	}
}

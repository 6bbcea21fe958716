package reliability

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/mark3labs/mcp-go/client"
)

// What sharing the data file between two processes costs a tool call, end to end over stdio
// (Claude Desktop and an editor, each starting compass-mcp on the default file): one server
// alone, two taking turns call by call, and two calling at once. Each process holds the
// file only while it uses it and lets go after bolt.DefaultIdle (25 ms) idle, so the
// other process waits for that to open it.
//
//	go test -run TestTwoProcessLatency -v ./e2e/reliability
//	COMPASS_TWO_CALLS=200 go test -run TestTwoProcessLatency -v ./e2e/reliability   # more calls a case
func TestTwoProcessLatency(t *testing.T) {
	calls := 20
	if v := os.Getenv("COMPASS_TWO_CALLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10_000 {
			t.Fatalf("COMPASS_TWO_CALLS=%q: give the calls a case makes, a number from 1 to 10000 (default 20)", v)
		}
		calls = n
	}
	data := newData(t)
	a := stdioClient(t, data, "--agent", "desktop")
	b := stdioClient(t, data, "--agent", "editor")
	if r := mustCall(t, a, "write_document", map[string]any{"title": "Shared", "text": "# Shared\n"}); r.isError {
		t.Fatal(r.text)
	}
	var mu sync.Mutex
	var appended []string
	// one makes a call of tool by c, the n-th of a case, and times it.
	one := func(c *client.Client, who, tool string, n int) time.Duration {
		args := map[string]any{"document": "Shared"}
		if tool == "append_document" {
			line := fmt.Sprintf("%s %d at %d", who, n, time.Now().UnixNano())
			args["text"] = line
			mu.Lock()
			appended = append(appended, line)
			mu.Unlock()
		}
		start := time.Now()
		r := mustCall(t, c, tool, args)
		took := time.Since(start)
		if r.isError {
			t.Errorf("%s by %s: %s", tool, who, r.text)
		}
		return took
	}
	for _, tool := range []string{"read_document", "append_document"} {
		var alone, turns, atOnce []time.Duration
		for i := range calls {
			alone = append(alone, one(a, "a alone", tool, i))
		}
		for i := range calls {
			turns = append(turns, one(a, "a in turns", tool, i), one(b, "b in turns", tool, i))
		}
		var wg sync.WaitGroup
		for _, side := range []struct {
			who string
			c   *client.Client
		}{{"a at once", a}, {"b at once", b}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range calls {
					took := one(side.c, side.who, tool, i)
					mu.Lock()
					atOnce = append(atOnce, took)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		t.Logf("%s, one server:             %s", tool, summary(alone))
		t.Logf("%s, two servers in turns:   %s", tool, summary(turns))
		t.Logf("%s, two servers at once:    %s", tool, summary(atOnce))
		// docs/RELIABILITY.md's figures are about 0.3-1 ms alone (an append's fsync makes it
		// 1-15 ms, with the machine's load), 27 ms in turns (the other process's 25 ms idle)
		// and 215 ms at most at once, on a quiet machine. What is checked is what sharing the
		// file costs: in turns and at once, within ten times those figures, so that a loaded
		// machine doesn't fail them while a change that made sharing cost far more does; no
		// call, alone or shared, waits out the lock timeout. How fast one server alone is
		// is the benchmarks' to measure (docs/PERFORMANCE.md), not a bound here.
		for _, c := range []struct {
			name      string
			ds        []time.Duration
			p50, most time.Duration
		}{{"one server", alone, bolt.DefaultTimeout, bolt.DefaultTimeout}, {"in turns", turns, 270 * time.Millisecond, bolt.DefaultTimeout},
			{"at once", atOnce, 100 * time.Millisecond, bolt.DefaultTimeout}} {
			if p50, worst := quantile(c.ds, 0.5), quantile(c.ds, 1); p50 > c.p50 || worst > c.most {
				t.Errorf("%s, %s: p50 %v, max %v; want at most %v and %v", tool, c.name, p50, worst, c.p50, c.most)
			}
		}
	}
	r := mustCall(t, b, "read_document", map[string]any{"document": "Shared"})
	for _, line := range appended {
		if !strings.Contains(r.text, "\n"+line+"\n") {
			t.Errorf("%q was appended but is not in the text", line)
		}
	}
	if want := fmt.Sprintf("version %d of %d", len(appended)+1, len(appended)+1); !strings.Contains(r.text, want) {
		t.Errorf("after %d appends: %s, want %s", len(appended), strings.SplitN(r.text, "\n", 2)[0], want)
	}
}

// quantile is the q-th quantile of ds (1: the worst).
func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// summary gives the mean, median, 95th percentile and worst of ds.
func summary(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	r := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
	return fmt.Sprintf("%d calls, mean %s, p50 %s, p95 %s, max %s", len(s), r(sum/time.Duration(len(s))), r(at(0.5)), r(at(0.95)), r(s[len(s)-1]))
}

// A COMPASS_TWO_CALLS that isn't a number of calls is refused, saying what it takes; before,
// it was read as 0 and the test panicked (an index out of range in summary).
func TestTwoProcessLatencyRefusesABadCount(t *testing.T) {
	if os.Getenv("COMPASS_TWO_CALLS") != "" {
		t.Skip("COMPASS_TWO_CALLS is set: this test sets it itself")
	}
	for _, bad := range []string{"x", "20000"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTwoProcessLatency$")
		cmd.Env = append(os.Environ(), "COMPASS_TWO_CALLS="+bad)
		out, err := cmd.CombinedOutput()
		if err == nil || strings.Contains(string(out), "panic") || !strings.Contains(string(out), "COMPASS_TWO_CALLS=\""+bad+"\": give the calls a case makes") {
			t.Errorf("COMPASS_TWO_CALLS=%s: %v\n%s", bad, err, out)
		}
	}
}

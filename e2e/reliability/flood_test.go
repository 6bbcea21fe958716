package reliability

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rss reads a process's resident memory (VmRSS) and its peak (VmHWM), in KiB.
func rss(t *testing.T, pid int) (now, peak int) {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && (fields[0] == "VmRSS:" || fields[0] == "VmHWM:") {
			n, _ := strconv.Atoi(fields[1])
			if fields[0] == "VmRSS:" {
				now = n
			} else {
				peak = n
			}
		}
	}
	return now, peak
}

// A flood of sessions that are opened and never closed: the server keeps answering and its
// memory stays bounded. (mcp-go sweeps an idle session's state from memory after
// --session-idle; the session's row in the store ends then too, and is swept out as later
// sessions begin.)
func TestSessionFlood(t *testing.T) {
	t.Parallel()
	s := startHTTP(t, newData(t), "--session-idle", "1s")
	n := 3000
	if testing.Short() {
		n = 500
	}
	start := time.Now()
	for i := range n {
		req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood-%d","version":"1"}}}`, i)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("session %d: %d", i, res.StatusCode)
		}
	}
	now, peak := rss(t, s.cmd.Process.Pid)
	t.Logf("%d sessions opened in %s; server RSS %d MiB (peak %d MiB)", n, time.Since(start).Round(time.Millisecond), now>>10, peak>>10)
	if peak > int(raceSlack[int64](256<<10)) {
		t.Errorf("%d sessions took the server to %d MiB", n, peak>>10)
	}
	c := httpClient(t, s.url, "after-the-flood")
	if a := mustCall(t, c, "list_documents", map[string]any{}); a.isError {
		t.Errorf("after the flood: %s", a.text)
	}
}

package command

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// TestDatabaseDownAtStart: a command on a database that does not answer says so in one
// line naming host:port (and no password), and exits non-zero; no stack.
func TestDatabaseDownAtStart(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	url := "postgres://ana:s3cret@" + addr + "/compass"
	for _, args := range [][]string{{"call", "list_documents"}, {"serve"}, {"docs", "list"}, {"copy", "--from", url, "--to", t.TempDir() + "/x.db"}} {
		cmd := exec.Command(testbin.Path, args...)
		cmd.Env = append(os.Environ(), testEnv(url)...)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		msg := strings.TrimSpace(string(out))
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("%v: exit %v, want 1; said %q", args, err, msg)
		}
		if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, addr) || !strings.Contains(msg, "unavailable") ||
			strings.Contains(msg, "s3cret") || strings.Contains(msg, "goroutine") {
			t.Errorf("%v said %q: want one line naming %s, without the password", args, msg, addr)
		}
	}
}

// TestDatabaseDownLater: while the database is down, tool calls answer an error result that
// says so (and, for a write, that it may not have been saved); once it is back (it takes
// connections: cluster.Start waits for that), the same server answers again at once, without
// being restarted: its pool drops the connections that died with the database.
func TestDatabaseDownLater(t *testing.T) {
	t.Parallel()
	cluster := kvtest.NewCluster(t)
	c := stdioClient(t, cluster.URL)
	secret := strings.TrimSpace(strings.SplitN(cli(t, cluster.URL, "tokens", "add", "--for", "ana"), "\n", 2)[0])
	mcpURL, _ := httpServer(t, cluster.URL)
	if a := callTool(t, c, "write_document", map[string]any{"title": "Up", "text": "# Up\n"}); a.isError {
		t.Fatalf("write_document: %s", a.text)
	}
	cluster.Stop()
	read := callTool(t, c, "read_document", map[string]any{"document": "Up"})
	t.Logf("read_document with the database down: %s", read.text)
	if !read.isError || !strings.HasPrefix(read.text, "The database is unavailable: try again") || strings.Contains(read.text, "may or may not") {
		t.Errorf("read_document with the database down: %+v", read)
	}
	write := callTool(t, c, "append_document", map[string]any{"document": "Up", "text": "more"})
	if !write.isError || !strings.Contains(write.text, "The database is unavailable") || !strings.Contains(write.text, "may or may not have been saved") {
		t.Errorf("append_document with the database down: %+v", write)
	}
	// Over HTTP, a token cannot be checked: 503 with Retry-After, not 401 (which would have
	// the client drop a good token) nor 500.
	req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "database is unavailable") {
		t.Errorf("an HTTP request with the database down: %s, Retry-After %q, %s", resp.Status, resp.Header.Get("Retry-After"), body)
	}
	cluster.Start()
	if a := callTool(t, c, "append_document", map[string]any{"document": "Up", "text": "back"}); a.isError {
		t.Fatalf("the database back, append_document still answers: %s", a.text)
	}
	if a := callTool(t, c, "read_document", map[string]any{"document": "Up"}); a.isError || !strings.Contains(a.text, "back") || !strings.Contains(a.text, "version 2 of 2") {
		t.Errorf("read_document once the database is back: %+v", a)
	}
}

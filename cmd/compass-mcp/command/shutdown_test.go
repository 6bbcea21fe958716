package command

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

// SIGINT (Ctrl-C) and SIGTERM (what service managers send) each end an HTTP server promptly
// and cleanly even while a client holds its GET stream open, as MCP clients do.
func TestShutdownWithAnOpenStream(t *testing.T) {
	t.Parallel()
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { shutdownWithAnOpenStream(t, sig) })
	}
}

func shutdownWithAnOpenStream(t *testing.T, sig os.Signal) {
	cmd := exec.Command(testbin.Path, "serve", "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), testEnv(newData(t), "COMPASS_LOG=info")...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	var url string
	for url == "" && sc.Scan() {
		if m := regexp.MustCompile(`url=(http://\S+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
	}
	shutting := make(chan bool, 1)
	go func() {
		said := false
		for sc.Scan() {
			said = said || strings.Contains(sc.Text(), "shutting down")
		}
		shutting <- said
	}()
	res, _ := post(t, url, strings.NewReader(initBody), nil)
	sid := res.Header.Get("Mcp-Session-Id")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()

	start := time.Now()
	cmd.Process.Signal(sig)
	// stderr is read to its end before Wait, which closes the pipe (os/exec: Wait must not
	// be called before all reads from the pipe have completed, or the last lines, the
	// "shutting down" one among them, may be lost).
	select {
	case said := <-shutting:
		if err := cmd.Wait(); err != nil {
			t.Errorf("the server ended with %v", err)
		}
		if !said {
			t.Errorf("after %s the server ended without finishing calls in flight (no \"shutting down\" on stderr)", sig)
		}
		t.Logf("stopped %s after %s", time.Since(start).Round(time.Millisecond), sig)
	case <-time.After(8 * time.Second):
		t.Fatalf("the server still runs 8 s after %s", sig)
	}
}

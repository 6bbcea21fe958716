// Package webtest starts what the tests of the person's page drive in a real browser:
// compass-mcp (the binary internal/testkit/testbin built) serving MCP and the page on one loopback
// address, and a headless chromium. Only tests import it (e2e/browser, e2e/oauth).
package webtest

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testtool"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// Server is compass-mcp serving MCP and the page on one loopback address, on its own data
// file, for person ana in space personal.
type Server struct {
	URL  string // http://127.0.0.1:PORT
	Data string // the data: a file, or a PostgreSQL schema's URL (kvtest.Data)
	env  []string
}

var urlInLog = regexp.MustCompile(`msg="serving MCP over streamable HTTP" url=(http://[0-9.:]+)/mcp`)

// Start serves on fresh data (a file, or a schema of its own with
// COMPASS_TEST_DATA=postgres://…); env (NAME=value) is added to what the server and every
// Run see. before runs first, on the data file, before the server starts.
func Start(t *testing.T, env []string, before ...[]string) *Server {
	t.Helper()
	s := &Server{Data: kvtest.Data(t, t.TempDir(), "compass.db"), env: env}
	for _, args := range before {
		s.Run(t, args...)
	}
	cmd := exec.Command(testbin.Path, "serve", "--http", "127.0.0.1:0")
	cmd.Env = s.Env("COMPASS_LOG=info")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := urlInLog.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case s.URL = <-found:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not say where it listens")
	}
	return s
}

// Env is the server's environment: the page on (the --http address), links to it, then
// Start's env, then extra.
func (s *Server) Env(extra ...string) []string {
	env := append(os.Environ(), "COMPASS_DATA="+s.Data, "COMPASS_ME=ana", "COMPASS_SPACE=personal",
		"COMPASS_LOG=warn", "COMPASS_WEB=", "COMPASS_LINK_BASE=")
	return append(append(env, s.env...), extra...)
}

// Run runs a compass-mcp command on the server's data file and returns what it printed.
func (s *Server) Run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(testbin.Path, args...)
	cmd.Env = s.Env()
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("compass-mcp %s: %v\n%s%s", strings.Join(args, " "), err, out, msg)
	}
	return string(out)
}

// BrowserDeadline is how long a test may use the browser NewBrowser starts: far more than
// any test takes on a loaded machine (the slowest, under -race on two busy cores, about a
// minute), and less than go test's 10 minutes, so that the test that hangs is named.
var BrowserDeadline = 6 * time.Minute

// NewBrowser starts a headless chromium (Debian's) for one test, with a tab of width ×
// height; a JavaScript dialog fails the test (and is dismissed, so nothing hangs). extra
// options (flags) come after the ones every test's browser has.
func NewBrowser(t *testing.T, width, height int, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	path := testtool.Find(t, "chromium", "Debian's: apt-get install -y chromium")
	opts := append([]chromedp.ExecAllocatorOption{chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(width, height)}, extra...)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel2 := chromedp.NewContext(actx)
	// A chromedp action has no deadline of its own: a test that waits for an element that
	// never comes would hang until go test's timeout, naming no test. Past BrowserDeadline
	// the browser is closed, so that whatever waits on it fails now, in the test that waits.
	watchdog := time.AfterFunc(BrowserDeadline, func() {
		t.Errorf("the browser test ran past %v: its browser is closed", BrowserDeadline)
		cancel2()
	})
	t.Cleanup(func() { watchdog.Stop(); cancel2(); cancel() })
	if err := chromedp.Do(ctx); err != nil { // start the browser on the test's context
		t.Fatal(err)
	}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			t.Errorf("a JavaScript dialog opened: %q", ev.Message)
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return ctx
}

// Navigate opens url in ctx's tab.
func Navigate(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
}

package browser

import (
	"bufio"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/compass-mcp/compass-mcp/internal/testbin"
)

var screenshots = flag.Bool("screenshots", false, "write the README's screenshots into docs/screenshots")

func TestMain(m *testing.M) { testbin.Main(m) }

// server is compass-mcp serving MCP and the page on one loopback address, on its own data file.
type server struct {
	url  string // http://127.0.0.1:PORT
	data string
}

var urlInLog = regexp.MustCompile(`msg="serving MCP over streamable HTTP" url=(http://[0-9.:]+)/mcp`)

func startServer(t *testing.T) *server {
	t.Helper()
	s := &server{data: filepath.Join(t.TempDir(), "compass.db")}
	s.run(t, "people", "set", "ana", "Ana")
	cmd := exec.Command(testbin.Path, "serve", "--http", "127.0.0.1:0")
	cmd.Env = s.env("COMPASS_LOG=info")
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
	case s.url = <-found:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not say where it listens")
	}
	return s
}

// env is the server's and the agent's: the page on (the --http address), links by default.
func (s *server) env(extra ...string) []string {
	return append(os.Environ(), append([]string{"COMPASS_DATA=" + s.data, "COMPASS_ME=ana", "COMPASS_SPACE=personal",
		"COMPASS_AGENT=north", "COMPASS_LOG=warn", "COMPASS_WEB=", "COMPASS_LINK_BASE="}, extra...)...)
}

// run runs a compass-mcp command on the server's data file and returns what it printed.
func (s *server) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(testbin.Path, args...)
	cmd.Env = s.env()
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

// agent calls a tool as the agent north does, from another process, and returns its answer.
func (s *server) agent(t *testing.T, tool string, args ...string) string {
	t.Helper()
	return s.run(t, append([]string{"call", tool}, args...)...)
}

var linkInAnswer = regexp.MustCompile(`\]\((http://[^)]+/document/([0-9A-Z]{26}))\)`)

// write makes a document as the agent and returns the link its answer gave, and the id.
func (s *server) write(t *testing.T, title, text string) (link, id string) {
	t.Helper()
	answer := s.agent(t, "write_document", "title="+title, "text="+text)
	m := linkInAnswer.FindStringSubmatch(answer)
	if m == nil {
		t.Fatalf("no page link in the answer: %s", answer)
	}
	return m[1], m[2]
}

// signIn opens the one-time link "compass-mcp open DOC" prints, as the person would.
func (s *server) signIn(t *testing.T, ctx context.Context, doc string) {
	t.Helper()
	args := []string{"open", "--browser=false"}
	if doc != "" {
		args = append(args, doc)
	}
	link := strings.TrimSpace(s.run(t, args...))
	if !strings.HasPrefix(link, s.url+"/signin?code=") {
		t.Fatalf("compass-mcp open printed %q, want a link to %s/signin", link, s.url)
	}
	navigate(t, ctx, link)
}

// newBrowser starts a headless chromium for one test, with a tab; a JavaScript dialog
// fails the test (and is dismissed, so nothing hangs).
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("the browser tests need Debian's chromium: apt-get install -y chromium")
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-gpu", true), chromedp.WindowSize(1100, 800))
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel2(); cancel() })
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

func navigate(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func pageText(t *testing.T, ctx context.Context) string {
	t.Helper()
	return eval[string](t, ctx, "document.body.innerText")
}

// waitText waits until the page says want (at most 10 s) and returns how long it took.
func waitText(t *testing.T, ctx context.Context, want string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		got := pageText(t, ctx)
		if strings.Contains(got, want) {
			return time.Since(start)
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the page never said %q; it says:\n%s", want, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// click clicks the element sel and waits for the page it leads to.
func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		t.Fatalf("clicking %s: %v", sel, err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
		t.Fatal(err)
	}
}

// shot saves the page as docs/screenshots/name.png when -screenshots is given.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if !*screenshots {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

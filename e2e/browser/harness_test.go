package browser

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/internal/testkit/webtest"
)

var screenshots = flag.Bool("screenshots", false, "write the README's screenshots into docs/screenshots")

func TestMain(m *testing.M) { testbin.Main(m) }

// server is compass-mcp serving MCP and the page on one loopback address, with the agent
// north, and ana's name set.
type server struct{ *webtest.Server }

func startServer(t *testing.T) *server {
	t.Helper()
	return &server{webtest.Start(t, []string{"COMPASS_AGENT=north"}, []string{"people", "set", "ana", "Ana"})}
}

func (s *server) run(t *testing.T, args ...string) string {
	t.Helper()
	return s.Run(t, args...)
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
	if !strings.HasPrefix(link, s.URL+"/signin?code=") {
		t.Fatalf("compass-mcp open printed %q, want a link to %s/signin", link, s.URL)
	}
	navigate(t, ctx, link)
}

func newBrowser(t *testing.T) context.Context { return webtest.NewBrowser(t, 1100, 800) }

func navigate(t *testing.T, ctx context.Context, url string) { webtest.Navigate(t, ctx, url) }

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
	// Between two documents (a form's answer arriving) there is no body yet: that reads as a
	// page that says nothing, which waitText waits past, not as a failure.
	return eval[string](t, ctx, `document.body ? document.body.innerText : ""`)
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
	// chromedp finds the node, then clicks it by its id: a document replaced in between (a
	// page still settling after the one before, on a busy machine) leaves the id stale, so
	// the click is tried again, a bounded number of times, on the page as it is now.
	for try := 1; ; try++ {
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel)))
		if err == nil {
			break
		}
		if try == 10 || !strings.Contains(err.Error(), "Could not find node with given id") {
			t.Fatalf("clicking %s: %v", sel, err)
		}
		time.Sleep(100 * time.Millisecond)
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

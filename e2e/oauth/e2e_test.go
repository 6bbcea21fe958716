package oauth

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/internal/testkit/webtest"
)

var screenshots = flag.Bool("screenshots", false, "write the consent page's screenshot into docs/screenshots")

func TestMain(m *testing.M) { testbin.Main(m) }

// root is the repository's root.
func root() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..")
}

// The whole sign-in of an MCP client nobody here wrote, as claude.ai's connector does it:
// the SDK's client is refused, discovers the server, registers, and sends the person to the
// consent page; the person signs in to their page, allows, and the SDK gets the code,
// exchanges it, calls tools on /spaces/launch/mcp, refreshes; the Inspector's CLI works
// with the token; the person revokes the row with tokens revoke, and the token and its
// refresh are refused.
func TestSDKSignsInWithOAuth(t *testing.T) {
	node := filepath.Join(root(), ".ci", "node", "node_modules", ".bin", "node")
	if _, err := os.Stat(node); err != nil {
		if os.Getenv("COMPASS_OAUTH_E2E") != "" {
			t.Fatalf("COMPASS_OAUTH_E2E is set but Node 22 and the SDK are not installed in .ci/node: %v", err)
		}
		t.Skip("needs Node 22 and the TypeScript SDK in .ci/node: bash .ci/oauth.sh installs them and runs this test")
	}
	s := startServer(t)
	s.run(t, "people", "set", "ana", "Ana")
	s.run(t, "members", "add", "launch", "ana")
	s.run(t, "tokens", "add", "--for", "ana", "--agent", "cli") // a token row: the server is no longer open
	endpoint := s.URL + "/spaces/launch/mcp"

	sdk := exec.Command(node, filepath.Join(root(), ".ci", "oauth-client.mjs"), endpoint)
	sdk.Stderr = &logWriter{t: t, prefix: "oauth-client: "}
	out, _ := sdk.StdoutPipe()
	in, _ := sdk.StdinPipe()
	if err := sdk.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sdk.Process.Kill(); sdk.Wait() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(want string) string {
		t.Helper()
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the SDK's client ended before %s", want)
			}
			rest, found := strings.CutPrefix(line, want+" ")
			if !found && line != want {
				t.Fatalf("the SDK's client said %q, want %s", line, want)
			}
			return rest
		case <-time.After(60 * time.Second):
			t.Fatalf("the SDK's client said nothing for 60 s, waiting for %s", want)
		}
		return ""
	}

	authorize := next("AUTHORIZE")
	u, err := url.Parse(authorize)
	if err != nil || !strings.HasPrefix(authorize, s.URL+"/authorize?") || u.Query().Get("resource") != endpoint {
		t.Fatalf("authorization URL %q: want %s/authorize with resource %s", authorize, s.URL, endpoint)
	}
	redirectHost := strings.TrimPrefix(strings.TrimSuffix(u.Query().Get("redirect_uri"), "/callback"), "http://")

	// The person: not signed in yet, told how; signs in with compass-mcp open; allows.
	ctx := newBrowser(t)
	navigate(t, ctx, authorize)
	waitText(t, ctx, "Sign in to see this")
	waitText(t, ctx, "come back to this page")
	link := strings.TrimSpace(s.run(t, "open", "--browser=false"))
	navigate(t, ctx, link)
	navigate(t, ctx, authorize)
	waitText(t, ctx, "Allow SDK Test Client to use compass-mcp?")
	page := waitText(t, ctx, "sent back to "+redirectHost)
	if !strings.Contains(page, "signed in as Ana.") { // her name, not her id (SPEC: names, not ids)
		t.Errorf("the consent page doesn't say who is signed in by name:\n%s", page)
	}
	// The page's own stylesheet applies (the consent's CSP lets it load).
	if styled := eval[bool](t, ctx, `getComputedStyle(document.querySelector('header.top')).borderBottomStyle === 'solid'`); !styled {
		t.Error("the consent page is not styled by the page's stylesheet")
	}
	if checked := eval[bool](t, ctx, `document.querySelector('input[name=space][value=launch]').checked`); !checked {
		t.Error("launch, the space the SDK connects to, is not ticked")
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("input[name=agent]"), "sdk")); err != nil {
		t.Fatal(err)
	}
	shot(t, ctx, "consent")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("button[name=allow]"))); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, "Signed in: you can close this tab.")

	// The SDK exchanged the code and called tools as the agent the person named.
	if called := next("CALLED"); !strings.Contains(called, "Signed in") || !strings.Contains(called, "saved by sdk for Ana") {
		t.Errorf("the SDK's tool calls: %s", called)
	}
	next("REFRESHED")
	token := next("TOKEN")

	// The Inspector's CLI, another client nobody here wrote, with the token got this way.
	inspector := exec.Command(node, filepath.Join(root(), ".ci", "node", "node_modules", ".bin", "mcp-inspector"),
		"--cli", endpoint, "--transport", "http", "--method", "tools/call", "--tool-name", "read_document",
		"--tool-arg", "document=Signed in", "--header", "Authorization: Bearer "+token)
	home := t.TempDir()
	inspector.Env = append(os.Environ(), "HOME="+home, "MCP_CATALOG_PATH="+filepath.Join(home, "mcp.json"))
	if got, err := inspector.CombinedOutput(); err != nil || !strings.Contains(string(got), "Written over OAuth.") {
		t.Errorf("the Inspector's CLI with the OAuth token: %v\n%s", err, got)
	}

	// The official conformance suite's server scenarios, every request carrying the token.
	conformance(t, node, endpoint, token)

	// The row is in tokens list, bound to the endpoint; the person revokes it.
	next("REVOKE")
	var id string
	for _, line := range strings.Split(s.run(t, "tokens", "list", "--for", "ana"), "\n") {
		if strings.Contains(line, "via SDK Test Client") {
			if id != "" {
				t.Errorf("more than one row for the SDK's client:\n%s", line)
			}
			id, _, _ = strings.Cut(line, " · ")
			for _, want := range []string{"agent sdk", "spaces launch", "read-write", "bound to " + endpoint} {
				if !strings.Contains(line, want) {
					t.Errorf("tokens list doesn't say %q: %s", want, line)
				}
			}
		}
	}
	if id == "" {
		t.Fatal("tokens list has no row for the SDK's client")
	}
	s.run(t, "tokens", "revoke", id)
	fmt.Fprintln(in, "revoked")
	next("REFUSED")
	if err := sdk.Wait(); err != nil {
		t.Errorf("the SDK's client: %v", err)
	}
}

// conformance runs the conformance suite's server scenarios (.ci/conformance.sh's, with its
// baseline) against endpoint through a proxy on loopback that adds the token to every
// request and changes nothing else (the Host stays the client's, for the DNS rebinding
// scenario): the server with authorization on, as a connector uses it.
func conformance(t *testing.T, node, endpoint, token string) {
	t.Helper()
	target, _ := url.Parse(endpoint)
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
		r.Out.Host = r.In.Host
		r.Out.Header.Set("Authorization", "Bearer "+token)
	}, ErrorLog: log.New(io.Discard, "", 0)}) // a stream the suite drops is no finding
	defer proxy.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	suite := exec.CommandContext(ctx, node, filepath.Join(root(), ".ci", "node", "node_modules", ".bin", "conformance"), "server",
		"--url", proxy.URL+target.Path, "--expected-failures", filepath.Join(root(), "conformance-baseline.yml"), "-o", t.TempDir())
	if out, err := suite.CombinedOutput(); err != nil {
		t.Errorf("the conformance suite with an OAuth token: %v\n%s", err, out)
	} else if !strings.Contains(string(out), "Baseline check passed") {
		t.Errorf("the conformance suite didn't say its baseline check passed:\n%s", out)
	}
}

// server is compass-mcp serving MCP, the page and OAuth on one loopback address.
type server struct{ *webtest.Server }

func startServer(t *testing.T) *server { return &server{webtest.Start(t, nil)} }

func (s *server) run(t *testing.T, args ...string) string {
	t.Helper()
	return s.Run(t, args...)
}

// logWriter passes what a process says on stderr to the test's log.
type logWriter struct {
	t      *testing.T
	prefix string
	mu     sync.Mutex
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t.Log(w.prefix + strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

var _ io.Writer = (*logWriter)(nil)

func newBrowser(t *testing.T) context.Context { return webtest.NewBrowser(t, 900, 900) }

func navigate(t *testing.T, ctx context.Context, u string) { webtest.Navigate(t, ctx, u) }

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// waitText waits until the page says want (at most 10 s) and returns what it says.
func waitText(t *testing.T, ctx context.Context, want string) string {
	t.Helper()
	start := time.Now()
	for {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
		if err == nil && strings.Contains(got, want) {
			return got
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the page never said %q; it says:\n%s (%v)", want, got, err)
		}
		time.Sleep(50 * time.Millisecond)
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
	dir := filepath.Join(root(), "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

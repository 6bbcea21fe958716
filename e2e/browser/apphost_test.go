package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/compass-mcp/compass-mcp/internal/testkit/webtest"
)

// The MCP Apps extension a host declares in initialize, and what its views are.
const (
	appsExtension = "io.modelcontextprotocol/ui"
	appMIME       = "text/html;profile=mcp-app"
	// appCSP is the spec's default Content-Security-Policy (ext-apps 2026-01-26), which a
	// host applies to a view whose resource declares no _meta.ui.csp: nothing from another
	// origin, no network at all.
	appCSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'"
)

// appHost is a chat client that renders MCP Apps, played by the test: the official Go SDK's
// client on the server's /mcp (streamable HTTP, declaring the apps extension), and a host
// page (testdata/apphost.html) on a loopback server of the test's own, which puts the view
// in a sandboxed frame and forwards the view's tools/call through that client.
type appHost struct {
	cs    *mcp.ClientSession
	raw   *rawResults
	tools []*mcp.Tool
	page  *httptest.Server
	// sandbox is the sandbox proxy's origin: another loopback port, as a web host's proxy
	// has another origin than its page.
	sandbox *httptest.Server
	view    string // the view's HTML, as resources/read gave it

	mu    sync.Mutex
	cases []hostCase
}

// hostCase is what one showing of the view gets: the host's theme and width, the tool the
// agent called, its arguments, and the server's answer byte for byte.
type hostCase struct {
	Case  int    `json:"case"`            // its number, which the frame's URL names
	Proxy string `json:"proxy,omitempty"` // the sandbox proxy's URL, set by show when proxied
	View  string `json:"-"`               // the view's HTML, if not the server's
	Theme string `json:"theme"`
	Width int    `json:"width"`
	// MaxHeight, if set, is the host's containerDimensions.maxHeight.
	MaxHeight int             `json:"maxHeight,omitempty"`
	Tool      *mcp.Tool       `json:"tool"`
	Tools     []*mcp.Tool     `json:"tools"`
	Input     map[string]any  `json:"input"`
	Result    json.RawMessage `json:"result"`
}

func newAppHost(t *testing.T, s *server) *appHost {
	t.Helper()
	h := &appHost{raw: &rawResults{}}
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(appsExtension, map[string]any{"mimeTypes": []string{appMIME}})
	c := mcp.NewClient(&mcp.Implementation{Name: "compass-test-host", Version: "1.0.0"}, &mcp.ClientOptions{Capabilities: caps})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: s.URL + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: h.raw},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connecting to %s/mcp declaring %s: %v", s.URL, appsExtension, err)
	}
	t.Cleanup(func() { cs.Close() })
	h.cs = cs
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.tools = list.Tools

	h.page = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.page.Close)
	h.sandbox = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "GET" || r.URL.Path != "/proxy" {
			http.NotFound(w, r)
			return
		}
		proxy, err := os.ReadFile(filepath.Join("testdata", "appproxy.html"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", appCSP)
		w.Write(proxy)
	}))
	t.Cleanup(h.sandbox.Close)
	return h
}

// serve is the host's own origin: the host page for a case, the view for its frame (with
// the spec's CSP), and /call, where the page sends the view's tools/call.
func (h *appHost) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/host/"):
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/host/"))
		h.mu.Lock()
		if err != nil || n < 0 || n >= len(h.cases) {
			h.mu.Unlock()
			http.NotFound(w, r)
			return
		}
		c := h.cases[n]
		h.mu.Unlock()
		config, err := json.Marshal(c) // escapes <, > and &: nothing in it closes the script
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		tmpl, err := os.ReadFile(filepath.Join("testdata", "apphost.html"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, strings.Replace(string(tmpl), "{{CONFIG}}", string(config), 1))
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/view/"):
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/view/"))
		h.mu.Lock()
		if err != nil || n < 0 || n >= len(h.cases) {
			h.mu.Unlock()
			http.NotFound(w, r)
			return
		}
		view := h.cases[n].View
		h.mu.Unlock()
		if view == "" {
			view = h.view
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", appCSP)
		io.WriteString(w, view)
	case r.Method == "POST" && r.URL.Path == "/call":
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&p); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		result, err := h.call(r.Context(), p.Name, p.Arguments)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(result)
	default:
		http.NotFound(w, r)
	}
}

// call calls a tool through the host's MCP client and returns the result as the server
// sent it (not as the SDK re-encodes it).
func (h *appHost) call(ctx context.Context, name string, args map[string]any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	before := h.raw.count()
	if _, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}); err != nil {
		return nil, fmt.Errorf("calling %s: %w", name, err)
	}
	return h.raw.since(before)
}

// callTool is call for the test t, failing it on a protocol error.
func (h *appHost) callTool(t *testing.T, name string, args map[string]any) json.RawMessage {
	t.Helper()
	result, err := h.call(context.Background(), name, args)
	if err != nil {
		t.Fatal(err)
	}
	return result
}

// tool is the listed tool name, or nil.
func (h *appHost) tool(name string) *mcp.Tool {
	for _, t := range h.tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// show registers a showing of the view and returns the host page's URL for it.
func (h *appHost) show(c hostCase) string {
	return h.showIn(c, false)
}

// showIn is show, through the sandbox proxy if proxied.
func (h *appHost) showIn(c hostCase, proxied bool) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if proxied {
		c.Proxy = h.sandbox.URL + "/proxy"
	}
	c.Tools = h.tools
	c.Case = len(h.cases)
	h.cases = append(h.cases, c)
	return fmt.Sprintf("%s/host/%d", h.page.URL, len(h.cases)-1)
}

// rawResults is the MCP client's HTTP transport, keeping every JSON-RPC result the server
// sent in answer to a POST (as JSON or as server-sent events), in order.
type rawResults struct {
	mu      sync.Mutex
	results []json.RawMessage
}

func (rr *rawResults) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Method != "POST" {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var messages [][]byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				messages = append(messages, []byte(strings.TrimSpace(data)))
			}
		}
	} else {
		messages = append(messages, body)
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	for _, m := range messages {
		var msg struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(m, &msg) == nil && msg.Result != nil {
			rr.results = append(rr.results, msg.Result)
		}
	}
	return resp, nil
}

func (rr *rawResults) count() int {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return len(rr.results)
}

// since is the one result that came after the first n.
func (rr *rawResults) since(n int) (json.RawMessage, error) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if len(rr.results) != n+1 {
		return nil, fmt.Errorf("%d results came for one call", len(rr.results)-n)
	}
	return rr.results[n], nil
}

// appBrowser is a headless chromium for the host page, with a counter of script run where
// it shouldn't be: alert, confirm, prompt and print, in the host page and in every frame,
// call the binding hostileRan, which the test counts.
type appBrowser struct {
	ctx  context.Context
	host *appHost

	mu       sync.Mutex
	ran      []string // what hostileRan was called with
	requests []string // every URL the browser asked for
	refused  []string // the browser's log lines of what a Content-Security-Policy refused
	thrown   []string // uncaught exceptions, in the host page or the view
}

func newAppBrowser(t *testing.T, h *appHost, width int) *appBrowser {
	t.Helper()
	// The view's frame runs in the page's process (sandboxed frames get a process of their own
	// by default), so that the test can read its document through the page's DevTools
	// session; the sandbox and the CSP hold the same either way.
	ctx := webtest.NewBrowser(t, width, 900,
		chromedp.Flag("disable-features", "IsolateSandboxedIframes,site-per-process"),
		chromedp.Flag("disable-site-isolation-trials", true))
	b := &appBrowser{ctx: ctx, host: h}
	record := func(to *[]string, s string) {
		b.mu.Lock()
		*to = append(*to, s)
		b.mu.Unlock()
	}
	calls := chromedp.Events(ctx, runtime.BindingCalled)
	go func() {
		for ev, err := range calls {
			if err != nil {
				return
			}
			if ev.Name == "hostileRan" {
				record(&b.ran, ev.Payload)
			}
		}
	}()
	requests := chromedp.Events(ctx, network.RequestWillBeSent)
	go func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			record(&b.requests, ev.Request.URL)
		}
	}()
	entries := chromedp.Events(ctx, log.EntryAdded)
	go func() {
		for ev, err := range entries {
			if err != nil {
				return
			}
			if strings.Contains(ev.Entry.Text, "Content Security Policy") || strings.Contains(ev.Entry.Text, "Content-Security-Policy") {
				record(&b.refused, ev.Entry.Text)
			}
		}
	}()
	thrown := chromedp.Events(ctx, runtime.ExceptionThrown)
	go func() {
		for ev, err := range thrown {
			if err != nil {
				return
			}
			d := ev.ExceptionDetails
			record(&b.thrown, d.Text+" "+exceptionOf(d)+" at "+d.URL)
		}
	}()
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	hook := `(() => {
		const hit = k => () => { try { hostileRan(k + " in " + location.href) } catch (e) {} };
		for (const k of ["alert", "confirm", "prompt", "print"]) window[k] = hit(k);
	})()`
	if _, err := chromedp.Call(ctx, runtime.AddBinding, runtime.AddBindingParams{Name: "hostileRan"}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: hook}); err != nil {
		t.Fatal(err)
	}
	return b
}

// hits is what ran since the last call, and forgets it.
func (b *appBrowser) hits() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.ran
	b.ran = nil
	return r
}

// open shows url (a host page) and waits until the view has said ui/notifications/initialized.
func (b *appBrowser) open(t *testing.T, url string) {
	t.Helper()
	navigate(t, b.ctx, url)
	b.waitHost(t, "hostLog.initialized", "the view never sent ui/notifications/initialized")
}

// waitHost waits (10 s at most) until cond, evaluated in the host page, is true.
func (b *appBrowser) waitHost(t *testing.T, cond, why string) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool]("!!(window.hostLog && ("+cond+"))"))
		if err == nil && ok {
			return
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%s (waited 10 s for %s; the host's log: %s)", why, cond, b.hostJSON(t, "hostLog"))
		}
	}
}

func (b *appBrowser) hostJSON(t *testing.T, expr string) string {
	t.Helper()
	s, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string]("JSON.stringify("+expr+")"))
	return s
}

// inView evaluates js in the view's frame, in a world of its own (the view's document, not
// its script's globals), and returns its value.
func inView[T any](t *testing.T, b *appBrowser, js string) T {
	t.Helper()
	var out T
	tree, err := chromedp.Call(b.ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	// The view's frame: the host page's one frame, or the one in a sandbox proxy's.
	view := tree.FrameTree
	for depth := 0; len(view.ChildFrames) > 0; depth++ {
		if n := len(view.ChildFrames); n != 1 || depth == 2 {
			t.Fatalf("the host page's frame %d has %d frames, want the view's", depth, n)
		}
		view = view.ChildFrames[0]
	}
	if view == tree.FrameTree {
		t.Fatal("the host page has no frame")
	}
	world, err := chromedp.Call(b.ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: view.Frame.ID, WorldName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	res, err := chromedp.Call(b.ctx, runtime.Evaluate, runtime.EvaluateParams{Expression: js, ContextID: world.ExecutionContextID, ReturnByValue: &yes, AwaitPromise: &yes})
	if err != nil {
		t.Fatalf("in the view: %s: %v", js, err)
	}
	if res.ExceptionDetails != nil {
		t.Fatalf("in the view: %s: %s", js, res.ExceptionDetails.Text+" "+exceptionOf(res.ExceptionDetails))
	}
	if err := json.Unmarshal(res.Result.Value, &out); err != nil {
		t.Fatalf("in the view: %s gave %s: %v", js, res.Result.Value, err)
	}
	return out
}

// viewText is what the view shows, as the person reads it.
func viewText(t *testing.T, b *appBrowser) string {
	t.Helper()
	return inView[string](t, b, `document.body ? document.body.innerText : ""`)
}

// waitView waits (10 s at most) until the view says want.
func waitView(t *testing.T, b *appBrowser, want string) string {
	t.Helper()
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		got := viewText(t, b)
		if strings.Contains(got, want) {
			return got
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the view never said %q; it says:\n%s", want, got)
		}
	}
}

// clickInView clicks, with the mouse, the middle of the view's button or link whose text is
// label, as a person does.
func clickInView(t *testing.T, b *appBrowser, label string) {
	t.Helper()
	at := inView[[]float64](t, b, fmt.Sprintf(`(() => {
		const e = [...document.querySelectorAll("button, a, [role=button]")].find(e => e.innerText.trim() === %q);
		if (!e) return [];
		e.scrollIntoView({block: "center"});
		const r = e.getBoundingClientRect();
		return [r.left + r.width / 2, r.top + r.height / 2];
	})()`, label))
	if len(at) != 2 {
		t.Fatalf("the view has no %q; it says:\n%s", label, viewText(t, b))
	}
	frame, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]float64](`(() => { const r = document.getElementById("view").getBoundingClientRect(); return [r.left, r.top, r.width, r.height] })()`))
	if err != nil {
		t.Fatal(err)
	}
	if at[0] < 0 || at[1] < 0 || at[0] > frame[2] || at[1] > frame[3] {
		t.Fatalf("the view's %q is at (%.0f, %.0f), outside its %.0f × %.0f px frame: a person can't reach it", label, at[0], at[1], frame[2], frame[3])
	}
	if err := chromedp.Do(b.ctx, chromedp.MouseClickXY(frame[0]+at[0], frame[1]+at[1])); err != nil {
		t.Fatal(err)
	}
}

// checkContained: since the last check, the browser asked for nothing but the host's own
// page, the view and the host's /call (no other origin, not even the server's), no
// Content-Security-Policy refused anything, and no script threw.
func (b *appBrowser) checkContained(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	requests, refused, thrown := b.requests, b.refused, b.thrown
	b.requests, b.refused, b.thrown = nil, nil, nil
	b.mu.Unlock()
	for _, u := range requests {
		if !strings.HasPrefix(u, b.host.page.URL+"/") && u != b.host.sandbox.URL+"/proxy" && !strings.HasPrefix(u, "data:") && u != "about:srcdoc" {
			t.Errorf("the browser asked for %s, outside the host and its view", u)
		}
	}
	for _, r := range refused {
		t.Errorf("the view's CSP refused: %s", r)
	}
	for _, e := range thrown {
		t.Errorf("a script threw: %s", e)
	}
}

func exceptionOf(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

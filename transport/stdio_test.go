package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/wait"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

const initializeLine = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// testServer is an MCP server with the tools the stdio tests need: echo answers its text,
// wait says on waiting that a call waits and blocks until release is closed, boom panics.
// calls counts the calls that reached a tool.
type testServer struct {
	*server.MCPServer
	release chan struct{}
	waiting chan struct{} // a value for each call of wait, as it begins to wait
	calls   atomic.Int64
}

func newTestServer(t *testing.T) *testServer {
	s := &testServer{MCPServer: server.NewMCPServer("test", "1"), release: make(chan struct{}), waiting: make(chan struct{}, 64)}
	t.Cleanup(func() {
		select {
		case <-s.release:
		default:
			close(s.release)
		}
	})
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text")), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.calls.Add(1)
		return mcp.NewToolResultText(req.GetString("text", "")), nil
	})
	s.AddTool(mcp.NewTool("wait"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.calls.Add(1)
		s.waiting <- struct{}{}
		<-s.release
		return mcp.NewToolResultText("released"), nil
	})
	s.AddTool(mcp.NewTool("boom"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.calls.Add(1)
		panic("a secret detail")
	})
	return s
}

func callLine(id any, tool, text string) string {
	raw, _ := json.Marshal(id)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":{"text":%q}}}`, raw, tool, text)
}

// lockedBuffer is what ServeStdio writes to, read while it may still write.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// answers are the messages written so far, by id (JSON); those with id null under "null".
func (l *lockedBuffer) answers(t *testing.T) map[string][]map[string]any {
	t.Helper()
	l.mu.Lock()
	out := l.b.String()
	l.mu.Unlock()
	got := map[string][]map[string]any{}
	for line := range strings.Lines(out) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("an answer that isn't one JSON line: %.200q", line)
		}
		id, _ := json.Marshal(m["id"])
		got[string(id)] = append(got[string(id)], m)
	}
	return got
}

func text(m map[string]any) (string, bool) {
	r, _ := m["result"].(map[string]any)
	content, _ := r["content"].([]any)
	if len(content) == 0 {
		return "", false
	}
	first, _ := content[0].(map[string]any)
	s, _ := first["text"].(string)
	isError, _ := r["isError"].(bool)
	return s, isError
}

func errorOf(m map[string]any) (code float64, message string) {
	e, _ := m["error"].(map[string]any)
	code, _ = e["code"].(float64)
	message, _ = e["message"].(string)
	return code, message
}

// Every request read before the end of input is answered, more of them than there are
// workers, and the last one too though its line has no line break. A notification, a
// response and blank lines get no answer; a line that isn't JSON gets a parse error.
func TestStdioAnswersEveryRequestRead(t *testing.T) {
	srv := newTestServer(t)
	var in strings.Builder
	in.WriteString(initializeLine + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n\n  \n")
	in.WriteString(`{"jsonrpc":"2.0","id":99,"result":{}}` + "\n")
	in.WriteString("{not json\r\n")
	const n = 5 * stdioWorkers
	for i := 1; i <= n; i++ {
		in.WriteString(callLine(i, "echo", fmt.Sprintf("call %d", i)) + "\r\n")
	}
	in.WriteString(callLine("last", "echo", "the last"))
	var out lockedBuffer
	if err := ServeStdio(context.Background(), srv.MCPServer, strings.NewReader(in.String()), &out, time.Second); err != nil {
		t.Fatal(err)
	}
	got := out.answers(t)
	for i := 1; i <= n; i++ {
		a := got[fmt.Sprint(i)]
		if len(a) != 1 {
			t.Fatalf("request %d: %d answers", i, len(a))
		}
		if s, isError := text(a[0]); s != fmt.Sprintf("call %d", i) || isError {
			t.Errorf("request %d answered %q (isError %v)", i, s, isError)
		}
	}
	if s, _ := text(got[`"last"`][0]); s != "the last" {
		t.Errorf("the last line, without its line break: %v", got[`"last"`])
	}
	if len(got["99"]) != 0 {
		t.Errorf("a response was answered: %v", got["99"])
	}
	if nulls := got["null"]; len(nulls) != 1 {
		t.Errorf("id null: %v, want one parse error", nulls)
	} else if code, _ := errorOf(nulls[0]); code != mcp.PARSE_ERROR {
		t.Errorf("a line that isn't JSON: %v", nulls[0])
	}
	if want := 1 + 1 + n + 1; len(got) != want { // init, null, the calls, last, and nothing else
		t.Errorf("%d distinct ids answered, want %d: %v", len(got), want, got)
	}
}

// xs reads as n bytes 'x' without holding them.
type xs struct{ n int }

func (r *xs) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

// A line over MaxBody is answered with an error naming the limit and skipped, and the
// next line is read and answered.
func TestStdioSkipsALineOverTheLimit(t *testing.T) {
	srv := newTestServer(t)
	in := io.MultiReader(
		strings.NewReader(initializeLine+"\n"+`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`),
		&xs{MaxBody},
		strings.NewReader(`"}}}`+"\n"+callLine(2, "echo", "after")+"\n"),
	)
	var out lockedBuffer
	if err := ServeStdio(context.Background(), srv.MCPServer, in, &out, time.Second); err != nil {
		t.Fatal(err)
	}
	got := out.answers(t)
	if code, msg := errorOf(got["null"][0]); code != mcp.INVALID_REQUEST || !strings.Contains(msg, "at most 64 MiB") {
		t.Errorf("the long line: %v", got["null"])
	}
	if s, _ := text(got["2"][0]); s != "after" {
		t.Errorf("the line after it: %v", got["2"])
	}
	if len(got["1"]) != 0 || srv.calls.Load() != 1 {
		t.Errorf("the long line reached the tool: %v, %d calls", got["1"], srv.calls.Load())
	}
}

// A tools/call with a string longer than any text may be is answered with the tools'
// refusal, naming the argument, before any tool sees it.
func TestStdioRefusesAnOversizedTextAtOnce(t *testing.T) {
	srv := newTestServer(t)
	in := initializeLine + "\n" + callLine(1, "echo", strings.Repeat("é", docstore.MaxText/2+1)) + "\n"
	var out lockedBuffer
	if err := ServeStdio(context.Background(), srv.MCPServer, strings.NewReader(in), &out, time.Second); err != nil {
		t.Fatal(err)
	}
	a := out.answers(t)["1"]
	if s, isError := text(a[0]); !isError || !strings.Contains(s, "a text is at most 8 MiB, this one is 8.0 MiB") {
		t.Errorf("answered %q (isError %v)", s, isError)
	}
	if srv.calls.Load() != 0 {
		t.Errorf("the tool was called")
	}
}

// A tool that panics is answered with an internal error that doesn't repeat the panic's
// words, and the calls after it are served.
func TestStdioAnswersAPanic(t *testing.T) {
	srv := newTestServer(t)
	in := initializeLine + "\n" + callLine(1, "boom", "") + "\n" + callLine(2, "echo", "still here") + "\n"
	var out lockedBuffer
	if err := ServeStdio(context.Background(), srv.MCPServer, strings.NewReader(in), &out, time.Second); err != nil {
		t.Fatal(err)
	}
	got := out.answers(t)
	if code, msg := errorOf(got["1"][0]); code != mcp.INTERNAL_ERROR || strings.Contains(msg, "secret") {
		t.Errorf("the panic: %v", got["1"])
	}
	if s, _ := text(got["2"][0]); s != "still here" {
		t.Errorf("after the panic: %v", got["2"])
	}
}

// When ctx ends, no more lines are read; a call in flight that finishes within stopAfter
// is answered, and ServeStdio returns after stopAfter though one never finishes.
func TestStdioStopsWhenTold(t *testing.T) {
	srv := newTestServer(t)
	inR, inW := io.Pipe()
	defer inW.Close()
	var out lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeStdio(ctx, srv.MCPServer, inR, &out, 300*time.Millisecond) }()
	fmt.Fprintln(inW, initializeLine)
	fmt.Fprintln(inW, callLine(1, "wait", ""))
	fmt.Fprintln(inW, callLine(2, "wait", ""))
	for range 2 {
		select {
		case <-srv.waiting:
		case <-time.After(10 * time.Second):
			t.Fatal("the calls read did not reach the tool within 10 s")
		}
	}
	cancel()
	go func() { _, _ = fmt.Fprintln(inW, callLine(3, "echo", "too late")) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return 10 s after its context ended")
	}
	got := out.answers(t)
	if len(got["1"])+len(got["2"])+len(got["3"]) != 0 {
		t.Errorf("answers after the stop: %v", got)
	}
	if srv.calls.Load() != 2 {
		t.Errorf("%d calls reached the tools, want the 2 read before the stop", srv.calls.Load())
	}
}

// mcp-go v1.6.0's JSON-RPC rules hold over stdio: a request reusing the id of one still
// running is refused (id null: its answer could be taken for the first's), and the first
// is answered once; a member name that only folds onto "method" is refused, not read as
// one. Both are answered, and the loop goes on.
func TestStdioStrictJSONRPC(t *testing.T) {
	srv := newTestServer(t)
	inR, inW := io.Pipe()
	var out lockedBuffer
	done := make(chan error, 1)
	go func() { done <- ServeStdio(context.Background(), srv.MCPServer, inR, &out, time.Second) }()
	fmt.Fprintln(inW, initializeLine)
	fmt.Fprintln(inW, callLine(7, "wait", ""))
	select {
	case <-srv.waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not reach the tool within 10 s")
	}
	fmt.Fprintln(inW, callLine(7, "echo", "the same id"))
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":8,"Method":"tools/call","params":{"name":"echo","arguments":{"text":"folded"}}}`)
	fmt.Fprintln(inW, callLine(9, "echo", "after"))
	wait.Until(t, 10*time.Second, "the answer to id 9", func() bool { return len(out.answers(t)["9"]) > 0 })
	close(srv.release)
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return 10 s after its input ended")
	}
	got := out.answers(t)
	if a := got["7"]; len(a) != 1 {
		t.Errorf("id 7: %d answers, want the first call's only: %v", len(a), a)
	} else if s, _ := text(a[0]); s != "released" {
		t.Errorf("id 7 answered %v, want the first call's answer", a[0])
	}
	if a := got["null"]; len(a) != 1 {
		t.Errorf("id null: %v, want the reused id refused", a)
	} else if code, msg := errorOf(a[0]); code != mcp.INVALID_REQUEST {
		t.Errorf("the reused id: %v %q, want invalid request", code, msg)
	}
	if a := got["8"]; len(a) != 1 {
		t.Errorf("id 8: %v, want one refusal", a)
	} else if code, _ := errorOf(a[0]); code == 0 {
		t.Errorf("a folded member name was read as method: %v", a[0])
	}
	if a := got["9"]; len(a) != 1 {
		t.Errorf("id 9: %v, want one answer", a)
	} else if s, _ := text(a[0]); s != "after" {
		t.Errorf("the call after: %v", got["9"])
	}
	if srv.calls.Load() != 2 {
		t.Errorf("%d calls reached the tools, want the first 7 and 9", srv.calls.Load())
	}
}

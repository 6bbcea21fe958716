package reliability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

// rawStdio is the testbin.Path serving stdio, written to and read from line by line, as no
// MCP client library would.
type rawStdio struct {
	t       *testing.T
	stdin   io.WriteCloser
	lines   chan []byte
	pending []map[string]any // answers read while looking for another
}

// startRawStdio starts the testbin.Path with args ("serve", or a client config's other
// forms: none, flags alone) on data.
func startRawStdio(t *testing.T, data string, args ...string) *rawStdio {
	t.Helper()
	cmd := exec.Command(testbin.Path, args...)
	cmd.Env = append(os.Environ(), serverEnv(data)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rawStdio{t: t, stdin: stdin, lines: make(chan []byte, 16)}
	go func() {
		br := bufio.NewReader(stdout)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				r.lines <- line
			}
			if err != nil {
				close(r.lines)
				return
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Errorf("the stdio server did not end within 10s of its stdin closing")
		}
		if t.Failed() {
			t.Logf("stderr:\n%s", stderr.String())
		}
	})
	return r
}

// send writes line (a newline is added) to the server's stdin.
func (r *rawStdio) send(line []byte) {
	r.t.Helper()
	if _, err := r.stdin.Write(append(line, '\n')); err != nil {
		r.t.Fatalf("writing to the server: %v", err)
	}
}

// answer reads the server's answer whose id is id (nil: an answer with a null id).
func (r *rawStdio) answer(id any) map[string]any {
	r.t.Helper()
	want, _ := json.Marshal(id)
	match := func(m map[string]any) bool {
		got, _ := json.Marshal(m["id"])
		return bytes.Equal(got, want)
	}
	for i, m := range r.pending {
		if match(m) {
			r.pending = append(r.pending[:i], r.pending[i+1:]...)
			return m
		}
	}
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				r.t.Fatalf("the server closed stdout, waiting for the answer to id %s", want)
			}
			m := r.message(line)
			if _, isAnswer := m["id"]; !isAnswer {
				continue // a notification
			}
			if match(m) {
				return m
			}
			r.pending = append(r.pending, m)
		case <-timeout:
			r.t.Fatalf("no answer to id %s within 20s", want)
		}
	}
}

// message is a line the server wrote, which must be a JSON-RPC message: stdout is the
// transport's alone.
func (r *rawStdio) message(line []byte) map[string]any {
	r.t.Helper()
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil || m["jsonrpc"] != "2.0" {
		r.t.Fatalf("the server wrote a line that is not a JSON-RPC message: %q", line)
	}
	return m
}

// end closes the server's stdin and reads what it writes until it ends (at most 10s), each
// line a JSON-RPC message.
func (r *rawStdio) end() {
	r.t.Helper()
	r.stdin.Close()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				return
			}
			r.message(line)
		case <-timeout:
			r.t.Fatal("the server still wrote to stdout 10s after its stdin closed")
		}
	}
}

// alive checks the server still answers a call.
func (r *rawStdio) alive(after string, id int) {
	r.t.Helper()
	r.send(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_documents","arguments":{}}}`, id))
	if m := r.answer(id); m["result"] == nil {
		r.t.Fatalf("after %s, list_documents got %v", after, m)
	}
}

func errorCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(float64)
	return int(code)
}

func toolText(m map[string]any) (string, bool) {
	res, _ := m["result"].(map[string]any)
	content, _ := res["content"].([]any)
	var b strings.Builder
	for _, c := range content {
		if tc, ok := c.(map[string]any); ok {
			s, _ := tc["text"].(string)
			b.WriteString(s)
		}
	}
	isError, _ := res["isError"].(bool)
	return b.String(), isError
}

const initializeLine = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestRawProtocolOnStdio writes JSON-RPC the server must refuse, a line at a time. Each gets
// its JSON-RPC error (or, for tool arguments, an error result), and the server answers the
// next call.
func TestRawProtocolOnStdio(t *testing.T) {
	t.Parallel()
	r := startRawStdio(t, newData(t), "serve")

	// A tools/call before initialize: mcp-go's stdio server answers it (there is one client
	// on stdio, and nothing to scope by session); it must not crash or hang.
	r.send([]byte(`{"jsonrpc":"2.0","id":"early","method":"tools/call","params":{"name":"list_documents","arguments":{}}}`))
	early := r.answer("early")
	if text, isError := toolText(early); isError || text != "No documents in this space yet." {
		t.Errorf("tools/call before initialize on stdio: %v; want it answered as after initialize (mcp-go does)", early)
	}
	r.send([]byte(initializeLine))
	if m := r.answer("init"); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))

	for i, tc := range []struct {
		what string
		line string
		id   any // the id the answer has: nil for null
		code int // the JSON-RPC error code wanted; 0: an error result; answered: a result that is no error
		want string
	}{
		{"not JSON", `this is not JSON`, nil, -32700, ""},
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,"method":"tools/ca`, nil, -32700, ""},
		{"an empty batch", `[]`, nil, -32700, ""},
		{"JSON-RPC 1.0", `{"jsonrpc":"1.0","id":2,"method":"ping"}`, 2.0, -32600, ""},
		{"no jsonrpc", `{"id":3,"method":"ping"}`, 3.0, -32600, ""},
		{"an unknown method", `{"jsonrpc":"2.0","id":4,"method":"documents/steal"}`, 4.0, -32601, ""},
		{"an unknown tool", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"delete_everything","arguments":{}}}`, 5.0, -32602, ""},
		{"params a string", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"list_documents"}`, 6.0, -32600, ""},
		{"no params", `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`, 7.0, -32602, ""},
		{"arguments a list", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"list_documents","arguments":[1]}}`, 8.0, 0, "as an object"},
		{"invalid UTF-8 in a text", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"write_document\",\"arguments\":{\"title\":\"Bad\",\"text\":\"a\xc3(b\"}}}", 9.0, 0, "not valid UTF-8"},
		{"invalid UTF-8 in a title", "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{\"name\":\"write_document\",\"arguments\":{\"title\":\"\xff\xfe\",\"text\":\"x\"}}}", 10.0, 0, "not valid UTF-8"},
		{"invalid UTF-8 in a name", "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"read_document\",\"arguments\":{\"document\":\"\xed\xa0\x80\"}}}", 11.0, 0, "not valid UTF-8"},
		{"invalid UTF-8 in the method", "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"ping\xff\"}", 12.0, -32601, ""},
		{"a NUL escaped in a text", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"write_document","arguments":{"title":"Nul","text":"a\u0000b"}}}`, 13.0, 0, "NUL"},
		{"a lone surrogate escaped", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"write_document","arguments":{"title":"Half","text":"a\ud800b"}}}`, 14.0, 0, "an escape of half a character"},
		// mcp-go's known limits (v1.6.0), pinned so that an upgrade that changes them is
		// noticed (docs/RELIABILITY.md, findings 7, 8): an object id is answered; a number
		// beyond float64 fails at its parse. A missing document resource is a resource not
		// found (finding 2, fixed).
		{"an id that is an object", `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, map[string]any{"x": 1.0}, answered, ""},
		{"a resource URI of no template", `{"jsonrpc":"2.0","id":15,"method":"resources/read","params":{"uri":"compass://nothing"}}`, 15.0, -32002, ""},
		{"a number beyond float64 in the arguments", `{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"read_document","arguments":{"document":"x","version":1e400}}}`, 17.0, -32600, ""},
		{"a document resource that isn't", `{"jsonrpc":"2.0","id":16,"method":"resources/read","params":{"uri":"compass://document/01JDX0000000000000000000000"}}`, 16.0, -32002, ""},
	} {
		r.send([]byte(tc.line))
		m := r.answer(tc.id)
		text, isError := toolText(m)
		switch {
		case tc.code == answered:
			if m["result"] == nil {
				t.Errorf("%s: %v, want a result", tc.what, m)
			}
		case tc.code == 0 && (!isError || !strings.Contains(text, tc.want)):
			t.Errorf("%s: %v, want an error result with %q", tc.what, m, tc.want)
		case tc.code != 0 && errorCode(m) != tc.code:
			t.Errorf("%s: %v, want JSON-RPC error %d", tc.what, m, tc.code)
		}
		r.alive(tc.what, 1000+i)
	}
	r.end()
}

// Stdout is the stdio transport's while the binary serves: in every form a client's config
// may start it (no command, flags alone, serve), nothing but JSON-RPC messages reaches it,
// arguments that spell a subcommand's name included. The commands that print to stdout
// (call, docs, backup, version, ...) are each a process of their own, chosen once from the
// arguments before anything is served (command.run).
func TestServingWritesOnlyProtocolToStdout(t *testing.T) {
	t.Parallel()
	// The last serves with this floor's flags: review, a memory budget, and search by meaning
	// at an endpoint where nothing listens (its "down" warning is stderr's, said once).
	for _, args := range [][]string{nil, {"--space", "personal"}, {"serve"}, {"serve", "--agent", "north"},
		{"serve", "--review", "--memory", "64MiB", "--embeddings", "http://127.0.0.1:1/v1", "--embeddings-model", "m"}} {
		t.Run(fmt.Sprintf("%q", args), func(t *testing.T) {
			t.Parallel()
			r := startRawStdio(t, newData(t), args...)
			r.send([]byte(initializeLine))
			if m := r.answer("init"); m["result"] == nil {
				t.Fatalf("initialize: %v", m)
			}
			r.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
			for i, line := range []string{
				`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_document","arguments":{"title":"version","text":"--version\nhelp\n"}}}`,
				`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_document","arguments":{"document":"version"}}}`,
				`{"jsonrpc":"2.0","id":4,"method":"version"}`,
				`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"docs","arguments":{}}}`,
				`{"jsonrpc":"2.0","id":6,"method":"resources/list"}`,
			} {
				r.send([]byte(line))
				r.answer(i + 1)
			}
			r.send([]byte(`--version`))
			r.answer(nil) // its parse error
			r.alive("--version on stdin", 7)
			r.end()
		})
	}
	// --version among a server's flags is a flag serve doesn't have: said on stderr, stdout
	// untouched. Alone it is the version command, which serves nothing.
	cmd := exec.Command(testbin.Path, "--space", "personal", "--version")
	cmd.Env = append(os.Environ(), serverEnv(newData(t))...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err == nil || out.Len() > 0 || !strings.Contains(errb.String(), "-version") {
		t.Errorf("--version among serve's flags: err %v, stdout %q, stderr %q; want a refusal on stderr alone", err, out.String(), errb.String())
	}
}

// answered, as a wanted code, is a result that is no error.
const answered = 1

// post sends body to url with the given session, returning the status and the body.
func post(t *testing.T, url, session string, body io.Reader, chunked bool) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if chunked {
		req.ContentLength = -1
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	return res.StatusCode, strings.TrimSpace(string(b))
}

// TestRawProtocolOverHTTP does the same over streamable HTTP, with the bodies no client
// library sends.
func TestRawProtocolOverHTTP(t *testing.T) {
	t.Parallel()
	srv := startHTTP(t, newData(t))
	c := httpClient(t, srv.url, "alive") // a well-behaved session, to check the server still answers
	alive := func(after string) {
		t.Helper()
		if a := mustCall(t, c, "list_documents", nil); a.isError {
			t.Fatalf("after %s: %q", after, a.text)
		}
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_documents","arguments":{}}}`

	// Before initialize: no session yet.
	status, body := post(t, srv.url, "", strings.NewReader(call), false)
	t.Logf("tools/call before initialize over HTTP: %d %q", status, body)
	if status < 400 || status >= 500 {
		t.Errorf("tools/call before initialize: %d %q, want a 4xx", status, body)
	}
	alive("a call before initialize")
	status, body = post(t, srv.url, "mcp-session-made-up", strings.NewReader(call), false)
	if status != http.StatusNotFound {
		t.Errorf("tools/call in a made-up session: %d %q, want 404", status, body)
	}
	alive("a made-up session")

	// A session of our own, for what comes after initialize.
	req, _ := http.NewRequest("POST", srv.url, strings.NewReader(strings.Replace(initializeLine, `"init"`, "0", 1)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	session := res.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("initialize gave no session (status %d)", res.StatusCode)
	}
	post(t, srv.url, session, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), false)

	for _, tc := range []struct {
		what, body string
		status     int
		code       int
	}{
		{"not JSON", `this is not JSON`, 400, -32700},
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,"method":"tools/ca`, 400, -32700},
		{"an unknown method", `{"jsonrpc":"2.0","id":2,"method":"documents/steal"}`, 200, -32601},
		{"an unknown tool", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delete_everything","arguments":{}}}`, 200, -32602},
		{"JSON-RPC 1.0", `{"jsonrpc":"1.0","id":4,"method":"ping"}`, 0, -32600},
	} {
		status, body := post(t, srv.url, session, strings.NewReader(tc.body), false)
		var m map[string]any
		json.Unmarshal([]byte(body), &m)
		if (tc.status != 0 && status != tc.status) || errorCode(m) != tc.code {
			t.Errorf("%s: %d %q, want %d and JSON-RPC error %d", tc.what, status, body, tc.status, tc.code)
		}
		alive(tc.what)
	}

	// Bodies over the limit (64 MiB): with a Content-Length, and chunked, without one.
	over := int64(65 << 20)
	for _, chunked := range []bool{false, true} {
		start := time.Now()
		status, body := post(t, srv.url, session, io.LimitReader(zeros{}, over), chunked)
		var m map[string]any
		json.Unmarshal([]byte(body), &m)
		t.Logf("a 65 MiB body (chunked %v): %d %.120q in %s", chunked, status, body, time.Since(start).Round(time.Millisecond))
		if status != http.StatusRequestEntityTooLarge && m["error"] == nil {
			t.Errorf("a 65 MiB body (chunked %v): %d %.200q, want 413 or a JSON-RPC error", chunked, status, body)
		}
		alive("a body over the limit")
	}
}

// zeros reads as endless 'x'.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

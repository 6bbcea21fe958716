package command

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The tests here drive the built testbin.Path, as a person's MCP client would, over stdio and
// over streamable HTTP. Answers are compared with golden files in ../../../testdata/sessions;
// go test ./cmd/compass-mcp/command -update rewrites them.

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with what the server answers now")

func TestMain(m *testing.M) {
	flag.Parse()
	testbin.Main(m)
}

// newData is the --data (COMPASS_DATA) of a test's server: a file in the test's temp dir,
// or, with COMPASS_TEST_DATA=postgres://…, a PostgreSQL schema of its own (kvtest.Data).
// Tests that reopen it open it with kvtest.OpenData.
func newData(t *testing.T) string {
	t.Helper()
	return kvtest.Data(t, t.TempDir(), "compass.db")
}

// view is what fn reads in one View of s (a docstore.Store or a threads.Store): how the
// tests read back, from the data a server has let go of, what it wrote.
func view[R, T any](t testing.TB, s interface {
	View(context.Context, func(R) error) error
}, fn func(R) (T, error)) (T, error) {
	t.Helper()
	var v T
	err := s.View(t.Context(), func(r R) (err error) {
		v, err = fn(r)
		return err
	})
	return v, err
}

// versionsOf reads the versions of the document name, newest first (Reader.Log), for view.
func versionsOf(name string) func(*docstore.Reader) ([]docstore.Version, error) {
	return func(r *docstore.Reader) ([]docstore.Version, error) {
		_, vs, err := r.Log(name)
		return vs, err
	}
}

// env is what every server in these tests runs with, plus extra.
func testEnv(data string, extra ...string) []string {
	return append([]string{"COMPASS_DATA=" + data, "COMPASS_ME=ana", "COMPASS_SPACE=personal", "COMPASS_LOG=warn", "TZ=UTC"}, extra...)
}

// cli runs the testbin.Path with args and returns its stdout, failing the test on a non-zero exit.
func cli(t *testing.T, data string, args ...string) string {
	t.Helper()
	out, err := cliResult(data, "", args...)
	if err != nil {
		t.Fatalf("compass-mcp %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func cliResult(data, stdin string, args ...string) (string, error) {
	cmd := exec.Command(testbin.Path, args...)
	cmd.Env = append(os.Environ(), testEnv(data)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String() + errb.String(), err
	}
	return out.String(), nil
}

// stdioClient starts the testbin.Path as an MCP server over stdio and initializes a session.
func stdioClient(t *testing.T, data string, args ...string) *client.Client {
	t.Helper()
	c, err := client.NewStdioMCPClient(testbin.Path, testEnv(data), append([]string{"serve"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	initialize(t, c, "test-client")
	return c
}

// httpServer starts the testbin.Path serving streamable HTTP on a free loopback port, and
// returns its endpoint URL and a func that stops it (SIGINT), which also runs when the
// test ends.
func httpServer(t *testing.T, data string, args ...string) (string, func()) {
	t.Helper()
	cmd := exec.Command(testbin.Path, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), testEnv(data, "COMPASS_LOG=info")...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	var logs bytes.Buffer
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			logs.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := regexp.MustCompile(`url=(http://\S+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cmd.Process.Signal(os.Interrupt)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				t.Errorf("the HTTP server did not stop within 15s of SIGINT")
			}
			if t.Failed() {
				mu.Lock()
				t.Logf("server log:\n%s", logs.String())
				mu.Unlock()
			}
		})
	}
	t.Cleanup(stop)
	select {
	case u := <-urls:
		return u, stop
	case <-time.After(20 * time.Second):
		t.Fatalf("the HTTP server said no URL within 20s")
	}
	return "", stop
}

func httpClient(t *testing.T, url, name string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPTimeout(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	initialize(t, c, name)
	return c
}

func initialize(t *testing.T, c *client.Client, name string) *mcp.InitializeResult {
	t.Helper()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return res
}

// answer is what a tool call gave: its text, and whether it was an error result.
type answer struct {
	text    string
	isError bool
}

func callTool(t *testing.T, c *client.Client, tool string, args map[string]any) answer {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s %v: the call failed, where a tool result was wanted: %v", tool, args, err)
	}
	var b strings.Builder
	for _, content := range res.Content {
		if tc, ok := content.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return answer{text: b.String(), isError: res.IsError}
}

// step is one call of a scripted session.
type step struct {
	tool string
	args map[string]any
}

var (
	ulidRE = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)
	timeRE = regexp.MustCompile(`\b\d{4}-\d\d-\d\d \d\d:\d\d\b`)
)

// masker replaces ids by <id1>, <id2>, ... in the order they first appear, and times by
// <time>, so that goldens compare what matters: which id is which, not its value.
type masker map[string]string

func (m masker) mask(s string) string {
	s = ulidRE.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := m[id]; !ok {
			m[id] = fmt.Sprintf("<id%d>", len(m)+1)
		}
		return m[id]
	})
	return timeRE.ReplaceAllString(s, "<time>")
}

// runSession runs steps on c and returns the transcript: each call and its masked answer,
// as txtar files named "NN tool args".
func runSession(t *testing.T, c *client.Client, steps []step) string {
	t.Helper()
	m := masker{}
	var b strings.Builder
	for i, s := range steps {
		args, _ := json.Marshal(s.args)
		a := callTool(t, c, s.tool, s.args)
		mark := ""
		if a.isError {
			mark = " (isError)"
		}
		fmt.Fprintf(&b, "-- %02d %s %s%s --\n%s\n", i+1, s.tool, m.mask(string(args)), mark, m.mask(a.text))
	}
	return b.String()
}

// goldenWrites keeps two tests of one golden (over stdio and over HTTP), run in parallel,
// from writing it at once with -update.
var goldenWrites sync.Mutex

// golden compares got with the file testdata/sessions/name, or writes it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("..", "..", "..", "testdata", "sessions", name)
	if *update {
		goldenWrites.Lock()
		defer goldenWrites.Unlock()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/compass-mcp/command -update to make it)", err)
	}
	if d := lineDiff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}

// lineDiff shows the lines of want and got that differ, with a little context.
func lineDiff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			fmt.Fprintf(&b, "line %d:\n-%s\n+%s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

// waitExit waits at most d for cmd to end, killing it (and failing the test) if it doesn't.
func waitExit(t *testing.T, cmd *exec.Cmd, d time.Duration, what string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		t.Errorf("%s: still running after %v (killed)", what, d)
		return nil
	}
}

package reliability

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestMain(m *testing.M) { testbin.Main(m) }

// serverEnv is what every server here runs with, plus extra (later entries win).
func serverEnv(data string, extra ...string) []string {
	return append([]string{"COMPASS_DATA=" + data, "COMPASS_ME=ana", "COMPASS_SPACE=personal", "COMPASS_LOG=warn", "TZ=UTC"}, extra...)
}

// server is the testbin.Path serving streamable HTTP on a free loopback port.
type server struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{} // closed when the process has ended
	mu   sync.Mutex
	logs bytes.Buffer
}

var urlRE = regexp.MustCompile(`url=(http://\S+/mcp)`)

// startHTTP starts the testbin.Path with serve --http 127.0.0.1:0 and waits for the URL it logs.
// The process is killed when the test ends, if it still runs.
func startHTTP(t testing.TB, data string, args ...string) *server {
	t.Helper()
	return startHTTPEnv(t, data, nil, args...)
}

// startHTTPEnv is startHTTP with env added to the server's environment.
func startHTTPEnv(t testing.TB, data string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(testbin.Path, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(append(os.Environ(), serverEnv(data, "COMPASS_LOG=info")...), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.logs.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := urlRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("server log:\n%s", s.log())
		}
	})
	select {
	case s.url = <-urls:
		return s
	case <-s.done:
		t.Fatalf("the HTTP server ended before saying its URL:\n%s", s.log())
	case <-time.After(20 * time.Second):
		t.Fatalf("the HTTP server said no URL within 20s:\n%s", s.log())
	}
	return s
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// stop sends SIGINT, as a person's Ctrl-C, and waits for the process to end.
func (s *server) stop(t testing.TB) {
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		t.Errorf("the server did not stop within 15s of SIGINT")
		s.kill()
	}
}

// connectHTTP makes an initialized MCP client of url, with its own connections.
func connectHTTP(ctx context.Context, url, name string) (*client.Client, error) {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 60 * time.Second}
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPBasicClient(hc),
		// A client of a killed server can't say goodbye; that is no news here.
		transport.WithHTTPLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	if err := initialize(ctx, c, name); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func httpClient(t testing.TB, url, name string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := connectHTTP(ctx, url, name)
	if err != nil {
		t.Fatalf("connecting %s to %s: %v", name, url, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// stdioClient starts the testbin.Path as an MCP server over stdio and initializes a session.
func stdioClient(t testing.TB, data string, args ...string) *client.Client {
	t.Helper()
	c, err := client.NewStdioMCPClient(testbin.Path, serverEnv(data), append([]string{"serve"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := initialize(ctx, c, "reliability"); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

func initialize(ctx context.Context, c *client.Client, name string) error {
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	_, err := c.Initialize(ctx, req)
	return err
}

// answer is what a tool call gave: its text, and whether it was an error result.
type answer struct {
	text    string
	isError bool
}

// call calls a tool; err is a failed call (a JSON-RPC error, a dropped connection), not
// an error result.
func call(ctx context.Context, c *client.Client, tool string, args any) (answer, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return answer{}, err
	}
	var b strings.Builder
	for _, content := range res.Content {
		if tc, ok := content.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return answer{text: b.String(), isError: res.IsError}, nil
}

// mustCall calls a tool and fails the test when the call itself fails.
func mustCall(t testing.TB, c *client.Client, tool string, args any) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := call(ctx, c, tool, args)
	if err != nil {
		t.Fatalf("%s %.300v: the call failed, where a tool result was wanted: %v", tool, args, err)
	}
	return a
}

// savedRE reads a writing tool's answer: the document's id and the version made.
var savedRE = regexp.MustCompile(`^Saved \[[^\]]*\]\([^)]*/document/([0-9A-HJKMNP-TV-Z]{26})\) as version (\d+)`)

// saved returns the id and version a "Saved ... as version N" answer names.
func saved(a answer) (id string, version int, ok bool) {
	m := savedRE.FindStringSubmatch(a.text)
	if a.isError || m == nil {
		return "", 0, false
	}
	fmt.Sscan(m[2], &version)
	return m[1], version, true
}

// newData is the --data of a test's server: a file in the test's temp dir, or, with
// COMPASS_TEST_DATA=postgres://…, a PostgreSQL schema of its own (kvtest.Data).
func newData(t testing.TB) string {
	t.Helper()
	return kvtest.Data(t, t.TempDir(), "compass.db")
}

// openChecked opens the data when no server holds it (kvtest.OpenData), and first runs
// bbolt's consistency check on a bbolt file.
func openChecked(t testing.TB, data string) kvtest.Store {
	t.Helper()
	db := kvtest.OpenData(t, data)
	if errs := check(db); len(errs) > 0 {
		t.Fatalf("the data file fails bbolt's consistency check: %v", errs)
	}
	return db
}

// check runs bbolt's consistency check on db, returning what it found; a store that is not
// a bbolt file has none to run.
func check(db kv.DB) []error {
	var errs []error
	err := db.View(context.Background(), func(tx kv.Tx) error {
		btx, ok := bolt.TxOf(tx)
		if !ok {
			return nil
		}
		for err := range btx.Check() {
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return errs
}

// view returns what fn reads in one View of s (fn may run more than once, as a View's may).
func view[T any](tb testing.TB, s *docstore.Store, fn func(*docstore.Reader) (T, error)) (T, error) {
	tb.Helper()
	return docstore.ReadIn(tb.Context(), s, fn)
}

// read is a View's Read: a named document and its version (0: the latest).
func read(tb testing.TB, s *docstore.Store, name string, version int) (d docstore.Document, v docstore.Version, err error) {
	tb.Helper()
	err = s.View(tb.Context(), func(r *docstore.Reader) error {
		d, v, err = r.Read(name, version)
		return err
	})
	return d, v, err
}

// history is a View's Log: a named document and every version of it, newest first.
func history(tb testing.TB, s *docstore.Store, name string) (d docstore.Document, vs []docstore.Version, err error) {
	tb.Helper()
	err = s.View(tb.Context(), func(r *docstore.Reader) error {
		d, vs, err = r.Log(name)
		return err
	})
	return d, vs, err
}

// raceSlack is how much more time and memory a bound allows when the binary was built
// with -race (see testbin.Race): the race detector takes 5 to 10 times of both.
func raceSlack[T int64 | time.Duration](bound T) T {
	if testbin.Race {
		return bound * 8
	}
	return bound
}

// measured is exec.Command of the compass-mcp binary under GNU time when it is installed,
// so that maxRSS can read the command's own peak RSS from its stderr. (The rusage Go gets
// back won't do: Go starts a child with vfork, sharing the test's memory until exec, and
// Linux counts that memory's high-water mark in the child's Maxrss.)
func measured(args ...string) *exec.Cmd {
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		return exec.Command("/usr/bin/time", append([]string{"-f", "maxrss-kb %M", testbin.Path}, args...)...)
	}
	return exec.Command(testbin.Path, args...)
}

var maxRSSLine = regexp.MustCompile(`(?m)^maxrss-kb (\d+)$`)

// maxRSS is the peak RSS in bytes that GNU time said on stderr, or -1 without it.
func maxRSS(stderr string) int64 {
	m := maxRSSLine.FindStringSubmatch(stderr)
	if m == nil {
		return -1
	}
	var kb int64
	fmt.Sscan(m[1], &kb)
	return kb << 10
}

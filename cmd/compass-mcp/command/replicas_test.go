package command

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/roundrobin"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sessions are the store's, not a server's: two servers on one data file (bbolt's File
// lets processes take turns) answer the requests of one client in turn, as a load
// balancer without affinity would send them, in both protocol eras and with both Go SDKs'
// clients. A 2025-11-25 session begun on one is used on the other and keeps the client's
// name from initialize (versions made on either say it); a 2026-07-28 client has no
// session at all. A DELETE on one ends the session on both. The requests each client
// sent are logged (go test -run SessionsAreTheStores -v): docs/REPLICAS.md tells them.
func TestSessionsAreTheStores(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "compass.db")
	a, stopA := httpServer(t, data)
	b, stopB := httpServer(t, data)
	var titles []string
	agents := map[string]string{} // title → the agent its versions must say
	for _, lib := range []string{"mcp-go", "go-sdk"} {
		for _, version := range []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728} {
			t.Run(lib+"/"+version, func(t *testing.T) {
				rr := &roundrobin.Transport{Hosts: []string{hostPort(t, a), hostPort(t, b)}}
				name := strings.ReplaceAll(lib+"-"+version, "-", "")
				title := "Notes " + lib + " " + version
				titles, agents[title] = append(titles, title), "agent:"+name
				call, end := spreadClient(t, lib, a, rr, name, version)
				call("write_document", map[string]any{"title": title, "text": "one\n"})
				for i := range 5 {
					call("append_document", map[string]any{"document": title, "text": fmt.Sprintf("line %d", i)})
				}
				read := call("read_document", map[string]any{"document": title})
				if !strings.Contains(read, "version 6 of 6 · saved by "+name+" for ana") || !strings.Contains(read, "line 4") {
					t.Errorf("read_document: %q", read)
				}
				end()
				sent := rr.Sent()
				hosts := map[string]int{}
				var session string
				for i, s := range sent {
					hosts[s.Host]++
					t.Logf("%2d %-6s to %s  Mcp-Session-Id %-5v Mcp-Protocol-Version %-10q → %d", i+1, s.Method, map[string]string{rr.Hosts[0]: "A", rr.Hosts[1]: "B"}[s.Host], s.Session != "", s.ProtocolVersion, s.Status)
					if s.Status != http.StatusOK && s.Status != http.StatusAccepted && s.Method != http.MethodGet {
						t.Errorf("%s to %s (session %q, version %q): %d", s.Method, s.Host, s.Session, s.ProtocolVersion, s.Status)
					}
					if s.Session != "" {
						session = s.Session
					}
				}
				if len(hosts) != 2 || hosts[rr.Hosts[0]] < 4 || hosts[rr.Hosts[1]] < 4 {
					t.Errorf("requests by server: %v, want both well used", hosts)
				}
				last := sent[len(sent)-1]
				switch version {
				case mcp.ProtocolVersion20260728:
					if session != "" || last.ProtocolVersion != version {
						t.Errorf("a %s client sent session %q; its last request said version %q", version, session, last.ProtocolVersion)
					}
				default:
					if session == "" || last.ProtocolVersion != version {
						t.Errorf("a %s client sent no session (%q), or its last request said version %q", version, session, last.ProtocolVersion)
					}
					if last.Method != http.MethodDelete || last.Status != http.StatusOK {
						t.Errorf("the client's last request: %s → %d, want DELETE → 200", last.Method, last.Status)
					}
					for _, u := range []string{a, b} {
						if code, body := do(t, http.MethodPost, u, session, listCall); code != http.StatusNotFound {
							t.Errorf("a call at %s after the client ended its session: %d %q, want 404", u, code, body)
						}
					}
				}
			})
		}
	}
	stopA()
	stopB()
	db, err := bolt.Open(data, bolt.DefaultTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, title := range titles {
		vs, err := view(t, docstore.New(bolt.Wrap(db), "personal"), versionsOf(title))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if v.Author.By != agents[title] || v.Author.For != "person:ana" {
				t.Errorf("%s version %d is by %s for %s, want %s for person:ana", title, v.Number, v.Author.By, v.Author.For, agents[title])
			}
		}
	}
}

// A session outlives the server it began on: the next server on the store takes it up,
// with the client's name.
func TestSessionOutlivesItsServer(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "compass.db")
	a, stop := httpServer(t, data)
	res, body := post(t, a, strings.NewReader(initBody), nil)
	session := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d %q", res.StatusCode, body)
	}
	stop()
	b, _ := httpServer(t, data)
	write := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_document","arguments":{"title":"After","text":"x\n"}}}`
	if code, body := do(t, http.MethodPost, b, session, write); code != http.StatusOK || !strings.Contains(body, "Saved") {
		t.Fatalf("the session on the next server: %d %q", code, body)
	}
	read := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_document","arguments":{"document":"After"}}}`
	if code, body := do(t, http.MethodPost, b, session, read); code != http.StatusOK || !strings.Contains(body, "saved by raw for ana") {
		t.Errorf("read_document on the next server: %d %q, want it saved by raw (the client's name)", code, body)
	}
}

// A session busy on one server is not ended by another's idle sweep (mcp-go's sweeps what
// is idle in its own process): only unused on every server for --session-idle does it end.
//
// At the smallest scale mcp-go allows, 1 s: the first server says on its log (at debug)
// when it sweeps the session, while the second keeps it busy; then the first answers it.
// A session the store has seen unused for longer (begun on the store's clock set back:
// sessionSeen) ends on both. (The store's side, on a clock: access's
// TestSessionsEndWhenIdle.)
func TestBusySessionOutlivesAnotherServersSweep(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "compass.db")
	a, aLog := loggedServer(t, data, "--session-idle", "1s")
	b, _ := httpServer(t, data, "--session-idle", "1s")
	res, body := post(t, a, strings.NewReader(initBody), nil)
	session := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d %q", res.StatusCode, body)
	}
	// Busy on the second server (each call the next as soon as the last is answered)
	// until the first has swept it, 2 s after its last use there at the latest.
	calls := 0
	const most = 50_000 // about 25 times what a sweep takes to come here
	for deadline := time.Now().Add(20 * time.Second); !aLog.has("Sweeping expired session", session); calls++ {
		if time.Now().After(deadline) || calls == most {
			t.Fatalf("the first server did not sweep the session within 20 s or %d calls (%d made):\n%s", most, calls, aLog)
		}
		if code, body := do(t, http.MethodPost, b, session, listCall); code != http.StatusOK {
			t.Fatalf("the session in use on the second server: %d %q", code, body)
		}
	}
	t.Logf("%d calls on the second server until the first swept the session", calls)
	if code, body := do(t, http.MethodPost, a, session, listCall); code != http.StatusOK {
		t.Errorf("back on the first server, which swept it but busy on the other: %d %q, want 200", code, body)
	}
	for _, s := range []struct {
		ago  time.Duration
		want int
	}{{0, http.StatusOK}, {2 * time.Second, http.StatusNotFound}} {
		id := sessionSeen(t, data, s.ago)
		for _, u := range []string{a, b} {
			if code, body := do(t, http.MethodPost, u, id, listCall); code != s.want {
				t.Errorf("at %s, a session last used %v ago: %d %q, want %d", u, s.ago, code, body, s.want)
			}
		}
	}
}

// loggedServer is httpServer logging at debug, and its log: mcp-go's lines (a request, a
// sweep) show there.
func loggedServer(t *testing.T, data string, args ...string) (string, *processLog) {
	t.Helper()
	cmd := exec.Command(testbin.Path, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), testEnv(data, "COMPASS_LOG=debug")...)
	log := newProcessLog()
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		waitExit(t, cmd, 15*time.Second, "the HTTP server, after SIGINT")
		if t.Failed() {
			t.Logf("server log:\n%s", log)
		}
	})
	m := regexp.MustCompile(`url=(http://\S+/mcp)`).FindStringSubmatch(log.await(t, 20*time.Second, "serving MCP over streamable HTTP"))
	if m == nil {
		t.Fatalf("the HTTP server said no URL:\n%s", log)
	}
	return m[1], log
}

// spreadClient connects an MCP client (lib: mcp-go's or go-sdk's) of the given protocol
// version, whose requests rr spreads over its servers. It returns a func that calls a tool
// and gives its answer (failing the test on an error result), and one that ends the client.
func spreadClient(t *testing.T, lib, endpoint string, rr *roundrobin.Transport, name, version string) (call func(tool string, args map[string]any) string, end func()) {
	t.Helper()
	hc := &http.Client{Transport: rr, Timeout: 60 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if lib == "go-sdk" {
		c := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, nil)
		cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connecting (%s): %v", version, err)
		}
		t.Cleanup(func() { cs.Close() })
		return func(tool string, args map[string]any) string {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				t.Fatalf("%s %v: %v", tool, args, err)
			}
			var b strings.Builder
			for _, c := range res.Content {
				if tc, ok := c.(*sdk.TextContent); ok {
					b.WriteString(tc.Text)
				}
			}
			if res.IsError {
				t.Fatalf("%s %v: %s", tool, args, b.String())
			}
			return b.String()
		}, func() { cs.Close() }
	}
	c, err := client.NewStreamableHttpClient(endpoint, transport.WithHTTPBasicClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize (%s): %v", version, err)
	}
	return func(tool string, args map[string]any) string {
		t.Helper()
		a := callTool(t, c, tool, args)
		if a.isError {
			t.Fatalf("%s %v: %s", tool, args, a.text)
		}
		return a.text
	}, func() { c.Close() }
}

func hostPort(t *testing.T, endpoint string) string {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/datafile"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/roundrobin"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Sessions are the store's, not a server's: two servers on one data file (bbolt's File
// lets processes take turns) answer the requests of one client in turn, as a load
// balancer without affinity would send them, in both protocol eras. A 2025-11-25 session
// begun on one is used on the other and keeps the client's name from initialize (versions
// made on either say it); a 2026-07-28 client has no session at all. A DELETE on one
// ends the session on both.
func TestSessionsAreTheStores(t *testing.T) {
	data := filepath.Join(t.TempDir(), "compass.db")
	a, stopA := httpServer(t, data)
	b, stopB := httpServer(t, data)
	for _, version := range []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728} {
		t.Run(version, func(t *testing.T) {
			rr := &roundrobin.Transport{Hosts: []string{hostPort(t, a), hostPort(t, b)}}
			name := "Desk-" + strings.ReplaceAll(version, "-", "")
			c := spreadClient(t, a, rr, name, version)
			title := "Notes " + version
			callOK(t, c, "write_document", map[string]any{"title": title, "text": "one\n"})
			for i := range 5 {
				callOK(t, c, "append_document", map[string]any{"document": title, "text": fmt.Sprintf("line %d", i)})
			}
			read := callOK(t, c, "read_document", map[string]any{"document": title})
			if !strings.Contains(read, "version 6 of 6 · saved by "+name+" for ana") || !strings.Contains(read, "line 4") {
				t.Errorf("read_document: %q", read)
			}
			sent := rr.Sent()
			hosts := map[string]int{}
			var session string
			for _, s := range sent {
				hosts[s.Host]++
				if s.Status != http.StatusOK && s.Status != http.StatusAccepted {
					t.Errorf("%s to %s (session %q, version %q): %d", s.Method, s.Host, s.Session, s.ProtocolVersion, s.Status)
				}
			}
			if len(hosts) != 2 || hosts[rr.Hosts[0]] < 4 || hosts[rr.Hosts[1]] < 4 {
				t.Errorf("requests by server: %v, want both well used", hosts)
			}
			last := sent[len(sent)-1]
			switch version {
			case mcp.ProtocolVersion20260728:
				for _, s := range sent[1:] { // the first is server/discover, which asks
					if s.Session != "" || s.ProtocolVersion != version {
						t.Errorf("a %s request said session %q, version %q", version, s.Session, s.ProtocolVersion)
					}
				}
			default:
				session = last.Session
				if session == "" || last.ProtocolVersion != version {
					t.Errorf("the last request said session %q, version %q", session, last.ProtocolVersion)
				}
			}
			c.Close()
			if session == "" {
				return
			}
			for _, u := range []string{a, b} {
				if code, body := do(t, http.MethodPost, u, session, listCall); code != http.StatusNotFound {
					t.Errorf("a call at %s after the client ended its session: %d %q, want 404", u, code, body)
				}
			}
		})
	}
	stopA()
	stopB()
	db, err := datafile.Open(data, datafile.DefaultTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, version := range []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728} {
		_, vs, err := docstore.New(kv.BoltDB(db), "personal").History("Notes " + version)
		if err != nil {
			t.Fatal(err)
		}
		want := "agent:Desk-" + strings.ReplaceAll(version, "-", "")
		for _, v := range vs {
			if v.Author.By != want || v.Author.For != "person:ana" {
				t.Errorf("%s version %d is by %s for %s, want %s for person:ana", version, v.Number, v.Author.By, v.Author.For, want)
			}
		}
	}
}

// A session outlives the server it began on: the next server on the store takes it up,
// with the client's name.
func TestSessionOutlivesItsServer(t *testing.T) {
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
func TestBusySessionOutlivesAnotherServersSweep(t *testing.T) {
	data := filepath.Join(t.TempDir(), "compass.db")
	a, _ := httpServer(t, data, "--session-idle", "2s")
	b, _ := httpServer(t, data, "--session-idle", "2s")
	res, body := post(t, a, strings.NewReader(initBody), nil)
	session := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d %q", res.StatusCode, body)
	}
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		if code, body := do(t, http.MethodPost, b, session, listCall); code != http.StatusOK {
			t.Fatalf("the session in use on the second server: %d %q", code, body)
		}
	}
	if code, body := do(t, http.MethodPost, a, session, listCall); code != http.StatusOK {
		t.Errorf("back on the first server, idle there for 4 s but busy on the other: %d %q, want 200", code, body)
	}
	time.Sleep(3 * time.Second)
	for _, u := range []string{a, b} {
		if code, body := do(t, http.MethodPost, u, session, listCall); code != http.StatusNotFound {
			t.Errorf("at %s after 3 s unused everywhere: %d %q, want 404", u, code, body)
		}
	}
}

// spreadClient is an MCP client (mcp-go's) of the given protocol version whose requests
// rr spreads over its servers.
func spreadClient(t *testing.T, endpoint string, rr *roundrobin.Transport, name, version string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(endpoint, transport.WithHTTPBasicClient(&http.Client{Transport: rr, Timeout: 60 * time.Second}))
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
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize (%s): %v", version, err)
	}
	return c
}

// callOK calls tool and returns its answer, failing the test on an error result.
func callOK(t *testing.T, c *client.Client, tool string, args map[string]any) string {
	t.Helper()
	a := callTool(t, c, tool, args)
	if a.isError {
		t.Fatalf("%s %v: %s", tool, args, a.text)
	}
	return a.text
}

func hostPort(t *testing.T, endpoint string) string {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

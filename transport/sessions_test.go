package transport

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/tools"
)

// serveTools serves the tools on db over streamable HTTP on loopback, as compass-mcp serve
// --http does (NewHTTP, Route, an open gate), until the test ends; it returns /mcp's URL.
func serveTools(t *testing.T, db kv.DB, allowedHosts ...string) string {
	t.Helper()
	srv, err := tools.New(db, tools.Config{Space: "personal", For: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHTTP(srv, access.NewSessions(db, time.Hour), time.Hour, allowedHosts...)
	mux := http.NewServeMux()
	Route(mux, &access.Gate{Store: access.New(db).WithOwner("personal", "ana"), Hosts: allowedHosts}, "personal", h.MCP)
	h.Server.Handler = mux
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("Serve did not return 15 s after its context ended")
		}
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

const (
	initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	listCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_documents","arguments":{}}}`
)

// send makes one request to url with the session (if any) and body, and returns its
// status, its Mcp-Session-Id and its body.
func send(t *testing.T, method, url, session, body string, header ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	return res.StatusCode, res.Header.Get("Mcp-Session-Id"), string(b)
}

// A session is the store's: one server begins it, another on the same store serves it
// and ends it, and then neither knows it. A made-up session gets 404, as the transport
// says, and so does one ended.
func TestSessionsAreTheStores(t *testing.T) {
	db := kvtest.Open(t)
	a, b := serveTools(t, db), serveTools(t, db)
	code, id, body := send(t, http.MethodPost, a, "", initBody)
	if code != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %q %s", code, id, body)
	}
	for _, url := range []string{a, b} {
		if code, _, body := send(t, http.MethodPost, url, id, listCall); code != http.StatusOK || !strings.Contains(body, "No documents") {
			t.Errorf("a call in the session on %s: %d %s", url, code, body)
		}
	}
	madeUp := "mcp-session-6f1d2c7e-55b4-4a53-9a61-2f0d8c3b9e10"
	if code, _, body := send(t, http.MethodPost, a, madeUp, listCall); code != http.StatusNotFound {
		t.Errorf("a made-up session: %d %s", code, body)
	}
	if code, _, body := send(t, http.MethodDelete, b, id, ""); code != http.StatusOK {
		t.Fatalf("DELETE on the other server: %d %s", code, body)
	}
	for _, url := range []string{a, b} {
		if code, _, body := send(t, http.MethodPost, url, id, listCall); code != http.StatusNotFound {
			t.Errorf("a call after DELETE on %s: %d %s, want 404", url, code, body)
		}
	}
}

// A loopback server refuses a Host that isn't loopback (DNS rebinding) for the requests
// Guard has read for mcp-go, as mcp-go does for those it reads itself, and a page of
// another origin; its own origin is served.
func TestLoopbackRefusesOtherHostsAndOrigins(t *testing.T) {
	url := serveTools(t, kvtest.Open(t))
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	for _, tc := range []struct {
		header []string
		want   int
	}{
		{[]string{"Host", "evil.example:" + host[strings.LastIndex(host, ":")+1:]}, http.StatusForbidden},
		{[]string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{[]string{"Origin", "http://" + host}, http.StatusOK},
	} {
		if code, _, body := send(t, http.MethodPost, url, "", initBody, tc.header...); code != tc.want {
			t.Errorf("%v: %d %s, want %d", tc.header, code, body, tc.want)
		}
	}
}

// Behind a proxy that passes the client's Host on, a server with --public-url answers to
// that URL's host as well as loopback, and to nothing else, both for the POSTs Guard reads
// (Direct) and for the requests mcp-go reads itself (DELETE here).
func TestPublicURLHost(t *testing.T) {
	url := serveTools(t, kvtest.Open(t), AllowedHosts("https://compass.example.com")...)
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	port := host[strings.LastIndex(host, ":")+1:]
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"compass.example.com", true},
		{"COMPASS.example.com:443", true},
		{host, true},
		{"evil.example:" + port, false},
		{"compass.example.com.evil.example", false},
	} {
		code, _, body := send(t, http.MethodPost, url, "", initBody, "Host", tc.host)
		if (code == http.StatusOK) != tc.want || !tc.want && code != http.StatusForbidden {
			t.Errorf("POST with Host %q: %d %s, want answered %v", tc.host, code, body, tc.want)
		}
		code, _, body = send(t, http.MethodDelete, url, "", "", "Host", tc.host)
		if (code == http.StatusForbidden) == tc.want {
			t.Errorf("DELETE with Host %q: %d %s, want answered %v", tc.host, code, body, tc.want)
		}
	}
}

// rebound is mcp-go's rule: without allowed hosts a Host beyond loopback is refused only
// on a loopback listener; with them, on every listener.
func TestRebound(t *testing.T) {
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7410}
	lan := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 7410}
	for _, tc := range []struct {
		local   net.Addr
		host    string
		allowed []string
		want    bool
	}{
		{loopback, "127.0.0.1:7410", nil, false},
		{loopback, "[::1]:7410", nil, false},
		{loopback, "localhost:7410", nil, false},
		{loopback, "evil.example:7410", nil, true},
		{lan, "evil.example:7410", nil, false},
		{lan, "evil.example:7410", []string{"compass.example.com"}, true},
		{lan, "compass.example.com", []string{"compass.example.com"}, false},
		{lan, "compass.example.com:8443", []string{"compass.example.com:443"}, true},
		{lan, "compass.example.com", []string{"compass.example.com:443"}, false},
		{lan, "127.0.0.1:7410", []string{"compass.example.com"}, false},
	} {
		r, _ := http.NewRequest(http.MethodPost, "http://x/mcp", nil)
		r.Host = tc.host
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, tc.local))
		if got := rebound(r, tc.allowed); got != tc.want {
			t.Errorf("rebound(Host %q on %v, allowed %q) = %v, want %v", tc.host, tc.local, tc.allowed, got, tc.want)
		}
	}
}

func TestBindAddress(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		guarded bool
		want    string
		err     error
	}{
		{":7410", false, "127.0.0.1:7410", nil},
		{"localhost:7410", false, "localhost:7410", nil},
		{"[::1]:7410", false, "[::1]:7410", nil},
		{"0.0.0.0:7410", false, "0.0.0.0:7410", ErrUnguarded},
		{"0.0.0.0:7410", true, "0.0.0.0:7410", nil},
		{"192.0.2.1:1", false, "192.0.2.1:1", ErrUnguarded},
	} {
		got, err := BindAddress(tc.addr, tc.guarded)
		if got != tc.want || err != tc.err {
			t.Errorf("BindAddress(%q, %v) = %q, %v; want %q, %v", tc.addr, tc.guarded, got, err, tc.want, tc.err)
		}
	}
	if _, err := BindAddress("7410", true); err == nil {
		t.Error("an address without a port was taken")
	}
}

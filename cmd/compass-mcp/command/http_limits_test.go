package command

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// do sends one request with the given method, session and body, returning status and body.
func do(t *testing.T, method, url, session, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if method == http.MethodGet {
		ctx, cancel := contextTimeout(time.Second)
		defer cancel()
		req = req.WithContext(ctx)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	return res.StatusCode, string(b)
}

const listCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_documents","arguments":{}}}`

// Sessions a server doesn't know get 404, as the MCP transport says: a made-up id, one
// deleted, one unused for longer than --session-idle. mcp-go's own manager checked only the
// id's form: a made-up id worked without initialize, a deleted one still worked, and a
// swept one wrote versions as "agent" instead of the client's name.
func TestUnknownSessionsGet404(t *testing.T) {
	t.Parallel()
	data := newData(t)
	url, _ := httpServer(t, data, "--session-idle", "1s")
	open := func() string {
		res, body := post(t, url, strings.NewReader(initBody), nil)
		id := res.Header.Get("Mcp-Session-Id")
		if res.StatusCode != http.StatusOK || id == "" {
			t.Fatalf("initialize: %d %s", res.StatusCode, body)
		}
		if code, body := do(t, http.MethodPost, url, id, listCall); code != http.StatusOK {
			t.Fatalf("a call in a new session: %d %s", code, body)
		}
		return id
	}
	madeUp := "mcp-session-6f1d2c7e-55b4-4a53-9a61-2f0d8c3b9e10"
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		if code, body := do(t, method, url, madeUp, listCall); code != http.StatusNotFound {
			t.Errorf("%s with a made-up session: %d %q, want 404", method, code, body)
		}
	}
	deleted := open()
	if code, body := do(t, http.MethodDelete, url, deleted, ""); code != http.StatusOK {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	if code, body := do(t, http.MethodPost, url, deleted, listCall); code != http.StatusNotFound {
		t.Errorf("a call after DELETE: %d %q, want 404", code, body)
	}
	// The store ends a session unused for longer than the idle time (access's
	// TestSessionsEndWhenIdle, on a clock): here, 1 s after its last use. Two sessions
	// begun in the store as the server begins them, one last used just now and one 2 s
	// ago, stand for a session before and after its idle time.
	if code, body := do(t, http.MethodPost, url, sessionSeen(t, data, 0), listCall); code != http.StatusOK {
		t.Fatalf("a call in a session last used just now: %d %q", code, body)
	}
	if code, body := do(t, http.MethodPost, url, sessionSeen(t, data, 2*time.Second), listCall); code != http.StatusNotFound {
		t.Errorf("a call in a session last used 2 s ago, past the idle time: %d %q, want 404", code, body)
	}
}

// sessionSeen begins a session in the store at data, as a server open on loopback begins
// Ana's (testEnv), last used ago: on the store's clock set back (access.Sessions.WithClock),
// a session that has been idle that long, without waiting for it to be.
func sessionSeen(t *testing.T, data string, ago time.Duration) string {
	t.Helper()
	db := kvtest.OpenData(t, data)
	defer db.Close()
	then := time.Now().Add(-ago)
	id, err := access.NewSessions(db, 0).WithClock(func() time.Time { return then }).Begin(t.Context(), access.Principal{Person: "ana"}, "raw")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Refused requests close their connection (92 idle connections after 401 locked the
// token holder out), and a request whose body never comes is cut off by the read timeout
// rather than holding the connection, and its memory, for good.
func TestRefusedConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	data := newData(t)
	url, _ := httpServer(t, data, "--token", "s3cret")
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", host, len(initBody), initBody)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusUnauthorized || !res.Close {
		t.Errorf("without the token: %d, close %v; want 401 and the connection closed", res.StatusCode, res.Close)
	}
	if _, err := conn.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("reading after the 401: %v, want EOF (closed by the server)", err)
	}
}

func contextTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

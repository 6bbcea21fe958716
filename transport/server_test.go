package transport

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/compass-mcp/compass-mcp/web"
)

// serveAll serves s on a loopback port until the test ends, and returns its base URL.
func serveAll(t *testing.T, s Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
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
	return "http://" + ln.Addr().String()
}

// On one address: MCP at /mcp, OAuth's metadata naming the server as its issuer, the chat
// messages endpoint behind the gate, and the page on the other paths (announced as the
// link base, and where a browser opening /mcp is sent).
func TestServerServesEveryRoute(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	srv, err := tools.New(db, tools.Config{Space: "personal", For: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	site, err := web.New(ctx, db, web.Config{Space: "personal", Me: "ana", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	links := web.NewLinks("", db, "")
	base := serveAll(t, Server{MCP: srv, DB: db, Space: "personal", For: "ana", Idle: time.Hour, Page: site, PageAt: "/", Links: links})

	if code, id, body := send(t, http.MethodPost, base+"/mcp", "", initBody); code != http.StatusOK || id == "" {
		t.Fatalf("initialize at /mcp: %d %q %s", code, id, body)
	}
	code, _, body := send(t, http.MethodGet, base+"/.well-known/oauth-authorization-server", "", "")
	var meta struct{ Issuer string }
	if err := json.Unmarshal([]byte(body), &meta); code != http.StatusOK || err != nil || meta.Issuer != base {
		t.Errorf("OAuth's metadata: %d %s; want the issuer %s", code, body, base)
	}
	if code, _, body := send(t, http.MethodGet, base+"/", "", ""); code != http.StatusUnauthorized {
		t.Errorf("the page, not signed in: %d %s; want 401", code, body)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/mcp", nil)
	req.Header.Set("Accept", "text/html")
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if resp, err := noFollow.Do(req); err != nil {
		t.Error(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Errorf("a browser at /mcp: %d to %q; want sent to the page at /", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := links.Base(); got != base {
		t.Errorf("the link base: %q; want the server's address %s", got, base)
	}
	// The messages endpoint is served: a message with no text is refused, naming the field.
	if code, _, body := send(t, http.MethodPost, base+"/spaces/personal/conversations/c1/messages", "", `{"from":"person:ana"}`); code != http.StatusBadRequest || !strings.Contains(body, "text") {
		t.Errorf("a message without text: %d %s; want 400 naming the field", code, body)
	}
}

// A public URL OAuth can't take as its issuer is a *PublicURLError, and nothing is served.
func TestServerRefusesABadPublicURL(t *testing.T) {
	db := kvtest.Open(t)
	srv, err := tools.New(db, tools.Config{Space: "personal", For: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = Server{MCP: srv, DB: db, Space: "personal", For: "ana", PublicURL: "https://compass.example.com/mcp"}.Serve(context.Background(), ln)
	var pu *PublicURLError
	if !errors.As(err, &pu) || !strings.HasPrefix(err.Error(), "--public-url: ") {
		t.Fatalf("a public URL with a path: %v; want a *PublicURLError", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Errorf("the listener is still open after the refusal")
	}
}

package web

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
)

// Start serves the page on its address with the server it is given, announced while it
// serves (Served finds it) and withdrawn once it stops; a busy address fails, unless
// busyOK, when the page moves to a free port of the same host.
func TestStart(t *testing.T) {
	db, path := openStore(t)
	cfg := Config{Space: "personal", Me: "ana", Path: path, Poll: 20 * time.Millisecond}
	ctx, stop := context.WithCancel(context.Background())
	hs := &http.Server{ReadHeaderTimeout: 7 * time.Second}
	p, err := Start(ctx, db, "127.0.0.1:0", false, cfg, hs)
	if err != nil {
		t.Fatal(err)
	}
	if p.Server != hs || !strings.HasPrefix(p.URL, "http://127.0.0.1:") {
		t.Fatalf("Start = %+v; want served with the server given, on loopback", p)
	}
	resp, err := http.Get(p.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the page, not signed in: %d; want 401", resp.StatusCode)
	}
	if url, ok := Served(context.Background(), db, path); !ok || url != p.URL {
		t.Errorf("Served = %q, %v; want %s", url, ok, p.URL)
	}

	// Its address is now taken.
	taken := strings.TrimPrefix(p.URL, "http://")
	if _, err := Start(ctx, db, taken, false, cfg, &http.Server{}); err == nil {
		t.Errorf("a page on a taken address without busyOK: no error")
	}
	// With busyOK, and this data's page served already: no page here, and no failure.
	again, err := Start(ctx, db, "127.0.0.1:0", true, cfg, &http.Server{})
	if err != nil || again == nil {
		t.Fatalf("a free address: %+v, %v", again, err)
	}
	if twice, err := Start(ctx, db, strings.TrimPrefix(again.URL, "http://"), true, cfg, &http.Server{}); err != nil || twice != nil {
		t.Errorf("busyOK where this data's page is served: %+v, %v; want no page and no error", twice, err)
	}
	// With busyOK, and something that is no page holding the address: another port.
	other, otherPath := openStore(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	moved, err := Start(ctx, other, ln.Addr().String(), true, Config{Space: "personal", Me: "ana", Path: otherPath}, &http.Server{})
	if err != nil || moved == nil || moved.URL == "http://"+ln.Addr().String() || !strings.HasPrefix(moved.URL, "http://127.0.0.1:") {
		t.Fatalf("busyOK on an address something else holds: %+v, %v; want the page on another port of the host", moved, err)
	}

	stop()
	if err := <-p.Done; err != nil {
		t.Errorf("the page ended with %v", err)
	}
	<-moved.Done
	<-again.Done
	if url, ok := Served(context.Background(), other, otherPath); ok {
		t.Errorf("after the pages stopped, Served = %q", url)
	}
	if url, ok := Served(context.Background(), db, path); ok {
		t.Errorf("after the pages stopped, Served = %q", url)
	}
}

// Mount serves the site beside the server's own routes, closes it on shutdown, and
// announces it until the func it returns is called.
func TestMount(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	srv := httptest.NewUnstartedServer(mux)
	srv.Start()
	defer srv.Close()
	withdraw := f.site.Mount(ctx, mux, srv.Config, f.db, srv.URL)
	for path, want := range map[string]int{"/mcp": http.StatusTeapot, "/": http.StatusUnauthorized} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d; want %d", path, resp.StatusCode, want)
		}
	}
	path := ""
	if f.site.cfg.Path != "" {
		path = f.site.cfg.Path
	}
	if url, ok := Served(context.Background(), f.db, path); !ok || url != srv.URL {
		t.Errorf("Served = %q, %v; want %s", url, ok, srv.URL)
	}
	withdraw()
	if url, ok := Served(context.Background(), f.db, path); ok {
		t.Errorf("after withdraw, Served = %q", url)
	}
}

// The agent is handed a sign-in link only on a one-person server whose page is on this
// machine: a loopback http base without a path, and no token rows.
func TestAgentSignIn(t *testing.T) {
	ctx := t.Context()
	db, _ := openStore(t)
	for _, base := range []string{NoPage, "http://10.0.0.1:7411", "https://127.0.0.1:7411", "http://127.0.0.1:7411/page", "http://compass.example.com", "::"} {
		if link, ok, err := AgentSignIn(ctx, db, base, "ana", "personal", "/", nil); ok || link != "" || err != nil {
			t.Errorf("base %q: %q, %v, %v; want no link", base, link, ok, err)
		}
	}
	for _, base := range []string{"http://127.0.0.1:7411", "http://localhost:7411", "http://[::1]:7411"} {
		link, ok, err := AgentSignIn(ctx, db, base, "ana", "personal", "/document/X", slog.New(slog.DiscardHandler))
		code, found := strings.CutPrefix(link, base+"/signin?code=")
		if err != nil || !ok || !found {
			t.Errorf("base %q: %q, %v, %v; want a sign-in link there", base, link, ok, err)
			continue
		}
		if g, err := access.New(db).WithOwner("personal", "ana").CodeFor(ctx, code); err != nil || g.Person != "ana" || g.Space != "personal" || g.Next != "/document/X" {
			t.Errorf("base %q: the link's code is for %+v, %v; want ana in personal, to /document/X", base, g, err)
		}
	}
	if _, _, err := access.New(db).AddToken(ctx, access.NewToken{Person: "bob"}); err != nil {
		t.Fatal(err)
	}
	if link, ok, err := AgentSignIn(ctx, db, "http://127.0.0.1:7411", "ana", "personal", "/", nil); ok || link != "" || err != nil {
		t.Errorf("a server with tokens: %q, %v, %v; want no link", link, ok, err)
	}
}

package transport

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A panic under the guard is answered 500 without the panic's words, not a dropped connection.
func TestGuardRecoversPanics(t *testing.T) {
	h := Guard(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret /home/ana/path detail")
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}")))
	if w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), "secret") {
		t.Errorf("a panic: %d %q", w.Code, w.Body.String())
	}
}

// Guard refuses a browser page of another origin, by Sec-Fetch-Site where the browser
// sends it and by Origin against Host where it doesn't, for every method: another port or
// another loopback address is another origin; the server's own origin, over http or https
// (behind a proxy that speaks TLS), and a client that sends neither header are let by.
func TestGuardRefusesOtherOrigins(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := Guard(ok)
	for _, tc := range []struct {
		origin, fetchSite, host string
		want                    bool
	}{
		{"http://127.0.0.1:7410", "", "127.0.0.1:7410", true},
		{"https://127.0.0.1:7410", "", "127.0.0.1:7410", true},
		{"http://localhost:3000", "", "127.0.0.1:7410", false},
		{"http://localhost:9999", "", "localhost:7410", false},
		{"https://127.0.0.1:7419", "", "127.0.0.1:7410", false},
		{"http://127.0.0.2", "", "127.0.0.1:7410", false},
		{"http://[::1]:1", "", "localhost:7410", false},
		{"https://compass.example.com", "", "compass.example.com", true},
		{"http://evil.example.com", "", "127.0.0.1:7410", false},
		{"http://evil.example.com", "", "compass.example.com", false},
		{"null", "", "127.0.0.1:7410", false},
		{"", "", "127.0.0.1:7410", true},
		// A browser that says where the request comes from is believed.
		{"http://127.0.0.1:7410", "same-origin", "127.0.0.1:7410", true},
		{"", "none", "127.0.0.1:7410", true},
		{"http://localhost:3000", "same-site", "localhost:7410", false},
		{"http://evil.example.com", "cross-site", "127.0.0.1:7410", false},
		{"", "cross-site", "127.0.0.1:7410", false},
	} {
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete, http.MethodOptions} {
			r := httptest.NewRequest(method, "/mcp", strings.NewReader("{}"))
			r.Host = tc.host
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			if tc.fetchSite != "" {
				r.Header.Set("Sec-Fetch-Site", tc.fetchSite)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if got := w.Code == http.StatusNoContent; got != tc.want || (!got && w.Code != http.StatusForbidden) {
				t.Errorf("%s with Origin %q, Sec-Fetch-Site %q to Host %q: %d, want let by %v", method, tc.origin, tc.fetchSite, tc.host, w.Code, tc.want)
			}
		}
	}
}

func TestOversized(t *testing.T) {
	big := strings.Repeat("x", 9<<20)
	esc := strings.Repeat(`\u00e9`, 5<<20) // 10 MiB once decoded
	for _, tc := range []struct {
		body    string
		id, arg string
		decode  int
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_document","arguments":{"title":"T","text":"` + big + `"}}}`, "7", "text", len(big)},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"old" : "` + esc + `"}},"id":"a,}b"}`, `"a,}b"`, "old", 10 << 20},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + big + `"}}`, "", "", 0},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"text":"short","method":"id"}}}`, "", "", 0},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"text":"` + big + `"}}}`, "", "", 0},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":["` + big + `"]}}`, "2", "", len(big)},
	} {
		id, arg, n, found := oversized([]byte(tc.body))
		if string(id) != tc.id || arg != tc.arg || n != tc.decode || found != (tc.id != "") {
			t.Errorf("oversized(%.80s...) = %s, %q, %d, %v; want %s, %q, %d", tc.body, id, arg, n, found, tc.id, tc.arg, tc.decode)
		}
	}
}

// A browser opening /mcp is sent to the page, or told what the endpoint is when there is
// none; an MCP client's GET stream and anything else go on.
func TestToPage(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for _, tc := range []struct {
		pageAt, path, accept string
		want                 int
	}{
		{"/", "/mcp", "text/html,application/xhtml+xml", http.StatusSeeOther},
		{"/", "/spaces/team/mcp", "text/html", http.StatusSeeOther},
		{"", "/mcp", "text/html", http.StatusOK},
		{"/", "/mcp", "text/event-stream", http.StatusNoContent},
		{"/", "/mcp", "text/html, text/event-stream", http.StatusNoContent},
		{"/", "/document/x", "text/html", http.StatusNoContent},
	} {
		r := httptest.NewRequest(http.MethodGet, tc.path, nil)
		r.Header.Set("Accept", tc.accept)
		w := httptest.NewRecorder()
		ToPage(tc.pageAt, next).ServeHTTP(w, r)
		if w.Code != tc.want || (tc.want == http.StatusSeeOther && w.Header().Get("Location") != tc.pageAt) {
			t.Errorf("GET %s, Accept %q, page at %q: %d %v, want %d", tc.path, tc.accept, tc.pageAt, w.Code, w.Header(), tc.want)
		}
	}
}

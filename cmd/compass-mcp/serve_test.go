package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A panic under the guard is answered 500 without the panic's words, not a dropped connection.
func TestGuardRecoversPanics(t *testing.T) {
	h := guard("", http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret /home/ana/path detail")
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}")))
	if w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), "secret") {
		t.Errorf("a panic: %d %q", w.Code, w.Body.String())
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		origin, host string
		want         bool
	}{
		{"http://127.0.0.1:7410", "127.0.0.1:7410", true},
		{"https://127.0.0.1:7410", "127.0.0.1:7410", true},
		{"http://localhost:3000", "127.0.0.1:7410", false},
		{"http://localhost:9999", "localhost:7410", false},
		{"https://127.0.0.1:7419", "127.0.0.1:7410", false},
		{"http://127.0.0.2", "127.0.0.1:7410", false},
		{"http://[::1]:1", "localhost:7410", false},
		{"https://compass.example.com", "compass.example.com", true},
		{"http://evil.example.com", "127.0.0.1:7410", false},
		{"http://evil.example.com", "compass.example.com", false},
		{"null", "127.0.0.1:7410", false},
	} {
		if got := sameOrigin(tc.origin, tc.host); got != tc.want {
			t.Errorf("sameOrigin(%q, %q) = %v", tc.origin, tc.host, got)
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

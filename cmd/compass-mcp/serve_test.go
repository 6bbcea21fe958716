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
		{"http://localhost:3000", "127.0.0.1:7410", true},
		{"http://[::1]:1", "localhost:7410", true},
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

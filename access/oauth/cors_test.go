package oauth

import (
	"net/http"
	"strings"
	"testing"
)

// Browser-based clients discover, register and get tokens from another origin: every public
// endpoint answers a CORS preflight for its own method, and its answers may be read by any
// origin; a method it doesn't take is refused with Allow.
func TestCrossOriginCalls(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ path, method, headers string }{
		{"/.well-known/oauth-authorization-server", "GET", "MCP-Protocol-Version"},
		{"/.well-known/oauth-protected-resource/mcp", "GET", "MCP-Protocol-Version"},
		{"/register", "POST", "Content-Type"},
		{"/token", "POST", "Authorization"},
	} {
		req, _ := http.NewRequest(http.MethodOptions, h.url+tc.path, nil)
		req.Header.Set("Origin", "https://app.example.com")
		req.Header.Set("Access-Control-Request-Method", tc.method)
		res, err := h.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "*" ||
			res.Header.Get("Access-Control-Allow-Methods") != tc.method+", OPTIONS" ||
			!strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), tc.headers) {
			t.Errorf("OPTIONS %s: %d %v", tc.path, res.StatusCode, res.Header)
		}
		other := http.MethodDelete
		req, _ = http.NewRequest(other, h.url+tc.path, nil)
		res, err = h.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(res.Header.Get("Allow"), tc.method) ||
			res.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s %s: %d %v", other, tc.path, res.StatusCode, res.Header)
		}
	}
}

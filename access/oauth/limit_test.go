package oauth

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Unauthenticated requests (/token, /register) are limited per client address: a burst of
// limitBurst, then limitRate a second; the next is answered 429 with Retry-After and
// touches nothing. Another address isn't held up; the addresses remembered are bounded.
func TestUnauthenticatedRequestsAreLimitedPerAddress(t *testing.T) {
	h := newHarness(t)
	send := func(path, from string) *http.Response {
		t.Helper()
		body, ct := url.Values{"grant_type": {"refresh_token"}, "client_id": {"cmc_x"}, "refresh_token": {"cmr_madeup"}}.Encode(), "application/x-www-form-urlencoded"
		if path == "/register" {
			body, ct = "{", "application/json"
		}
		req, _ := http.NewRequest("POST", h.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", ct)
		if from != "" {
			req.Header.Set("X-Forwarded-For", "203.0.113.9, "+from) // the last hop is the proxy's word
		}
		_, _, resp := h.do(req)
		return resp
	}
	for i := range limitBurst {
		path := "/token"
		if i%2 == 1 {
			path = "/register"
		}
		if resp := send(path, ""); resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("request %d of the burst: %d, want 400 (refused, not limited)", i+1, resp.StatusCode)
		}
	}
	for _, path := range []string{"/token", "/register"} {
		resp := send(path, "")
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s past the burst: %d, Retry-After %q; want 429 with one", path, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	if resp := send("/token", "198.51.100.7"); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("another address (by the proxy's X-Forwarded-For): %d, want 400", resp.StatusCode)
	}
	if resp := send("/token", "2001:db8:1:2::1"); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("an IPv6 address: %d", resp.StatusCode)
	}
	h.clock.advance(time.Second)
	for i := range int(limitRate) {
		if resp := send("/token", ""); resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("a second later, request %d: %d, want 400", i+1, resp.StatusCode)
		}
	}
	if resp := send("/token", ""); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("past a second's worth: %d, want 429", resp.StatusCode)
	}
	// Any number of addresses: the limiter remembers at most limitAddresses.
	l := h.srv.limit
	for i := range 3 * limitAddresses {
		l.allow(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	if n := l.remembered(); n > limitAddresses {
		t.Fatalf("%d addresses remembered, want at most %d", n, limitAddresses)
	}
}

// The address a request is limited by: the peer's, or behind a proxy on this machine
// (a loopback peer) the last X-Forwarded-For hop; IPv6 by /64.
func TestClientAddress(t *testing.T) {
	for _, tc := range []struct{ peer, forwarded, want string }{
		{"198.51.100.1:5000", "", "198.51.100.1"},
		{"198.51.100.1:5000", "10.0.0.1", "198.51.100.1"}, // not a proxy of ours: its header is anyone's word
		{"127.0.0.1:5000", "", "127.0.0.1"},
		{"127.0.0.1:5000", "203.0.113.5", "203.0.113.5"},
		{"127.0.0.1:5000", "1.1.1.1, 203.0.113.5", "203.0.113.5"},
		{"[::1]:5000", "2001:db8:aa:bb:1:2:3:4", "2001:db8:aa:bb::"},
		{"[2001:db8:aa:bb::9]:5000", "", "2001:db8:aa:bb::"},
		{"127.0.0.1:5000", "not an address", "127.0.0.1"},
	} {
		r, _ := http.NewRequest("POST", "/token", nil)
		r.RemoteAddr = tc.peer
		if tc.forwarded != "" {
			r.Header.Set("X-Forwarded-For", tc.forwarded)
		}
		if got := clientAddress(r); got != tc.want {
			t.Errorf("peer %s, X-Forwarded-For %q: %q, want %q", tc.peer, tc.forwarded, got, tc.want)
		}
	}
}

// remembered is how many client addresses l keeps buckets of.
func (l *limiter) remembered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

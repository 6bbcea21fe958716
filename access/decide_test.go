package access_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/compass-mcp/compass-mcp/access"
)

// on returns r as if it came to a listener at local (the address http.Server records).
func on(r *http.Request, local string) *http.Request {
	addr, err := net.ResolveTCPAddr("tcp", local)
	if err != nil {
		panic(err)
	}
	return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, addr))
}

// The Host rule, with the strangest Hosts a page or a proxy may send: only loopback names
// and the allowed hosts pass on loopback; with allowed hosts, nothing else anywhere.
func TestForeignHost(t *testing.T) {
	public := []string{"compass.example.com"}
	for _, c := range []struct {
		local, host string
		allowed     []string
		foreign     bool
	}{
		{"127.0.0.1:7410", "127.0.0.1:7410", nil, false},
		{"127.0.0.1:7410", "localhost:7410", nil, false},
		{"127.0.0.1:7410", "LOCALHOST:7410", nil, false},
		{"127.0.0.1:7410", "[::1]:7410", nil, false},
		{"127.0.0.1:7410", "[::1]", nil, false},
		{"127.0.0.1:7410", "127.9.9.9", nil, false},
		{"127.0.0.1:7410", "evil.example:7410", nil, true},
		{"127.0.0.1:7410", "localhost.:7410", nil, true}, // a name the resolver sends off the machine
		{"127.0.0.1:7410", "127.0.0.1.evil.example", nil, true},
		{"127.0.0.1:7410", "", nil, true},
		{"127.0.0.1:7410", "[::ffff:127.0.0.1]:7410", nil, false}, // an IPv4 loopback, written as IPv6
		{"127.0.0.1:7410", "2130706433:7410", nil, true},          // 127.0.0.1 as a number: a name here
		{"[::1]:7410", "evil.example", nil, true},
		{"192.0.2.10:7410", "evil.example", nil, false}, // beyond loopback, tokens guard it
		{"127.0.0.1:7410", "compass.example.com", public, false},
		{"127.0.0.1:7410", "COMPASS.example.com:443", public, false},
		{"127.0.0.1:7410", "compass.example.com.evil.example", public, true},
		{"192.0.2.10:7410", "evil.example", public, true},
		{"192.0.2.10:7410", "127.0.0.1:7410", public, false},
	} {
		r := on(httptest.NewRequest("GET", "/", nil), c.local)
		r.Host = c.host
		if got := access.ForeignHost(r, c.allowed); got != c.foreign {
			t.Errorf("Host %q on %s (allowed %v): foreign %v, want %v", c.host, c.local, c.allowed, got, c.foreign)
		}
	}
}

// Decide: a header that doesn't verify is refused on an open server too, a foreign Host
// whatever the request carries, and the server's review mode is every principal's.
func TestDecide(t *testing.T) {
	ctx := context.Background()
	s := access.New(openDB(t)).WithOwner("personal", "ana")
	req := func(host, auth string) *http.Request {
		r := on(httptest.NewRequest("POST", "/mcp", nil), "127.0.0.1:7410")
		r.Host = host
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		return r
	}
	open := &access.Gate{Store: s}
	for _, c := range []struct {
		host, auth string
		want       error
	}{
		{"127.0.0.1:7410", "Bearer x", access.ErrUnknownToken},
		{"127.0.0.1:7410", "Basic YW5hOng=", access.ErrNoBearer},
		{"127.0.0.1:7410", "Bearer", access.ErrNoBearer},
		{"127.0.0.1:7410", "Bearer cmp_0000000000000000000000000000000000000000000000000", access.ErrMistypedToken},
		{"evil.example:7410", "", access.ErrForeignHost},
		{"evil.example:7410", "Bearer x", access.ErrForeignHost},
	} {
		if _, err := open.Decide(req(c.host, c.auth)); !errors.Is(err, c.want) {
			t.Errorf("open server, Host %s, Authorization %q: %v, want %v", c.host, c.auth, err, c.want)
		}
	}
	if p, err := open.Decide(req("localhost:7410", "")); err != nil || p.Person != "ana" || p.Review || !p.MaySave("personal") {
		t.Errorf("open server, no header: %+v %v; want ana, who may save", p, err)
	}
	reviewed := &access.Gate{Store: s, Static: "s3cret", Review: true}
	for _, auth := range []string{"Bearer s3cret", ""} {
		g := reviewed
		if auth == "" {
			g = &access.Gate{Store: s, Review: true}
		}
		if p, err := g.Decide(req("127.0.0.1:7410", auth)); err != nil || !p.Review || p.MaySave("personal") || !p.MayWrite("personal") {
			t.Errorf("--review, Authorization %q: %+v %v; want reviewed: may write (proposals), may not save", auth, p, err)
		}
	}
	secret, _, err := s.AddToken(ctx, access.NewToken{Person: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := reviewed.Decide(req("127.0.0.1:7410", "Bearer "+secret)); err != nil || !p.Review {
		t.Errorf("--review, a token made without --review: %+v %v; want reviewed", p, err)
	}
	if _, err := reviewed.Decide(req("127.0.0.1:7410", "")); !errors.Is(err, access.ErrNoBearer) {
		t.Errorf("no header on a server with tokens: %v, want ErrNoBearer", err)
	}
}

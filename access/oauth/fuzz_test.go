package oauth

import (
	"net/url"
	"strings"
	"testing"
)

// go test -fuzz=FuzzResource ./oauth
func FuzzResource(f *testing.F) {
	for _, seed := range []string{"http://127.0.0.1:7410", "http://127.0.0.1:7410/", "HTTP://127.0.0.1:7410/mcp",
		"http://127.0.0.1:7410/spaces/launch/mcp", "http://127.0.0.1:7410/spaces/../mcp", "http://127.0.0.1:7410/spaces/0../mcp", "http://127.0.0.1:7410/spaces/a%2Fb/mcp",
		"https://127.0.0.1:7410/mcp", "http://127.0.0.1:7410/mcp?x=1", "http://127.0.0.1:7410/mcp#f", "//127.0.0.1:7410/mcp"} {
		f.Add(seed)
	}
	s := &Server{issuer: "http://127.0.0.1:7410"}
	s.base, _ = url.Parse(s.issuer)
	f.Fuzz(func(t *testing.T, v string) {
		r := s.resource(v)
		if r == "" {
			return
		}
		// A resource is this server's, in one spelling, and names an endpoint.
		if !strings.HasPrefix(r, s.issuer+"/") || s.resource(r) != r || !isResourcePath(strings.TrimPrefix(r, s.issuer)) {
			t.Fatalf("resource(%q) = %q", v, r)
		}
		// No segment is "." or ".." (a space may be named "0.." or "a.b": those are names).
		for _, seg := range strings.Split(strings.TrimPrefix(r, s.issuer), "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("resource(%q) = %q has a %s segment", v, r, seg)
			}
		}
	})
}

// go test -fuzz=FuzzRedirectMatches ./oauth
func FuzzRedirectMatches(f *testing.F) {
	f.Add("http://127.0.0.1:9000/cb", "http://127.0.0.1:1234/cb")
	f.Add("https://app.example.com/cb", "https://app.example.com/cb")
	f.Add("https://app.example.com/cb", "https://app.example.com:443/cb")
	f.Add("http://localhost/cb", "http://localhost:80/cb?x")
	f.Fuzz(func(t *testing.T, registered, given string) {
		if !redirectMatches([]string{registered}, given) || registered == given {
			return
		}
		// Anything but the same string is a loopback http URI that differs in its port only.
		r, err1 := url.Parse(registered)
		g, err2 := url.Parse(given)
		if err1 != nil || err2 != nil || g.Scheme != "http" || !loopbackHost(g.Hostname()) ||
			r.Hostname() != g.Hostname() || r.EscapedPath() != g.EscapedPath() || r.RawQuery != g.RawQuery {
			t.Fatalf("%q matched %q", given, registered)
		}
		if checkRedirectURI(registered) == nil && checkRedirectURI(given) != nil {
			t.Fatalf("%q matched the good %q but is not a good redirect URI itself", given, registered)
		}
	})
}

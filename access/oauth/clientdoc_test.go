package oauth

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

// clientDocs serves client ID metadata documents over TLS on loopback: a good one, and the
// ways one can be bad.
func clientDocs(t *testing.T) (*httptest.Server, *x509.CertPool) {
	t.Helper()
	mux := http.NewServeMux()
	var base string
	stop := make(chan struct{})
	doc := func(path string, extra map[string]any) []byte {
		m := map[string]any{"client_id": base + path, "client_name": "Doc Client", "redirect_uris": []string{"http://127.0.0.1:42000/cb"}, "token_endpoint_auth_method": "none"}
		for k, v := range extra {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return b
	}
	mux.HandleFunc("/client.json", func(w http.ResponseWriter, r *http.Request) { w.Write(doc("/client.json", nil)) })
	mux.HandleFunc("/redirects.json", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/client.json", http.StatusFound)
	})
	mux.HandleFunc("/large.json", func(w http.ResponseWriter, r *http.Request) {
		w.Write(doc("/large.json", map[string]any{"padding": strings.Repeat("x", 70<<10)}))
	})
	mux.HandleFunc("/slow.json", func(w http.ResponseWriter, r *http.Request) {
		// It never answers before the fetch gives up. Answering when the request's context
		// ends raced the fetch's own deadline: Go's client took an answer that came as it
		// gave up (1 run in 40 under -race), so the test saw a document arrive in time.
		select {
		case <-time.After(5 * time.Second):
		case <-stop:
		}
		w.Write(doc("/slow.json", nil))
	})
	mux.HandleFunc("/other-id.json", func(w http.ResponseWriter, r *http.Request) { w.Write(doc("/client.json", nil)) })
	mux.HandleFunc("/secret.json", func(w http.ResponseWriter, r *http.Request) {
		w.Write(doc("/secret.json", map[string]any{"token_endpoint_auth_method": "client_secret_basic"}))
	})
	mux.HandleFunc("/web-app.json", func(w http.ResponseWriter, r *http.Request) {
		w.Write(doc("/web-app.json", map[string]any{"application_type": "web"})) // but a loopback redirect URI
	})
	mux.HandleFunc("/native-app.json", func(w http.ResponseWriter, r *http.Request) {
		w.Write(doc("/native-app.json", map[string]any{"application_type": "native"}))
	})
	mux.HandleFunc("/missing.json", http.NotFound)
	ts := httptest.NewTLSServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(stop) }) // before ts.Close, which waits for slow.json's handler
	base = ts.URL
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	return ts, pool
}

func TestClientIDMetadataDocument(t *testing.T) {
	docs, pool := clientDocs(t)
	h := newHarness(t, func(c *Config) {
		c.Fetch = FetchOptions{AllowLoopback: true, RootCAs: pool, Timeout: 300 * time.Millisecond}
	})
	verifier, challenge := pkce()
	a := authz{client: docs.URL + "/client.json", redirect: "http://127.0.0.1:42000/cb", challenge: challenge, method: "S256", state: "doc"}

	t.Run("the whole flow", func(t *testing.T) {
		status, body, _, _ := h.authorize("ana", a)
		if status != 200 || !strings.Contains(body, "Doc Client") || !strings.Contains(body, strings.TrimPrefix(docs.URL, "https://")) {
			t.Fatalf("%d %s", status, body)
		}
		status, tok := h.exchange(a, h.code(a, "launch"), verifier)
		if status != 200 {
			t.Fatalf("exchange: %d %v", status, tok)
		}
		if status, m := h.refresh(a.client, str(tok, "refresh_token")); status != 200 {
			t.Fatalf("refresh: %d %v", status, m)
		}
	})
	t.Run("a redirect URI the document doesn't list", func(t *testing.T) {
		b := a
		b.redirect = "http://127.0.0.1:42000/elsewhere"
		if status, body, _, _ := h.authorize("ana", b); status != 400 || !strings.Contains(body, "not one the client registered") {
			t.Errorf("%d %s", status, body)
		}
	})
	for _, tc := range []struct{ path, want string }{
		{"/redirects.json", "redirects"},
		{"/large.json", "larger than 64 KiB"},
		{"/slow.json", "took longer than 300ms"},
		{"/other-id.json", "names another client_id"},
		{"/secret.json", "public clients only"},
		{"/web-app.json", "application_type web takes https only"},
		{"/missing.json", "404"},
		{"/", "has a path"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			b := a
			b.client = docs.URL + tc.path
			start := time.Now()
			status, body, _, resp := h.authorize("ana", b)
			if status != 400 || resp.Header.Get("Location") != "" || !strings.Contains(body, tc.want) {
				t.Errorf("%d %q: %s, want 400 saying %q", status, resp.Header.Get("Location"), body, tc.want)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
	t.Run("a native app's document", func(t *testing.T) {
		b := a
		b.client = docs.URL + "/native-app.json"
		if status, body, _, _ := h.authorize("ana", b); status != 200 || !strings.Contains(body, "Doc Client") {
			t.Errorf("%d %s", status, body)
		}
	})
	t.Run("http", func(t *testing.T) {
		b := a
		b.client = strings.Replace(docs.URL, "https://", "http://", 1) + "/client.json"
		if status, body, _, _ := h.authorize("ana", b); status != 400 || !strings.Contains(body, "must be https") {
			t.Errorf("%d %s", status, body)
		}
	})
}

// Without AllowLoopback, a document on loopback is not fetched: it would let anyone who can
// start a sign-in make the server fetch from itself.
func TestClientIDMetadataDocumentPrivateAddress(t *testing.T) {
	docs, pool := clientDocs(t)
	h := newHarness(t, func(c *Config) { c.Fetch = FetchOptions{RootCAs: pool} })
	_, challenge := pkce()
	a := authz{client: docs.URL + "/client.json", redirect: "http://127.0.0.1:42000/cb", challenge: challenge, method: "S256"}
	if status, body, _, _ := h.authorize("ana", a); status != 400 || !strings.Contains(body, "is not a public address") {
		t.Errorf("%d %s", status, body)
	}
}

func TestPublicAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "2001:4860:4860::8888": true, "93.184.216.34": true,
		"10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false, "169.254.169.254": false,
		"100.64.0.1": false, "127.0.0.1": false, "::1": false, "fc00::1": false, "fe80::1": false,
		"0.0.0.0": false, "::": false, "224.0.0.1": false, "::ffff:10.0.0.1": false, "::ffff:8.8.8.8": true,
		"::ffff:127.0.0.1": false, "::ffff:169.254.169.254": false, "100.100.100.200": false, "fd00:ec2::254": false,
		// Ways to spell a private IPv4 address in IPv6, and the ranges no public host has.
		"::127.0.0.1": false, "::a9fe:a9fe": false, "64:ff9b::7f00:1": false, "64:ff9b::a9fe:a9fe": false,
		"2002:7f00:1::1": false, "2001:0:4136:e378:8000:63bf:3fff:fdd2": false, "fec0::1": false,
		"0.1.2.3": false, "198.18.0.1": false, "192.0.0.170": false, "240.0.0.1": false, "255.255.255.255": false,
		"2001:db8::1": false, "100::1": false, "fe80::1%eth0": false,
	} {
		if got := publicAddr(netip.MustParseAddr(addr), false); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
	if !publicAddr(netip.MustParseAddr("127.0.0.1"), true) || publicAddr(netip.MustParseAddr("10.0.0.1"), true) {
		t.Error("AllowLoopback allows loopback only")
	}
}

func TestRegister(t *testing.T) {
	h := newHarness(t)
	post := func(body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", h.url+"/register", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		status, out, _ := h.do(req)
		var m map[string]any
		json.Unmarshal([]byte(out), &m)
		return status, m
	}
	status, m := post(`{"client_name":"Claude\n<b>x</b>","redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"token_endpoint_auth_method":"client_secret_post"}`)
	if status != 201 || m["token_endpoint_auth_method"] != "none" || m["client_secret"] != nil || m["client_name"] != "Claude <b>x</b>" {
		t.Fatalf("%d %v", status, m)
	}
	if status, m := post(`{"redirect_uris":[]}`); status != 400 || m["error"] != "invalid_redirect_uri" {
		t.Errorf("no redirect URIs: %d %v", status, m)
	}
	if status, m := post(`not json`); status != 400 || m["error"] != "invalid_client_metadata" {
		t.Errorf("not JSON: %d %v", status, m)
	}
	big := fmt.Sprintf(`{"client_name":"%s","redirect_uris":["https://a.example/cb"]}`, strings.Repeat("x", 70<<10))
	if status, m := post(big); status != 400 || m["error"] != "invalid_client_metadata" {
		t.Errorf("too large: %d %v", status, m)
	}
	// The name is escaped on the consent page.
	_, challenge := pkce()
	_, body, _, _ := h.authorize("ana", authz{client: str(m, "client_id"), redirect: "https://claude.ai/api/mcp/auth_callback", challenge: challenge, method: "S256"})
	if strings.Contains(body, "<b>x</b>") {
		t.Error("the client's name reached the page unescaped")
	}

	// A client nobody allowed is forgotten after a day; one that was allowed is kept.
	unused := h.register("http://127.0.0.1:1/cb")
	used, verifier := h.loopbackClient()
	h.exchange(used, h.code(used, "launch"), verifier)
	h.clock.advance(25 * time.Hour)
	h.register("http://127.0.0.1:2/cb") // registering sweeps
	if status, _, _, _ := h.authorize("ana", authz{client: unused, redirect: "http://127.0.0.1:1/cb", challenge: challenge, method: "S256"}); status != 400 {
		t.Errorf("an unused client after a day: %d, want 400", status)
	}
	if status, _, _, _ := h.authorize("ana", used); status != 200 {
		t.Errorf("a used client after a day: %d, want 200", status)
	}
}

// Registration is open to anyone who reaches the server: a loop of registrations must not
// grow the data file without bound, and a registration is at most a few KiB.
func TestRegisterIsBounded(t *testing.T) {
	h := newHarness(t)
	size := func() int {
		n := 0
		h.srv.db.View(t.Context(), func(tx kv.Tx) error {
			n = 0 // the View may run again
			return bucket(tx, clientsBucket).ForEach(func(k, v []byte) error { n += len(k) + len(v); return nil })
		})
		return n
	}
	long := "https://app.example/" + strings.Repeat("a", 2000)
	for _, body := range []string{
		`{"redirect_uris":["` + long + `"]}`,
		`{"redirect_uris":["https://app.example/cb"],"client_uri":"` + long + `"}`,
	} {
		req, _ := http.NewRequest("POST", h.url+"/register", strings.NewReader(body))
		if status, out, _ := h.do(req); status != 400 {
			t.Errorf("a registration with a 2 KB URI: %d %s", status, out)
		}
	}

	first := h.register("http://127.0.0.1:1/first")
	used, verifier := h.loopbackClient()
	h.exchange(used, h.code(used, "launch"), verifier)
	for range 2 * maxUnusedClients {
		h.clock.advance(time.Second / limitRate) // within the limit of one address (limit.go)
		h.register("https://app.example/cb")
	}
	var count int
	h.srv.db.View(t.Context(), func(tx kv.Tx) error { count = bucket(tx, clientsBucket).KeyN(); return nil })
	if count > maxUnusedClients+1 {
		t.Errorf("%d clients kept after %d registrations, at most %d unused wanted", count, 2*maxUnusedClients, maxUnusedClients)
	}
	// The oldest waiting client made room; a client a person allowed is never forgotten.
	_, challenge := pkce()
	if status, _, _, _ := h.authorize("ana", authz{client: first, redirect: "http://127.0.0.1:1/first", challenge: challenge, method: "S256"}); status != 400 {
		t.Errorf("the oldest unused client after the flood: %d, want 400 (forgotten)", status)
	}
	if status, _, _, _ := h.authorize("ana", used); status != 200 {
		t.Errorf("an allowed client after the flood: %d, want 200", status)
	}

	// The largest registration there can be is a few KiB, so the bound is a few MiB.
	before := size()
	uris := make([]string, maxRedirectURIs)
	for i := range uris {
		uris[i] = fmt.Sprintf("https://app.example/%04d/%s", i, strings.Repeat("a", maxURILength-30))
	}
	h.register(uris...)
	if grew := size() - before; grew > 16<<10 {
		t.Errorf("the largest registration keeps %d bytes", grew)
	}
}

// /authorize is open to anyone: a client ID metadata document is fetched only for a person
// signed in on the browser, so a stranger can't make the server fetch URLs.
func TestClientIDMetadataDocumentFetchedForSignedInOnly(t *testing.T) {
	var fetches atomic.Int32
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(ts.Close)
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	h := newHarness(t, func(c *Config) { c.Fetch = FetchOptions{RootCAs: pool, AllowLoopback: true} })
	_, challenge := pkce()
	a := authz{client: ts.URL + "/client.json", redirect: "http://127.0.0.1:42000/cb", challenge: challenge, method: "S256"}
	if status, body, _, _ := h.authorize("", a); status != http.StatusUnauthorized || fetches.Load() != 0 {
		t.Errorf("a stranger's /authorize: %d, %d fetches, want the sign-in and none: %s", status, fetches.Load(), body)
	}
	if status, _, _, _ := h.authorize("ana", a); status != http.StatusBadRequest || fetches.Load() != 1 {
		t.Errorf("a signed-in person's /authorize: %d, %d fetches, want 400 after one", status, fetches.Load())
	}
}

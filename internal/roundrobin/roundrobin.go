// Package roundrobin sends each HTTP request to the next of several servers in turn, as a
// load balancer without session affinity would: for tests of replicas that must answer
// any request, whichever of them began the client's session.
package roundrobin

import (
	"net/http"
	"sync"
)

// Transport is an http.RoundTripper that sends the nth request to Hosts[n % len(Hosts)]
// (host:port), whatever host its URL names, and notes what each request said.
type Transport struct {
	Hosts []string
	Base  http.RoundTripper // nil: http.DefaultTransport

	mu   sync.Mutex
	n    int
	sent []Sent
}

// Sent is what one request said, and to which host it went.
type Sent struct {
	Host, Method    string
	Session         string // its Mcp-Session-Id
	ProtocolVersion string // its Mcp-Protocol-Version
	Status          int    // the answer's status; 0 if none came
}

// RoundTrip sends r to the next host.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	host := t.Hosts[t.n%len(t.Hosts)]
	t.n++
	i := len(t.sent)
	t.sent = append(t.sent, Sent{Host: host, Method: r.Method, Session: r.Header.Get("Mcp-Session-Id"), ProtocolVersion: r.Header.Get("Mcp-Protocol-Version")})
	t.mu.Unlock()
	r = r.Clone(r.Context())
	r.URL.Host, r.Host = host, host
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	res, err := base.RoundTrip(r)
	if err == nil {
		t.mu.Lock()
		t.sent[i].Status = res.StatusCode
		t.mu.Unlock()
	}
	return res, err
}

// Sent returns what every request so far said, in order.
func (t *Transport) Sent() []Sent {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Sent(nil), t.sent...)
}

// Package roundrobin sends each HTTP request to the next of several servers in turn, as a
// load balancer without session affinity would: for tests of replicas that must answer
// any request, whichever of them began the client's session.
package roundrobin

import (
	"net/http"
	"sync"
	"time"
)

// Transport is an http.RoundTripper that sends the nth request to Hosts[n % len(Hosts)]
// (host:port), whatever host its URL names, and notes what each request said. Like a load
// balancer's passive health check (nginx's max_fails=1 fail_timeout), a host that could
// not be reached is passed over for Eject, if Eject is set and another host is left.
type Transport struct {
	Hosts []string
	Base  http.RoundTripper // nil: http.DefaultTransport
	Eject time.Duration

	mu   sync.Mutex
	n    int
	down map[string]time.Time // host → until when it is passed over
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
	host := t.next()
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
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		if t.Eject > 0 && r.Context().Err() == nil {
			if t.down == nil {
				t.down = map[string]time.Time{}
			}
			t.down[host] = time.Now().Add(t.Eject)
		}
		return nil, err
	}
	t.sent[i].Status = res.StatusCode
	return res, nil
}

// next is the next host in turn that is not passed over (or the next in turn, if all are).
func (t *Transport) next() string {
	now := time.Now()
	for range t.Hosts {
		host := t.Hosts[t.n%len(t.Hosts)]
		t.n++
		if now.After(t.down[host]) {
			return host
		}
	}
	host := t.Hosts[t.n%len(t.Hosts)]
	t.n++
	return host
}

// Sent returns what every request so far said, in order.
func (t *Transport) Sent() []Sent {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]Sent(nil), t.sent...)
}

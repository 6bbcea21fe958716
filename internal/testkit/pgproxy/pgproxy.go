// Package pgproxy is a TCP proxy on loopback between PostgreSQL's clients and its server,
// for tests and benchmarks: it counts the round trips that go through it, and may delay
// each of them, so that a database on this machine behaves as one a network hop away.
//
// A round trip is counted each time a client sends after its server has answered (or sends
// first on a new connection): a pipelined batch of statements is one, however many it holds.
// Messages the server sends unasked (a NOTIFY to a listener) count nothing.
package pgproxy

import (
	"errors"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy forwards connections made to its address to the server's.
type Proxy struct {
	ln     net.Listener
	target string
	delay  time.Duration
	trips  atomic.Int64
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// Start listens on 127.0.0.1 (a free port) and forwards to target (host:port), holding
// every client's bytes for delay before sending them on (0: none).
func Start(target string, delay time.Duration) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, delay: delay, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// In starts a proxy in front of the server a postgres:// URL names, for a test or a
// benchmark (closed at its end), and returns it with the URL through it.
func In(tb testing.TB, u string, delay time.Duration) (*Proxy, string) {
	tb.Helper()
	target, err := Target(u)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := Start(target, delay)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(p.Close)
	via, err := p.URL(u)
	if err != nil {
		tb.Fatal(err)
	}
	return p, via
}

// URL returns u (a postgres:// URL) with its host and port replaced by the proxy's.
func (p *Proxy) URL(u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	pu.Host = p.ln.Addr().String()
	return pu.String(), nil
}

// Target returns the host:port a postgres:// URL names (5432 when it names none).
func Target(u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	if pu.Hostname() == "" {
		return "", errors.New("pgproxy: the URL names no host")
	}
	port := pu.Port()
	if port == "" {
		port = "5432"
	}
	return net.JoinHostPort(pu.Hostname(), port), nil
}

// RoundTrips is how many round trips went through the proxy so far.
func (p *Proxy) RoundTrips() int64 { return p.trips.Load() }

// Close stops listening and cuts every connection.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) track(c net.Conn, on bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !on {
		delete(p.conns, c)
		return true
	}
	if p.conns == nil {
		return false // closed
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		if !p.track(client, true) || !p.track(server, true) {
			client.Close()
			server.Close()
			return
		}
		var answered atomic.Bool
		answered.Store(true)
		p.wg.Add(2)
		go func() { // client to server
			defer p.wg.Done()
			p.forward(server, client, func() {
				if answered.Swap(false) {
					p.trips.Add(1)
				}
			}, p.delay)
			server.Close()
		}()
		go func() { // server to client
			defer p.wg.Done()
			p.forward(client, server, func() { answered.Store(true) }, 0)
			client.Close()
		}()
	}
}

// forward copies from src to dst, calling seen on every read before sending it on, each
// read delay after it arrived (reads are sent on in order, so delays don't add up).
func (p *Proxy) forward(dst, src net.Conn, seen func(), delay time.Duration) {
	defer p.track(src, false)
	type chunk struct {
		b  []byte
		at time.Time
	}
	var out chan chunk
	done := make(chan struct{})
	if delay > 0 {
		out = make(chan chunk, 1024)
		go func() {
			defer close(done)
			for c := range out {
				// A genuine sleep (internal/style's TestNoSleeps allows it): the delay is
				// what the proxy is for, as a slower network's.
				time.Sleep(time.Until(c.at.Add(delay)))
				if _, err := dst.Write(c.b); err != nil {
					src.Close() // the reader stops; what it still queued is dropped
					for range out {
					}
					return
				}
			}
		}()
	} else {
		close(done)
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			seen()
			if out != nil {
				out <- chunk{append([]byte(nil), buf[:n]...), time.Now()}
			} else if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if out != nil {
		close(out)
	}
	<-done
}

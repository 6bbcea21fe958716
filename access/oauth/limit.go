package oauth

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Unauthenticated requests (/token and /register: anyone who reaches the server may send
// them) are limited per client address, so that one sender can't keep the store busy: a
// token bucket an address, limitBurst deep, refilled limitRate a second. Real clients
// register once and exchange or refresh a code an hour; Claude's connectors of many
// people share a few addresses, which 2 a second leaves room for (7,200 refreshes an hour).
const (
	limitRate  = 2.0
	limitBurst = 20
	// limitAddresses bounds the addresses remembered (about 100 bytes each): when full,
	// those whose bucket has refilled are forgotten (they are as good as new), else any.
	limitAddresses = 10_000
)

type limiter struct {
	mu      sync.Mutex
	buckets map[string]*tokens
	now     func() time.Time
}

type tokens struct {
	left float64
	at   time.Time
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{buckets: map[string]*tokens{}, now: now}
}

// allow takes a token of addr's bucket; if there is none, it returns false and how long
// until there is.
func (l *limiter) allow(addr string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.buckets[addr]
	if b == nil {
		if len(l.buckets) >= limitAddresses {
			l.forget(now)
		}
		b = &tokens{left: limitBurst, at: now}
		l.buckets[addr] = b
	}
	b.left = math.Min(limitBurst, b.left+now.Sub(b.at).Seconds()*limitRate)
	b.at = now
	if b.left < 1 {
		return false, time.Duration((1 - b.left) / limitRate * float64(time.Second))
	}
	b.left--
	return true, 0
}

// forget makes room for addresses: the full buckets go (they are as good as new), and if
// that leaves more than nine tenths of the room taken, others at random (map order) down
// to that, which gives their addresses full buckets again: more lenient, never stricter.
// Forgetting in bulk keeps it a constant cost an address however many come.
func (l *limiter) forget(now time.Time) {
	for addr, b := range l.buckets {
		if b.left+now.Sub(b.at).Seconds()*limitRate >= limitBurst {
			delete(l.buckets, addr)
		}
	}
	for addr := range l.buckets {
		if len(l.buckets) <= limitAddresses*9/10 {
			break
		}
		delete(l.buckets, addr)
	}
}

// limited answers next only while r's client address has tokens left; else 429, with
// Retry-After, in the OAuth error form.
func (s *Server) limited(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			if ok, wait := s.limit.allow(clientAddress(r)); !ok {
				secs := int(math.Ceil(wait.Seconds()))
				w.Header().Set("Retry-After", fmt.Sprint(secs))
				oauthError(w, http.StatusTooManyRequests, "temporarily_unavailable", fmt.Sprintf("too many requests from your address; try again in %d s", secs))
				return
			}
		}
		next(w, r)
	}
}

// clientAddress is the address r is limited by: its peer's IP, or, when the peer is this
// machine's loopback (a reverse proxy beside the server, which the documented setups put
// there), the last X-Forwarded-For hop, the one that proxy added. An IPv6 address counts
// by its /64, which one subscriber usually holds whole.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip != nil && ip.IsLoopback() {
		if hops := r.Header.Values("X-Forwarded-For"); len(hops) > 0 {
			last := hops[len(hops)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if fwd := net.ParseIP(strings.TrimSpace(last)); fwd != nil {
				ip = fwd
			}
		}
	}
	if ip == nil {
		return host
	}
	if ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String()
	}
	return ip.String()
}

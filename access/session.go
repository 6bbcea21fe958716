package access

import (
	"net/http"
	"sync"
	"time"
)

// sessionHeader is the header a streamable HTTP MCP session is named by.
const sessionHeader = "Mcp-Session-Id"

// Sessions keeps each MCP session to the principal that began it: a request naming a
// session begun with another token is answered 404, as for a session that doesn't exist,
// so a token that learns another's session id can't use it (or end it). go-sdk checks
// TokenInfo.UserID against the session's for the same reason.
//
// A session is bound when the server's answer names it (initialize), or, for one this
// process no longer remembers, at its first accepted use. Bindings unused for a day are
// forgotten (the MCP server forgets idle sessions sooner).
type Sessions struct {
	mu        sync.Mutex
	owner     map[string]binding
	lastSweep time.Time
}

type binding struct {
	who  string // TokenID, or "person:<id>" for the owner's requests
	seen time.Time
}

const sessionsForgetAfter = 24 * time.Hour

// NewSessions returns an empty set of session bindings.
func NewSessions() *Sessions { return &Sessions{owner: map[string]binding{}} }

// Bind is middleware, after Gate.Require, that keeps sessions to their principals.
func (s *Sessions) Bind(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := FromContext(r.Context())
		who := p.TokenID
		if who == "" {
			who = "person:" + p.Person
		}
		id := r.Header.Get(sessionHeader)
		now := time.Now()
		if id != "" {
			s.mu.Lock()
			b, known := s.owner[id]
			if known && b.who == who {
				s.owner[id] = binding{who: who, seen: now}
			}
			s.mu.Unlock()
			if known && b.who != who {
				http.Error(w, "Not Found: no such session for this token; start a new one (initialize)", http.StatusNotFound)
				return
			}
			if known {
				next.ServeHTTP(w, r)
				if r.Method == http.MethodDelete {
					s.forget(id)
				}
				return
			}
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status >= 400 || r.Method == http.MethodDelete {
			return
		}
		if named := sw.Header().Get(sessionHeader); named != "" {
			id = named
		}
		if id != "" {
			s.bind(id, who, now)
		}
	})
}

func (s *Sessions) bind(id, who string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.owner[id]; taken {
		return // bound meanwhile by a request that came first: that one stands
	}
	s.owner[id] = binding{who: who, seen: now}
	if now.Sub(s.lastSweep) > time.Minute {
		s.lastSweep = now
		for k, b := range s.owner {
			if now.Sub(b.seen) > sessionsForgetAfter {
				delete(s.owner, k)
			}
		}
	}
}

func (s *Sessions) forget(id string) {
	s.mu.Lock()
	delete(s.owner, id)
	s.mu.Unlock()
}

// statusWriter notes the status of a response, passing everything (streaming included) on.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (write deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

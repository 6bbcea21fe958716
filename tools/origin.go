package tools

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Where a change comes from: every version, proposal and comment an agent makes records
// its door (DoorMCP and the client's name) and its session, so that the person's activity
// groups an agent's run of changes and can undo it whole (docstore.Author).
//
// The session is the MCP session's when the connection has one: over stdio, the process's
// one connection; over HTTP, the Mcp-Session-Id, kept as a hash (the id lets its holder
// send on the session, and a version's author is shown to every member of the space). The
// stateless protocol (2026-07-28) has no sessions: there a session is the same person,
// agent and client with no gap over docstore.SessionGap, kept in this process's memory (a
// replica or a restart begins a new one).

// maxRuns bounds the stateless sessions remembered: past it the idle ones go, and, if
// none is idle, all (a flood of clients names can't grow the map without end).
const maxRuns = 4096

// runs are the sessions of one server.
type runs struct {
	stdio string // the process's stdio connection's
	mu    sync.Mutex
	by    map[string]*run // person, agent and client → their stateless session
	now   func() time.Time
}

type run struct {
	id   string
	last time.Time
}

// processRuns are the sessions of a Server made without New.
var processRuns = newRuns()

func newRuns() *runs {
	return &runs{stdio: newSessionID(), by: map[string]*run{}, now: time.Now}
}

func newSessionID() string { return docstore.NewSession('m') }

// stateless is the session of key's next change: the one before, unless it was over
// SessionGap ago.
func (r *runs) stateless(key string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if got := r.by[key]; got != nil && now.Sub(got.last) <= docstore.SessionGap {
		got.last = now
		return got.id
	}
	if len(r.by) >= maxRuns {
		for k, v := range r.by {
			if now.Sub(v.last) > docstore.SessionGap {
				delete(r.by, k)
			}
		}
		if len(r.by) >= maxRuns {
			clear(r.by)
		}
	}
	got := &run{id: newSessionID(), last: now}
	r.by[key] = got
	return got.id
}

// origin sets a's door, client and session for the request ctx carries.
func (s *Server) origin(ctx context.Context, a *docstore.Author) {
	r := s.runs
	if r == nil { // a Server made without New (tests)
		r = processRuns
	}
	a.Door, a.Client = docstore.DoorMCP, clientName(ctx)
	info := server.RequestProtocolInfoFromContext(ctx)
	sess := server.ClientSessionFromContext(ctx)
	switch {
	case sess != nil && sess.SessionID() == "stdio":
		a.Session = r.stdio
	case sess == nil || sess.SessionID() == "" || info != nil && info.Modern:
		a.Session = r.stateless(a.By + "\x00" + a.For + "\x00" + a.Client)
	default:
		a.Session = docstore.SessionOf('m', sess.SessionID())
	}
}

// clientName is the name the client gave (per request in the stateless protocol, else at
// initialize): its title for people when it has one ("Claude Code"), else its name, one
// line of at most 64 characters; "" when it gave none.
func clientName(ctx context.Context) string {
	var c mcp.Implementation
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientInfo != nil {
		c = *info.ClientInfo
	} else if sess, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		c = sess.GetClientInfo()
	}
	for _, name := range []string{c.Title, c.Name} {
		name = strings.Join(strings.FieldsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.In(r, unicode.Cf) }), " ")
		if r := []rune(name); len(r) > 64 {
			name = string(r[:64])
		}
		if name != "" {
			return name
		}
	}
	return ""
}

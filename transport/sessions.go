package transport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Sessions makes streamable HTTP sessions the store's (access.Sessions), not this
// process's: any server on the store (replicas on one PostgreSQL database, or this one
// after a restart) answers any request of a session any of them began.
//
// What mcp-go keeps in memory of a session is then a cache it can lose: a request for a
// session this process doesn't hold is served in an ephemeral session (mcp-go does that
// by itself), given the client's name the store kept from initialize (clientName), so
// that versions say the same agent whichever server made them. mcp-go's idle sweep and its
// shutdown end sessions only here (they resolve the manager without a request); a
// client's DELETE ends one everywhere; the store ends those unused for its idle time.
//
// Protocol 2026-07-28 has no sessions: its requests are served as they come, and an
// Mcp-Session-Id they carry is ignored, as mcp-go ignores it.
type Sessions struct{ store *access.Sessions }

// NewSessions keeps the sessions of mcp-go's streamable HTTP server in store.
func NewSessions(store *access.Sessions) *Sessions { return &Sessions{store} }

var errUnknownSession = errors.New("no such session: it ended, or no server on this store began it")

// begunKey carries the id of the session this request's initialize began; checkedKey the
// session this request named, as the store has it.
type (
	begunKey   struct{}
	checkedKey struct{}
)

type checked struct {
	id string
	access.Session
}

// largestInitialize bounds the bodies read as a possible initialize: a real one is a few
// hundred bytes, and a tools/call of megabytes is not parsed twice.
const largestInitialize = 64 << 10

// Check is the middleware, after the gate (who is asking) and Guard (the body, read), that
// begins a session at initialize and refuses (404, as the transport says: the client then
// begins a new one) a request naming a session that isn't the asker's or isn't any more.
func (m *Sessions) Check(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
			r.Header.Del(server.HeaderKeySessionID)
			next.ServeHTTP(w, r)
			return
		}
		p, _ := access.FromContext(r.Context())
		if r.Method == http.MethodPost {
			if client, ok := initializeOf(r); ok {
				id, err := m.store.BeginClient(r.Context(), p, client)
				if err != nil {
					unavailable(w, "beginning a session", err)
					return
				}
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), begunKey{}, id)))
				return
			}
		}
		id := r.Header.Get(server.HeaderKeySessionID)
		if id == "" {
			next.ServeHTTP(w, r) // mcp-go refuses a POST without one, and gives a GET stream its own
			return
		}
		sess, err := m.store.Check(r.Context(), id, p)
		if errors.Is(err, access.ErrNoSession) {
			http.Error(w, "Session not found: start a new one with initialize", http.StatusNotFound)
			return
		} else if err != nil {
			unavailable(w, "checking a session", err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), checkedKey{}, checked{id, sess})))
	})
}

// unavailable answers 503 for a store that could not be read or written.
func unavailable(w http.ResponseWriter, doing string, err error) {
	slog.Error(doing, "err", err)
	w.Header().Set("Retry-After", "1")
	http.Error(w, "The store is unavailable ("+doing+"); try again in a moment", http.StatusServiceUnavailable)
}

// initializeOf reports whether r (a POST that Guard read) is an initialize, and what its
// client says: its name, and whether it declares MCP Apps.
func initializeOf(r *http.Request) (client access.Client, ok bool) {
	body, _ := r.Context().Value(bodyKey{}).([]byte)
	if len(body) > largestInitialize {
		return client, false
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			ClientInfo struct {
				Name string `json:"name"`
			} `json:"clientInfo"`
			Capabilities struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"capabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != string(mcp.MethodInitialize) {
		return client, false
	}
	return access.Client{Name: msg.Params.ClientInfo.Name, Apps: tools.DeclaresApps(msg.Params.Capabilities.Extensions)}, true
}

// ClientName gives the session mcp-go serves a request in what the client said in
// initialize, when mcp-go doesn't hold it: the session began on another server, or this
// one forgot it (idle sweep, restart). Its name, which versions are signed with, and the
// MCP Apps extension, if it declared it (the tools then link the change view). An
// HTTPContextFunc.
func ClientName(ctx context.Context, _ *http.Request) context.Context {
	c, ok := ctx.Value(checkedKey{}).(checked)
	if !ok {
		return ctx
	}
	s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	if !ok {
		return ctx
	}
	if c.Client != "" && s.GetClientInfo().Name == "" {
		s.SetClientInfo(mcp.Implementation{Name: c.Client})
	}
	if c.Apps && !tools.DeclaresApps(s.GetClientCapabilities().Extensions) {
		caps := s.GetClientCapabilities()
		caps.Extensions = map[string]any{tools.AppsExtension: map[string]any{"mimeTypes": []any{tools.AppMIMEType}}}
		s.SetClientCapabilities(caps)
	}
	return ctx
}

// ResolveSessionIdManager is mcp-go's way to the sessions: for a request, the store's, as
// Check found them; without one (mcp-go's idle sweep, its shutdown), only this process's
// memory, which mcp-go clears itself.
func (m *Sessions) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r == nil {
		return localSessions{}
	}
	return requestSessions{m, r}
}

type requestSessions struct {
	m *Sessions
	r *http.Request
}

// Generate gives the id Check began for an initialize. A GET stream without a session gets
// an id of its own, stored nowhere: it names nothing anyone could use.
func (s requestSessions) Generate() string {
	if id, ok := s.r.Context().Value(begunKey{}).(string); ok {
		return id
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "mcp-stream-" + hex.EncodeToString(b)
}

func (s requestSessions) Validate(id string) (isTerminated bool, err error) {
	if c, ok := s.r.Context().Value(checkedKey{}).(checked); ok && c.id == id {
		return false, nil
	}
	return false, errUnknownSession // mcp-go answers 404
}

// Terminate ends the session for every server (a client's DELETE, which Check let through:
// it is the asker's).
func (s requestSessions) Terminate(id string) (isNotAllowed bool, err error) {
	p, _ := access.FromContext(s.r.Context())
	if err := s.m.store.End(s.r.Context(), id, p); err != nil && !errors.Is(err, access.ErrNoSession) {
		return false, err
	}
	return false, nil
}

// localSessions is the manager mcp-go's idle sweep and shutdown get: they end a session's
// state in this process, not the session, which other servers may be serving.
type localSessions struct{}

func (localSessions) Generate() string               { return "" }
func (localSessions) Validate(string) (bool, error)  { return false, errUnknownSession }
func (localSessions) Terminate(string) (bool, error) { return false, nil }

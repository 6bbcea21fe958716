package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// sessions knows the HTTP sessions this server started and has not yet forgotten (by a
// DELETE, or mcp-go's idle sweep, which calls Terminate), so that any other session id gets
// 404, as the MCP transport says: the client then starts a new session. mcp-go's default
// manager checks only an id's form, so a made-up id, a deleted one, or one swept after
// --session-idle went on working (as a session without the client's name).
type sessions struct {
	mu   sync.Mutex
	live map[string]struct{}
}

var errUnknownSession = errors.New("no such session: it ended, or this server never started it")

func newSessions() *sessions { return &sessions{live: map[string]struct{}{}} }

func (s *sessions) Generate() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := "mcp-session-" + hex.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live[id] = struct{}{}
	return id
}

func (s *sessions) Validate(id string) (isTerminated bool, err error) {
	if !s.known(id) {
		return false, errUnknownSession // mcp-go answers 404
	}
	return false, nil
}

func (s *sessions) Terminate(id string) (isNotAllowed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, id)
	return false, nil
}

func (s *sessions) known(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.live[id]
	return ok
}

// check answers 404 to a GET or DELETE naming a session this server doesn't know (mcp-go
// checks session ids on POST only).
func (s *sessions) check(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get(server.HeaderKeySessionID); id != "" && (r.Method == http.MethodGet || r.Method == http.MethodDelete) && !s.known(id) {
			http.Error(w, "Session not found: start a new one with initialize", http.StatusNotFound)
			return
		}
		next.ServeHTTP(w, r)
	})
}

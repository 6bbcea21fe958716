// Package embedtest is an OpenAI-compatible embeddings endpoint for tests of the semantic
// tier (semantic, tools, the command, the page, e2e/roundtrips): POST /v1/embeddings on
// 127.0.0.1 answers each text with the vector a test chooses, counts what it was asked,
// and can be made to fail, wait or answer wrong.
package embedtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// Server is the endpoint. Requests counts the requests it was sent (to any path), Texts the
// texts of those to /v1/embeddings.
type Server struct {
	Requests, Texts atomic.Int32

	srv    *httptest.Server
	vector func(i int, text string) []float64
	mu     sync.Mutex
	answer func(w http.ResponseWriter, r *http.Request, texts []string) bool
	sent   []string
}

// New starts an endpoint that answers the i-th text of a request with vector(i, text),
// closed when t ends.
func New(t testing.TB, vector func(i int, text string) []float64) *Server {
	s := &Server{vector: vector}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.Requests.Add(1)
	if r.URL.Path != "/v1/embeddings" {
		http.Error(w, "no", http.StatusNotFound)
		return
	}
	var body struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.Texts.Add(int32(len(body.Input)))
	s.mu.Lock()
	s.sent = append(s.sent, body.Input...)
	answer := s.answer
	s.mu.Unlock()
	if answer != nil && answer(w, r, body.Input) {
		return
	}
	type item struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	var out struct {
		Data []item `json:"data"`
	}
	for i, text := range body.Input {
		out.Data = append(out.Data, item{i, s.vector(i, text)})
	}
	json.NewEncoder(w).Encode(out)
}

// URL is the endpoint's base, as --embeddings takes it: http://127.0.0.1:PORT/v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Host is the endpoint's host and port.
func (s *Server) Host() string { return s.srv.Listener.Addr().String() }

// Answer makes fn answer every request first (nil: none does): when it returns true, it
// answered; else the vectors are the answer.
func (s *Server) Answer(fn func(w http.ResponseWriter, r *http.Request, texts []string) bool) {
	s.mu.Lock()
	s.answer = fn
	s.mu.Unlock()
}

// Sent is every text the endpoint was sent, in order.
func (s *Server) Sent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// Close stops the endpoint: its address then refuses connections.
func (s *Server) Close() { s.srv.Close() }

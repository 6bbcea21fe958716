package transport

import (
	"encoding/json"
	"net/http"

	"github.com/compass-mcp/compass-mcp/internal/inflight"
)

// health answers GET /healthz: that the server answers, and what its calls in progress
// hold of the budget for work in flight (inflight.Process: limit, held, running,
// waiting, and since the start the peak held, calls admitted and refused as busy), in
// bytes. It names no space, document or person, so it asks for no token (a load
// balancer's check has none).
func health(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(struct {
		OK     bool           `json:"ok"`
		Memory inflight.Stats `json:"memory"`
	}{true, inflight.Process.Stats()})
}

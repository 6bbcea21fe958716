package claudecode

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// step is one assistant turn the fake Messages API answers with: a tool call, or text.
type step struct {
	tool  string         // the tool to call; "" for text
	input map[string]any // its input
	text  string
}

// fakeAPI is the Messages API as Claude Code calls it (POST /v1/messages, streamed as
// server-sent events), answering a script: turn n (the request holding n assistant
// messages) gets steps[n], and a turn past the script ends the conversation. It keeps the
// last request body of each turn: what the model would read at that turn.
type fakeAPI struct {
	steps []step

	mu       sync.Mutex
	requests map[int][]byte // turn -> the request's body
	other    []string       // requests that were no turn of the conversation
}

func newFakeAPI(steps []step) *fakeAPI {
	return &fakeAPI{steps: steps, requests: map[int][]byte{}}
}

// largestRequest bounds a request body: Claude Code's own prompt is some 100 KB.
const largestRequest = 16 << 20

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		f.mu.Lock()
		f.other = append(f.other, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, largestRequest))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req struct {
		Model    string
		Messages []struct{ Role string }
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	turn := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			turn++
		}
	}
	f.mu.Lock()
	f.requests[turn] = body
	f.mu.Unlock()
	s := step{text: "Done."}
	if turn < len(f.steps) {
		s = f.steps[turn]
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name string, data any) {
		raw, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, raw)
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_%02d", turn), "type": "message", "role": "assistant", "model": req.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 1, "output_tokens": 1},
	}})
	stop := "end_turn"
	if s.tool != "" {
		input, _ := json.Marshal(s.input)
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": toolUseID(turn), "name": s.tool, "input": map[string]any{}}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		stop = "tool_use"
	} else {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": s.text}})
	}
	event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 1}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

func toolUseID(turn int) string { return fmt.Sprintf("toolu_%02d", turn) }

// request is the body of turn's request, nil if none came.
func (f *fakeAPI) request(turn int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[turn]
}

func (f *fakeAPI) others() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.other, ", ")
}

package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

// MountMessages adds to mux the endpoint through which chat integrations (a Slack or
// Discord bridge, a support inbox) add messages to a space's conversations:
//
//	POST /spaces/{space}/conversations/{id}/messages
//	{"from": "person:ana", "to": "agent:north", "text": "...", "at": "2026-11-08T10:42:00Z",
//	 "private": false, "id": "slack:C024BE91L/1700000000.000100", "title": "Pricing"}
//
// from and text are required; from must be the caller's person or agent. It answers 201
// with the message's id, or 200 when a message with that id was already added (so a
// bridge may send again what it isn't sure arrived); errors are JSON naming the field.
//
// It is a door of the gate (access.Gate.Door): the gate's one decision turns the request
// into its principal (403 for a foreign Host on loopback, 401 without a good token, 403
// for a space it does not allow) before the body is read; guard then bounds the body
// (transport.Guard: the body budget, other origins refused). Review mode doesn't change
// it: a message is not a change of a document, and has nothing to propose.
func MountMessages(mux access.Mux, db kv.DB, gate *access.Gate, guard func(http.Handler) http.Handler) {
	jsonGate := *gate
	jsonGate.JSON = true
	gate = &jsonGate
	h := &messages{db: db, gate: gate}
	mux.Handle("POST /spaces/{space}/conversations/{id}/messages", gate.Door(access.PathSpace, guard, h))
}

type messages struct {
	db   kv.DB
	gate *access.Gate // for the challenge of the refusals it makes itself
}

// postFields are the fields a message may have.
var postFields = []string{"from", "to", "text", "at", "private", "id", "title"}

// apiError is the JSON of a refusal: what is wrong, and the field at fault if one is.
type apiError struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func (h *messages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, ok := access.FromContext(r.Context())
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="compass-mcp"`)
		h.gate.Challenge(w, r, "", "")
		writeJSON(w, http.StatusUnauthorized, apiError{Error: "send Authorization: Bearer <token>"})
		return
	}
	space, conv := r.PathValue("space"), r.PathValue("id")
	if err := spaces.Valid(space); err != nil {
		writeJSON(w, http.StatusNotFound, apiError{Error: fmt.Sprintf("no space %q: %v", space, err)})
		return
	}
	if !p.MaySee(space) {
		why := fmt.Sprintf("this token does not allow space %q", space)
		h.gate.Challenge(w, r, "insufficient_scope", why)
		writeJSON(w, http.StatusForbidden, apiError{Error: why})
		return
	}
	if !p.MayWrite(space) {
		h.gate.Challenge(w, r, "insufficient_scope", "the token is read-only")
		writeJSON(w, http.StatusForbidden, apiError{Error: "this token is read-only: it cannot add messages"})
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeJSON(w, http.StatusUnsupportedMediaType, apiError{Error: "send the message as JSON, with Content-Type: application/json"})
		return
	}
	post, ferr := decodePost(r)
	if ferr != nil {
		writeJSON(w, http.StatusBadRequest, *ferr)
		return
	}
	if err := mayBe(p, post.From); err != nil {
		h.gate.Challenge(w, r, "insufficient_scope", err.Error())
		writeJSON(w, http.StatusForbidden, apiError{Error: err.Error(), Field: "from"})
		return
	}
	m, added, err := threads.New(h.db, space).Add(r.Context(), conv, post)
	var fe *threads.FieldError
	switch {
	case errors.As(err, &fe):
		writeJSON(w, http.StatusBadRequest, apiError{Error: fe.Err.Error(), Field: fe.Field})
		return
	case err != nil:
		slog.Error("adding a message", "space", space, "conversation", conv, "err", err)
		writeJSON(w, http.StatusInternalServerError, apiError{Error: "the message could not be stored (logged on the server)"})
		return
	}
	status := http.StatusCreated
	if !added {
		status = http.StatusOK
	}
	writeJSON(w, status, struct {
		ID           string `json:"id"`
		Conversation string `json:"conversation"`
		At           string `json:"at"`
		Added        bool   `json:"added"`
	}{m.ID, conv, m.At.UTC().Format(time.RFC3339Nano), added})
}

// mayBe says why p may not send a message from actor ("" when it may): only as its own
// person or its own agent.
func mayBe(p access.Principal, actor string) error {
	a, err := spaces.ParseActor(actor)
	if err != nil {
		return nil // Add names the field
	}
	if (!a.Agent && a.ID == p.Person) || (a.Agent && p.Agent != "" && a.ID == p.Agent) {
		return nil
	}
	mine := spaces.Person(p.Person).String()
	if p.Agent != "" {
		mine += " or " + spaces.Agent(p.Agent).String()
	}
	return fmt.Errorf("this token sends as %s, not %s", mine, a)
}

// decodePost reads the request's JSON object, refusing unknown fields and values of the
// wrong type by name.
func decodePost(r *http.Request) (threads.Post, *apiError) {
	body, err := io.ReadAll(r.Body) // the guard has bounded it
	if err != nil {
		return threads.Post{}, &apiError{Error: "the body could not be read"}
	}
	// The JSON decoder would turn bytes that aren't UTF-8 into U+FFFD: refuse them instead.
	if !utf8.Valid(body) {
		return threads.Post{}, &apiError{Error: "the body is not valid UTF-8"}
	}
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return threads.Post{}, &apiError{Error: "the body is not a JSON object"}
	}
	if dec.More() {
		return threads.Post{}, &apiError{Error: "the body has more than one JSON value"}
	}
	var unknown []string
	for k := range fields {
		if !slices.Contains(postFields, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return threads.Post{}, &apiError{Error: fmt.Sprintf("unknown field %q: a message takes %s", unknown[0], strings.Join(postFields, ", ")), Field: unknown[0]}
	}
	var p threads.Post
	for name, to := range map[string]any{"from": &p.From, "to": &p.To, "text": &p.Text, "at": &p.At, "id": &p.ID, "title": &p.Title, "private": &p.Private} {
		raw, ok := fields[name]
		if !ok || bytes.Equal(raw, []byte("null")) {
			continue
		}
		if err := json.Unmarshal(raw, to); err != nil {
			want := "a string"
			if name == "private" {
				want = "true or false"
			}
			return threads.Post{}, &apiError{Error: fmt.Sprintf("field %q must be %s", name, want), Field: name}
		}
	}
	if p.Text == "" {
		return threads.Post{}, &apiError{Error: "field \"text\" is missing or empty", Field: "text"}
	}
	return p, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

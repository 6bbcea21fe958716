package filesync

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// Mount serves the sync's side of a team server on mux, for Remote: under
// /spaces/{space}/sync/, each route a door of the gate (access.Gate.Door: a foreign Host
// on loopback refused, 401 without a good token, guard's body budget, 403 for a space the
// token doesn't reach). The request's principal decides the person and the agent (the
// token's, else "sync"); a principal that may not save as its person (read-only, or
// reviewed: a reviewed token, or a server under --review, static token and tokenless
// included; access.Principal.MaySave) may list and read, its listing says writable:false,
// and its writes are refused (403): a sync saves as the person, which a principal whose
// changes the person reviews must not do, and it never accepts or declines a proposal.
func Mount(mux access.Mux, db kv.DB, gate *access.Gate, guard func(http.Handler) http.Handler) {
	jsonGate := *gate
	jsonGate.JSON = true
	h := &served{db: db}
	in := func(next http.HandlerFunc) http.Handler {
		return jsonGate.Door(access.PathSpace, guard, next)
	}
	mux.Handle("GET /spaces/{space}/sync/documents", in(h.documents))
	mux.Handle("GET /spaces/{space}/sync/version", in(h.version))
	mux.Handle("POST /spaces/{space}/sync/{op}", in(h.write))
}

type served struct{ db kv.DB }

// listing is the answer of GET .../sync/documents.
type listing struct {
	Writable  bool            `json:"writable"`
	By        docstore.Author `json:"by"`
	Documents []listed        `json:"documents"`
}

// listed is a document as a listing gives it: what a pass compares, no more (a document's
// record also has its first line, its author, its counts: four times the bytes).
type listed struct {
	ID      string             `json:"id"`
	Title   string             `json:"title"`
	Version int                `json:"v"`
	Deleted *docstore.Deletion `json:"deleted,omitempty"`
}

// syncRequest is the body of a POST .../sync/{op}: the fields each op takes.
type syncRequest struct {
	ID     string          `json:"id"`
	Title  string          `json:"title"`
	Text   string          `json:"text"`
	Base   int             `json:"base"`
	Prefer linediff.Prefer `json:"prefer"`
	// Keep: the save keeps both sides of a clash in one commit (Space.SaveKeeping); without
	// it, a save as an older sync sends it (Prefer), kept for one release.
	Keep bool  `json:"keep"`
	Held []int `json:"held,omitempty"` // with Keep: older versions the file held
}

// refusal is the JSON of an answer that is not 200: what is wrong, and for the errors the
// sync acts on, which (Kind) and what it needs to.
type refusal struct {
	Error      string `json:"error"`
	Kind       string `json:"kind,omitempty"` // clash, title_taken, bad_title, bad_text, not_found, read_only
	Version    int    `json:"version,omitempty"`
	OtherID    string `json:"other_id,omitempty"`
	OtherTitle string `json:"other_title,omitempty"`
}

// as is who the request acts as, where, and whether it may write.
func (h *served) as(r *http.Request) (Local, bool) {
	p, _ := access.FromContext(r.Context())
	space, _ := access.SpaceOf(r.Context())
	agent := p.Agent
	if agent == "" {
		agent = "sync"
	}
	by := docstore.Author{By: spaces.Agent(agent).String(), For: spaces.Person(p.Person).String(), Door: docstore.DoorSync}
	return Local{Store: docstore.New(h.db, space), By: by}, p.MaySave(space)
}

func (h *served) documents(w http.ResponseWriter, r *http.Request) {
	l, writable := h.as(r)
	docs, err := l.Documents(r.Context())
	if err != nil {
		answerErr(w, r, err)
		return
	}
	out := make([]listed, len(docs))
	for i, d := range docs {
		out[i] = listed{ID: d.ID, Title: d.Title, Version: d.Version, Deleted: d.Deleted}
	}
	answer(w, http.StatusOK, listing{Writable: writable, By: l.By, Documents: out})
}

func (h *served) version(w http.ResponseWriter, r *http.Request) {
	l, _ := h.as(r)
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil || n < 0 {
		answer(w, http.StatusBadRequest, refusal{Error: "n: a version's number (0: the latest)"})
		return
	}
	release, ok := h.hold(w, r, l, r.URL.Query().Get("id"), 0, docstore.WorkRead, n != 0)
	if !ok {
		return
	}
	defer release()
	v, err := l.Read(r.Context(), r.URL.Query().Get("id"), n)
	if err != nil {
		answerErr(w, r, err)
		return
	}
	answer(w, http.StatusOK, v)
}

func (h *served) write(w http.ResponseWriter, r *http.Request) {
	l, writable := h.as(r)
	if !writable {
		answer(w, http.StatusForbidden, refusal{Kind: "read_only", Error: readOnly(r)})
		return
	}
	var q syncRequest
	if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
		answer(w, http.StatusBadRequest, refusal{Error: fmt.Sprintf("the body is not the JSON of a sync request: %v", err)})
		return
	}
	release, ok := h.hold(w, r, l, q.ID, len(q.Text), docstore.WorkWrite, q.Base != 0)
	if !ok {
		return
	}
	defer release()
	ctx := r.Context()
	var (
		out any
		err error
	)
	switch op := r.PathValue("op"); op {
	case "create":
		out, err = l.Create(ctx, q.Title, q.Text)
	case "save":
		if q.Keep {
			out, err = l.SaveKeeping(ctx, q.ID, q.Base, q.Held, q.Text)
			break
		}
		if q.Prefer < linediff.Clash || q.Prefer > linediff.PreferTheirs {
			answer(w, http.StatusBadRequest, refusal{Error: "prefer: 0 (clash), 1 (the file's lines) or 2 (the space's)"})
			return
		}
		out, err = l.Store.Save(ctx, q.ID, q.Base, q.Text, l.By, q.Prefer)
	case "rename":
		out, err = l.Rename(ctx, q.ID, q.Title)
	case "delete":
		out, err = l.Delete(ctx, q.ID)
	case "undelete":
		out, err = l.Undelete(ctx, q.ID)
	default:
		answer(w, http.StatusNotFound, refusal{Error: fmt.Sprintf("no sync operation %q: create, save, rename, delete or undelete", op)})
		return
	}
	if err != nil {
		answerErr(w, r, err)
		return
	}
	answer(w, http.StatusOK, out)
}

// readOnly is why r's principal may not write through the sync.
func readOnly(r *http.Request) string {
	p, _ := access.FromContext(r.Context())
	space, _ := access.SpaceOf(r.Context())
	if p.Review {
		return fmt.Sprintf("the space %s is under review here: what an agent changes waits for the person's review, so this sync works one way, from the space to the folder, and may not save, create, rename or delete (the person's own sync uses the person's own token, or the data file)", space)
	}
	return fmt.Sprintf("this token may only read the space %s: a sync with it works one way, from the space to the folder, and may not save, create, rename or delete", space)
}

// answerErr answers a domain error as its refusal, and logs a fault.
func answerErr(w http.ResponseWriter, r *http.Request, err error) {
	var (
		clash *docstore.ClashError
		taken *docstore.TitleTakenError
	)
	switch {
	case errors.As(err, &clash):
		answer(w, http.StatusConflict, refusal{Kind: "clash", Error: err.Error(), Version: clash.Document.Version})
	case errors.As(err, &taken):
		answer(w, http.StatusConflict, refusal{Kind: "title_taken", Error: err.Error(), OtherID: taken.Other.ID, OtherTitle: taken.Other.Title})
	case errors.Is(err, docstore.ErrBadTitle):
		answer(w, http.StatusUnprocessableEntity, refusal{Kind: "bad_title", Error: err.Error()})
	case errors.Is(err, docstore.ErrBadText):
		answer(w, http.StatusUnprocessableEntity, refusal{Kind: "bad_text", Error: err.Error()})
	case errors.Is(err, docstore.ErrNotFound):
		answer(w, http.StatusNotFound, refusal{Kind: "not_found", Error: err.Error()})
	case errors.Is(err, kv.ErrBusy), errors.Is(err, kv.ErrUnavailable):
		w.Header().Set("Retry-After", "5")
		answer(w, http.StatusServiceUnavailable, refusal{Error: "the data is busy or unavailable: the next pass tries again"})
	case r.Context().Err() != nil:
	default:
		slog.Error("sync: a request failed", "path", r.URL.Path, "err", err)
		answer(w, http.StatusInternalServerError, refusal{Error: "internal error (logged on the server)"})
	}
}

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

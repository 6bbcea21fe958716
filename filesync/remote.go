package filesync

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// How much of a server's answer a Remote reads: a listing of a space's documents (about
// 130 bytes a document: 256 MiB is two million), and any other answer (a version's text
// is at most docstore.MaxText, which JSON's escapes may make six times longer).
const (
	maxListing = 256 << 20
	maxAnswer  = 6*docstore.MaxText + 1<<20
)

// Remote is a space on a team server (compass-mcp serve --http), reached with a person's
// token: the server's Mount. Its errors: ErrUnauthorized and ErrForbidden (wrapped, with
// the server's words) when the token won't do; ErrReadOnly for a write a read-only or
// reviewed token may not make; a server that doesn't answer, an error saying so (the pass
// changed nothing it had not confirmed, and the next tries again).
type Remote struct {
	URL   string // the server's base: http://HOST:PORT (a path prefix, behind a proxy, is kept)
	Token string // the person's token (compass-mcp tokens add), sent as a bearer
	Space string
	// Client, if set, is the HTTP client (nil: one with a 5 minute timeout).
	Client *http.Client

	writable atomic.Bool
}

func (s *Remote) Name() string   { return s.Space }
func (s *Remote) Writable() bool { return s.writable.Load() }

func (s *Remote) Documents(ctx context.Context) ([]docstore.Document, error) {
	var l listing
	if err := s.do(ctx, http.MethodGet, "documents", nil, nil, maxListing, &l); err != nil {
		return nil, err
	}
	// An id names files (a document's file whose title's is taken has it in its name):
	// one not of the store's shape is no compass server's, and the listing is refused.
	for _, d := range l.Documents {
		if !docstore.ValidID(d.ID) {
			return nil, fmt.Errorf("the server's listing of %q has a document id %q that no compass-mcp server makes: refused, nothing changed", s.Space, clipID(d.ID))
		}
	}
	s.writable.Store(l.Writable)
	docs := make([]docstore.Document, len(l.Documents))
	for i, d := range l.Documents {
		docs[i] = docstore.Document{ID: d.ID, Title: d.Title, Version: d.Version, Deleted: d.Deleted}
	}
	return docs, nil
}

func (s *Remote) Read(ctx context.Context, id string, n int) (docstore.Version, error) {
	var v docstore.Version
	q := url.Values{"id": {id}, "n": {strconv.Itoa(n)}}
	err := s.do(ctx, http.MethodGet, "version", q, nil, maxAnswer, &v)
	return v, err
}

func (s *Remote) Create(ctx context.Context, title, text string) (docstore.Saved, error) {
	var out docstore.Saved
	err := s.do(ctx, http.MethodPost, "create", nil, syncRequest{Title: title, Text: text}, maxAnswer, &out)
	return out, err
}

func (s *Remote) SaveKeeping(ctx context.Context, id string, base int, held []int, text string) (Kept, error) {
	var out Kept
	err := s.do(ctx, http.MethodPost, "save", nil, syncRequest{ID: id, Base: base, Held: held, Text: text, Keep: true}, maxAnswer, &out)
	return out, err
}

func (s *Remote) Rename(ctx context.Context, id, title string) (docstore.Saved, error) {
	var out docstore.Saved
	err := s.do(ctx, http.MethodPost, "rename", nil, syncRequest{ID: id, Title: title}, maxAnswer, &out)
	return out, err
}

func (s *Remote) Delete(ctx context.Context, id string) (docstore.Document, error) {
	var out docstore.Document
	err := s.do(ctx, http.MethodPost, "delete", nil, syncRequest{ID: id}, maxAnswer, &out)
	return out, err
}

func (s *Remote) Undelete(ctx context.Context, id string) (docstore.Document, error) {
	var out docstore.Document
	err := s.do(ctx, http.MethodPost, "undelete", nil, syncRequest{ID: id}, maxAnswer, &out)
	return out, err
}

// do sends one request to the server's sync endpoint op and decodes its answer, read up to
// limit bytes, into out; a refusal becomes the error the sync acts on.
func (s *Remote) do(ctx context.Context, method, op string, q url.Values, body any, limit int64, out any) error {
	u := strings.TrimRight(s.URL, "/") + "/spaces/" + url.PathEscape(s.Space) + "/sync/" + op
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("--server %q: %w", s.URL, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.Token != "" {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	c := s.Client
	if c == nil {
		c = &http.Client{Timeout: 5 * time.Minute}
	}
	resp, err := c.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the server at %s did not answer (nothing is changed for it; the next pass tries again): %w", s.URL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return fmt.Errorf("reading the server's answer to %s: %w", op, err)
	}
	if int64(len(raw)) > limit {
		return fmt.Errorf("the server's answer to %s is more than %d MiB: refused", op, limit>>20)
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("the server's answer to %s is not what a compass-mcp server answers (%v): is %s a compass-mcp serve --http?", op, err, s.URL)
		}
		return nil
	}
	var ref refusal
	if json.Unmarshal(raw, &ref) != nil || ref.Error == "" {
		ref.Error = strings.TrimSpace(string(raw[:min(len(raw), 300)]))
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%w: %s (the token is given with --token, or COMPASS_TOKEN)", ErrUnauthorized, ref.Error)
	case resp.StatusCode == http.StatusForbidden && ref.Kind == "read_only":
		s.writable.Store(false)
		return fmt.Errorf("%w: %s", ErrReadOnly, ref.Error)
	case resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: %s", ErrForbidden, ref.Error)
	case ref.Kind == "clash":
		return &docstore.ClashError{Document: docstore.Document{Version: ref.Version}}
	case ref.Kind == "title_taken":
		return &docstore.TitleTakenError{Title: ref.OtherTitle, Other: docstore.Document{ID: ref.OtherID, Title: ref.OtherTitle}}
	case ref.Kind == "bad_title":
		return &answered{docstore.ErrBadTitle, ref.Error}
	case ref.Kind == "bad_text":
		return &answered{docstore.ErrBadText, ref.Error}
	case ref.Kind == "not_found":
		return &answered{docstore.ErrNotFound, ref.Error}
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("the server at %s has no sync endpoint (%s): is it a compass-mcp serve --http of this version?", s.URL, ref.Error)
	}
	return fmt.Errorf("the server answered %s to %s: %s (the next pass tries again)", resp.Status, op, ref.Error)
}

// answered is a domain error as the server said it (its words already name the error).
type answered struct {
	err error
	msg string
}

func (e *answered) Error() string { return e.msg }
func (e *answered) Unwrap() error { return e.err }

// clipID is an id as an error shows it: at most 60 bytes.
func clipID(id string) string {
	if len(id) > 60 {
		return id[:60] + "..."
	}
	return id
}

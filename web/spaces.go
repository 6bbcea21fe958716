package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/mdscan"
	"github.com/compass-mcp/compass-mcp/threads"
)

// A signed-in person sees every space they may (Config.Access), and nothing of any other.
// Addresses stay as they are: a document's (/document/{id}...) is found in whichever of the
// person's spaces holds it, ids being unique across spaces; a document of a space they may
// not see is not found, in the same words and with the same status as one that does not
// exist. The pages that list (/, /new, /deleted, /conversations) show one space at a time,
// chosen by ?space=NAME; without it, the person's home space.

// spacesOf returns the spaces person may see, sorted. A store that can't be read gives
// none (the person is asked to sign in again), and is logged.
func (s *Site) spacesOf(ctx context.Context, person string) []string {
	mine, err := s.cfg.Access.SeenBy(ctx, person)
	if err != nil {
		s.log.Error("reading a person's spaces", "person", person, "err", err)
		return nil
	}
	return mine
}

// homeOf is the space a page without ?space= shows: the configured one if the person may
// see it, else their first.
func (s *Site) homeOf(mine []string) string {
	if slices.Contains(mine, s.cfg.Space) || len(mine) == 0 {
		return s.cfg.Space
	}
	return mine[0]
}

// searchOrder is p's spaces, the one a request names (or home) first: where a document or
// conversation is most likely to be.
func (p who) searchOrder(first string) []string {
	out := make([]string, 0, len(p.Spaces))
	if slices.Contains(p.Spaces, first) {
		out = append(out, first)
	}
	for _, sp := range p.Spaces {
		if sp != first {
			out = append(out, sp)
		}
	}
	return out
}

// space is the space a listing page shows: ?space=NAME when the person may see it, else
// their home. A name they may not see is answered "no such space" (the same for one that
// does not exist), and ok is false.
func (s *Site) space(w http.ResponseWriter, r *http.Request, p who) (string, bool) {
	name := r.URL.Query().Get("space")
	if name == "" {
		return p.Home, true
	}
	if !slices.Contains(p.Spaces, name) {
		s.problem(w, r, http.StatusNotFound, "No such space", "You have no space by that name: your documents are on the first page.")
		return "", false
	}
	return name, true
}

// docsOf returns the documents of the space, among p's, that holds document id (deleted or
// not). It returns docstore.ErrNotFound when none does: a document of a space p may not see
// is not found, as if it did not exist. Only an id names a document in an address, never
// title words, so that /document/launch/delete deletes nothing.
func (s *Site) docsOf(r *http.Request, p who, id string) (*docstore.Store, error) {
	return s.viewDoc(r, p, id, func(*docstore.Reader) error { return nil })
}

// viewDoc runs fn on one snapshot of the person's documents, with the Reader of the space,
// among p's, that holds document id (deleted or not): the lookup and what the page reads
// of the document are one read. It returns that space's documents (for what
// the page writes after), or docstore.ErrNotFound when no space of p's has the document, as
// docsOf says.
func (s *Site) viewDoc(r *http.Request, p who, id string, fn func(rd *docstore.Reader) error) (*docstore.Store, error) {
	order := p.searchOrder(r.URL.Query().Get("space"))
	if got, ok := pathID(id); !ok || got != id || len(order) == 0 {
		return nil, docstore.ErrNotFound
	}
	var found string
	err := docstore.New(s.db, order[0]).View(r.Context(), func(first *docstore.Reader) error {
		found = ""
		for _, sp := range order {
			// ByID looks the id up in the space's records, deleted ones too, where Find
			// would go on to match title words.
			rd := first.In(sp)
			_, err := rd.ByID(id)
			if errors.Is(err, docstore.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			found = sp
			if err := p.countWaiting(first); err != nil {
				return err
			}
			return fn(rd)
		}
		return docstore.ErrNotFound
	})
	if found == "" {
		return nil, err
	}
	return docstore.New(s.db, found), err
}

// pathID is the id of /document/ID, upper-cased, if ID looks like a ULID.
func pathID(id string) (string, bool) {
	if id == "" {
		return "", false
	}
	return mdscan.DocumentID("/document/" + id)
}

// viewThread runs fn on one snapshot of the conversations of the space, among p's, that
// has conversation id, with its summary: the space ?space= names first (conversation ids
// are not unique across spaces), then home, then the others, a View each space looked in.
// The page's own links name the space (Link), so for every address the page gives, the
// first space looked in is the one. It returns that space's name, or threads.ErrNotFound
// when none has it.
func (s *Site) viewThread(r *http.Request, p who, id string, fn func(rd *threads.Reader, c threads.Conversation) error) (string, error) {
	first := r.URL.Query().Get("space")
	if first == "" {
		first = p.Home
	}
	for _, sp := range p.searchOrder(first) {
		found := false
		err := threads.New(s.db, sp).View(r.Context(), func(rd *threads.Reader) error {
			c, err := rd.Get(id)
			if found = err == nil; !found {
				return err
			}
			return fn(rd, c)
		})
		if found {
			return sp, err
		}
		if !errors.Is(err, threads.ErrNotFound) {
			return "", err
		}
	}
	return "", threads.ErrNotFound
}

// in is a page of p's in space.
func (p who) in(space, title, nav string) page {
	return page{Title: title, Nav: nav, Space: space, Spaces: p.Spaces, Home: p.Home, FormToken: formToken(p.cookie), waiting: p.waiting}
}

// Link is path in the page's space: with ?space=NAME unless it is the person's home, then
// the query pairs kv (name, value, ...).
func (p page) Link(path string, kv ...string) string {
	q := url.Values{}
	if p.Space != p.Home && p.Space != "" {
		q.Set("space", p.Space)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// SpaceParam is the space a form must carry: "" for the person's home.
func (p page) SpaceParam() string {
	if p.Space == p.Home {
		return ""
	}
	return p.Space
}

// SwitchTo is where the space switcher goes for space: the same kind of list there.
func (p page) SwitchTo(space string) string {
	path := "/"
	switch p.Nav {
	case "convs":
		path = "/conversations"
	case "new":
		path = "/new"
	case "deleted":
		path = "/deleted"
	}
	if space == p.Home {
		return path
	}
	return path + "?space=" + url.QueryEscape(space)
}

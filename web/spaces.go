package web

import (
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
func (s *Site) spacesOf(person string) []string {
	mine, err := s.cfg.Access.SpacesOf(person)
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
	if got, ok := pathID(id); !ok || got != id {
		return nil, docstore.ErrNotFound
	}
	for _, sp := range p.searchOrder(r.URL.Query().Get("space")) {
		docs := docstore.New(s.db, sp)
		// ByID looks the id up in the space's records, deleted ones too, where Find
		// would go on to match title words.
		_, err := docs.ByID(id)
		switch {
		case err == nil:
			return docs, nil
		case !errors.Is(err, docstore.ErrNotFound):
			return nil, err
		}
	}
	return nil, docstore.ErrNotFound
}

// readOf is docsOf, then the store's ReadLinkedID of version n of id (backlinksShown): the
// lookup, the read and what its [[links]] name in one View a space tried; the store reads
// names with it (WithNames).
func (s *Site) readOf(r *http.Request, p who, id string, n int) (*docstore.Store, docstore.Reading, error) {
	if got, ok := pathID(id); !ok || got != id {
		return nil, docstore.Reading{}, docstore.ErrNotFound
	}
	for _, sp := range p.searchOrder(r.URL.Query().Get("space")) {
		docs := docstore.New(s.db, sp).WithNames()
		read, recorded, err := docs.ReadLinkedID(id, n, backlinksShown)
		if recorded || err != nil {
			return docs, read, err
		}
	}
	return nil, docstore.Reading{}, docstore.ErrNotFound
}

// logOf is docsOf, then the store's Log of id, the lookup and the document's newest versions
// in one View a space tried; the store reads names with it (WithNames).
func (s *Site) logOf(r *http.Request, p who, id string) (*docstore.Store, docstore.Document, []docstore.Version, error) {
	if got, ok := pathID(id); !ok || got != id {
		return nil, docstore.Document{}, nil, docstore.ErrNotFound
	}
	for _, sp := range p.searchOrder(r.URL.Query().Get("space")) {
		docs := docstore.New(s.db, sp).WithNames()
		d, vs, recorded, err := docs.LogID(id)
		if recorded || err != nil {
			return docs, d, vs, err
		}
	}
	return nil, docstore.Document{}, nil, docstore.ErrNotFound
}

// pathID is the id of /document/ID, upper-cased, if ID looks like a ULID.
func pathID(id string) (string, bool) {
	if id == "" {
		return "", false
	}
	return mdscan.DocumentID("/document/" + id)
}

// threadsOf returns the conversations of the space, among p's, that has conversation id:
// the space ?space= names first (conversation ids are not unique across spaces), then
// home, then the others; and that space's name. It returns threads.ErrNotFound when none
// has it.
func (s *Site) threadsOf(r *http.Request, p who, id string) (*threads.Store, string, threads.Conversation, error) {
	first := r.URL.Query().Get("space")
	if first == "" {
		first = p.Home
	}
	for _, sp := range p.searchOrder(first) {
		convs := threads.New(s.db, sp)
		c, err := convs.Get(id)
		if err == nil {
			return convs, sp, c, nil
		}
		if !errors.Is(err, threads.ErrNotFound) {
			return nil, "", c, err
		}
	}
	return nil, "", threads.Conversation{}, threads.ErrNotFound
}

// in is a page of p's in space.
func (p who) in(space, title, nav string) page {
	return page{Title: title, Nav: nav, Space: space, Spaces: p.Spaces, Home: p.Home}
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

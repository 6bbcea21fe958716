// Package access says who may do what on a server shared by a team: the members of each
// space, the tokens people give their agents, the MCP sessions they begin, the browsers
// signed in to the person's page, and the principal a request acts as.
//
// A request is turned into a Principal once, at the edge, by one decision (Gate.Decide:
// the loopback Host rule, the bearer token, the server's review mode), and carried in its
// context; every door (the MCP tools, the messages endpoint, the sync's) asks FromContext
// and the Principal's MaySee, MayWrite and MaySave, and never works it out again from
// headers or flags.
//
// # Layout
//
//	access/members/<space>/<person>    a member of a space (value: when added, RFC 3339)
//	access/member_of/<person>/<space>  the same, by person, so SpacesOf reads one bucket
//	access/tokens/<sha256 of secret>   a token row (JSON); the secret itself is never stored
//	access/token_ids/<id>              the sha256 of that id's token, for list and revoke
//	access/mcp_sessions/<sha256 of id> an MCP session (JSON: who began it, client, when, last used)
//	web/codes/<sha256 of code>         a one-time sign-in code (JSON SignIn: person, space, next, expires)
//	web/sessions/<sha256 of cookie>    a browser signed in to the page (JSON SignIn: person, space, expires)
//
// The sign-in rows stay under web/, where the person's page kept them before they moved
// here, so that files written before, and older replicas during an upgrade, read them as
// they are; package web keeps only its own keys there (the store's id, the page's address).
//
// The OAuth authorization server (package oauth) keeps its own state beside this one, and
// the access tokens it hands out are this package's token rows: Store has the methods its
// Access interface asks for (SpacesOf, AddToken, Rotate, Revoke).
package access

import (
	"context"
	"net/http"
	"slices"
)

// Principal is who a request acts as, and what it may reach.
type Principal struct {
	Person   string   // the person (id) the request acts for: versions say "for" them
	Agent    string   // the agent's name the token fixes; "" means the client's own name
	Spaces   []string // the spaces this request may see, sorted: the token's, among its person's
	ReadOnly bool     // the token may read but not write
	Review   bool     // its changes are proposals, for its person to accept or decline: the token's, or the server's --review
	TokenID  string   // the token row's id; "" for the server's own --token or an open loopback server
	Client   string   // the label of what minted the token (e.g. an OAuth client); "" for the CLI
	Resource string   // the OAuth resource (RFC 8707) the token is bound to; "" for anywhere
}

// MaySee reports whether the request may read space.
func (p Principal) MaySee(space string) bool {
	_, found := slices.BinarySearch(p.Spaces, space)
	return found
}

// MayWrite reports whether the request may change space: as versions, or, under review,
// as proposals (the MCP tools' writes).
func (p Principal) MayWrite(space string) bool { return !p.ReadOnly && p.MaySee(space) }

// MaySave reports whether the request may save versions of space as its person, with no
// review between: a person's own door, such as the folder sync, needs it. A reviewed or
// read-only principal may not.
func (p Principal) MaySave(space string) bool { return p.MayWrite(space) && !p.Review }

type principalKey struct{}
type spaceKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal that Gate.Require put in ctx, if any. A context
// without one (stdio, the command line) acts as the configured person, as before.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// WithSpace returns ctx carrying the space the request works in (checked by RequireSpace).
func WithSpace(ctx context.Context, space string) context.Context {
	return context.WithValue(ctx, spaceKey{}, space)
}

// SpaceOf returns the space WithSpace put in ctx, if any; without one a request works in
// the server's configured space.
func SpaceOf(ctx context.Context) (string, bool) {
	s, ok := ctx.Value(spaceKey{}).(string)
	return s, ok
}

// Mux is where a server's doors put their routes: an *http.ServeMux, or Routes, which also
// lists them (so that a test can try every route the server has).
type Mux interface {
	Handle(pattern string, h http.Handler)
	HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request))
}

// Routes is a Mux that keeps the patterns given to it, in order.
type Routes struct {
	Mux      *http.ServeMux
	Patterns []string
}

// Handle registers h at pattern on the ServeMux, and keeps pattern.
func (r *Routes) Handle(pattern string, h http.Handler) {
	r.Patterns = append(r.Patterns, pattern)
	r.Mux.Handle(pattern, h)
}

// HandleFunc registers h at pattern on the ServeMux, and keeps pattern.
func (r *Routes) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	r.Handle(pattern, http.HandlerFunc(h))
}

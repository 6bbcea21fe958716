package access

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// Gate is the one decision of who an HTTP request acts as and what it may do (Decide),
// and the middleware every door of a served store sits behind (Door: the shape of go-sdk's
// auth.RequireBearerToken, with the token rows of a Store behind it).
//
// A request's bearer token is, in turn: the server's own --token (Static), which acts as
// the owner (see Store.WithOwner); or a token row's secret. A server with neither a static
// token nor any token row is open (it serves loopback only, see the cmd package): every
// request without an Authorization header acts as the owner, as a one-person server always
// did. A header that doesn't verify is refused, open server or not.
type Gate struct {
	Store  *Store // members and token rows, with the owner set
	Static string // the server's own token (--token); "" for none
	Agent  string // who the owner's requests say the agent is (--agent); "" for the client's name
	// Hosts are the Host names the server answers to beside loopback ones: the host of
	// --public-url (see ForeignHost).
	Hosts []string
	// Review is the server's review mode (--review, COMPASS_REVIEW): every principal the
	// gate makes, the owner's included, has its changes kept as proposals.
	Review bool
	// ResourceMetadata, if set, is the URL of the server's OAuth protected resource
	// metadata, given in every WWW-Authenticate (RFC 9728).
	ResourceMetadata string
	// JSON, if set, answers refusals as {"error": "..."} with Content-Type
	// application/json, for JSON APIs such as the messages endpoint, instead of plain text.
	JSON bool
	// OAuth, if set, is the server's OAuth authorization server (package oauth): a refusal's
	// WWW-Authenticate names the endpoint's own resource metadata, and a token bound to a
	// resource (RFC 8707) is refused wherever that resource does not reach.
	OAuth Resources
	// Closed makes every request need a token even while no token row exists: a server
	// behind a reverse proxy on loopback is not "this machine only".
	Closed bool
}

// Resources is what the gate asks of the OAuth authorization server.
type Resources interface {
	// Allows reports whether a token bound to resource may be used at the URL path.
	Allows(resource, path string) bool
	// ResourceMetadataURL is where the protected resource metadata of the URL path is.
	ResourceMetadataURL(path string) string
}

// refuse answers status with msg, as plain text or, for a JSON gate, as {"error": msg},
// and closes the connection after it: a client that was refused holds no connection (and
// no file descriptor) open.
func (g *Gate) refuse(w http.ResponseWriter, msg string, status int) {
	w.Header().Set("Connection", "close")
	if !g.JSON {
		http.Error(w, msg, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Error string `json:"error"`
	}{msg})
}

// ForeignHost reports whether r names a Host this server doesn't answer to, the one rule
// of every door: a loopback Host (127.0.0.0/8, ::1, localhost) is answered, and so is one of
// allowed (the host of --public-url, behind a reverse proxy that passes the client's Host
// on); with allowed given, no other Host is answered on any listener; without, no other
// is answered on a loopback listener. What it stops is DNS rebinding: a web page that
// rebinds its own name to 127.0.0.1 sends that name as both Host and Origin, so that the
// browser takes the server for the page's own origin and its fetch() may add any header
// (Authorization included) without a preflight. Such a request is refused whatever it
// carries (Decide, KnownHosts). A reverse proxy on the same machine either forwards a
// loopback Host (Caddy: header_up Host {upstream_hostport}) or passes the public one
// given as --public-url. mcp-go's own check at /mcp (WithAllowedHosts) is the same rule.
func ForeignHost(r *http.Request, allowed []string) bool {
	host := strings.Trim(hostOf(r.Host), "[]")
	if loopbackHost(host) {
		return false
	}
	_, port, _ := net.SplitHostPort(r.Host)
	for _, a := range allowed {
		ah, ap, err := net.SplitHostPort(a)
		if err != nil {
			ah, ap = a, ""
		}
		if strings.EqualFold(strings.Trim(ah, "[]"), host) && (ap == "" || ap == port || port == "" && (ap == "80" || ap == "443")) {
			return false
		}
	}
	if len(allowed) > 0 {
		return true
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && loopbackHost(hostOf(local.String()))
}

// KnownHosts refuses (403) every request ForeignHost reports (with allowed), before
// anything else sees it: the whole of a served address sits behind it.
func KnownHosts(allowed []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ForeignHost(r, allowed) {
			w.Header().Set("Connection", "close")
			http.Error(w, "Forbidden: "+foreignHost(r).Error(), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func foreignHost(r *http.Request) error {
	return fmt.Errorf("%w: this server takes requests for loopback names only (127.0.0.1, localhost), or its --public-url's host, not %q", ErrForeignHost, r.Host)
}

func hostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// The errors of Decide, beside Store.Verify's (ErrUnknownToken, ErrMistypedToken,
// ErrExpiredToken, ErrRevokedToken) and the store's own.
var (
	// ErrForeignHost is returned for a request to a loopback listener naming another host
	// (ForeignHost): 403 whatever it carries.
	ErrForeignHost = errors.New("forbidden host")
	// ErrNoBearer is returned for a request without "Authorization: Bearer <token>" on a
	// server that needs one, or with an Authorization header of another scheme.
	ErrNoBearer = errors.New("no bearer token")
	// ErrOtherResource is returned for an OAuth token bound to a resource (RFC 8707) that
	// does not reach the request's path.
	ErrOtherResource = errors.New("the token is for another resource")
)

// Decide is the one decision every door asks: who r acts as (person, agent, spaces,
// read-only, review) or why it may not be served. In turn:
//
//   - a request naming a Host the server doesn't answer to (ForeignHost: on loopback, any
//     but loopback names and Hosts) is refused (ErrForeignHost), whatever it carries;
//   - an Authorization header must verify: the server's --token, or a token row's secret
//     (Store.Verify's errors otherwise), and a header of another scheme is ErrNoBearer.
//     A header that doesn't verify is never taken as "no token needed";
//   - without one, an open server (no --token, no token row, not Closed) acts as its
//     owner; any other answers ErrNoBearer;
//   - an OAuth token bound to a resource is refused where it doesn't reach
//     (ErrOtherResource);
//   - the server's review mode (Review) is part of every principal it makes.
func (g *Gate) Decide(r *http.Request) (Principal, error) {
	if ForeignHost(r, g.Hosts) {
		return Principal{}, foreignHost(r)
	}
	p, err := g.authenticate(r)
	if err != nil {
		return Principal{}, err
	}
	if p.Resource != "" && (g.OAuth == nil || !g.OAuth.Allows(p.Resource, r.URL.Path)) {
		return Principal{}, fmt.Errorf("%w (%s)", ErrOtherResource, p.Resource)
	}
	p.Review = p.Review || g.Review
	return p, nil
}

func (g *Gate) authenticate(r *http.Request) (Principal, error) {
	ctx := r.Context()
	if r.Header.Get("Authorization") == "" {
		if g.Static == "" && !g.Closed {
			guarded, err := g.Store.HasTokens(ctx)
			if err != nil {
				return Principal{}, err
			}
			if !guarded {
				return g.owner(ctx)
			}
		}
		return Principal{}, ErrNoBearer
	}
	token, ok := bearer(r)
	switch {
	case !ok:
		return Principal{}, ErrNoBearer
	case g.Static != "" && subtle.ConstantTimeCompare([]byte(token), []byte(g.Static)) == 1:
		return g.owner(ctx)
	case strings.HasPrefix(token, secretPrefix):
		return g.Store.Verify(ctx, token)
	}
	return Principal{}, ErrUnknownToken
}

func (g *Gate) owner(ctx context.Context) (Principal, error) {
	o := g.Store.owner
	sp, err := g.Store.SpacesOf(ctx, o.Person)
	return Principal{Person: o.Person, Agent: g.Agent, Spaces: sp}, err
}

// bearer returns the token of r's "Authorization: Bearer <token>" (the scheme compared
// case-insensitively, RFC 7235).
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// Require is middleware that puts the request's Principal (Decide) in its context, or
// answers 401 with a WWW-Authenticate challenge (RFC 6750) when there is none, 403 for a
// foreign Host.
func (g *Gate) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := g.Decide(r)
		if err != nil {
			var why string
			switch {
			case errors.Is(err, ErrForeignHost):
				g.refuse(w, "Forbidden: "+err.Error(), http.StatusForbidden)
				return
			case errors.Is(err, ErrNoBearer):
				g.challenge(w, r, "", "")
				g.refuse(w, "Unauthorized: send Authorization: Bearer <token> (compass-mcp tokens add makes one)", http.StatusUnauthorized)
				return
			case errors.Is(err, ErrOtherResource):
				why = err.Error()
				g.challenge(w, r, "invalid_token", why)
				g.refuse(w, "Unauthorized: "+why+"; sign in again for this address", http.StatusUnauthorized)
				return
			case errors.Is(err, ErrExpiredToken):
				why = "the token has expired"
			case errors.Is(err, ErrRevokedToken):
				why = "the token was revoked"
			case errors.Is(err, ErrMistypedToken):
				why = "the token is incomplete or mistyped (its checksum doesn't match): copy it again, whole"
			case errors.Is(err, ErrUnknownToken):
				why = "the token is not known here"
			case errors.Is(err, kv.ErrBusy):
				w.Header().Set("Retry-After", "1")
				g.refuse(w, "The data file is busy: another compass-mcp process holds it. Try again in a moment.", http.StatusServiceUnavailable)
				return
			case errors.Is(err, kv.ErrUnavailable):
				// Not the token's fault: a client told 401 would drop a good token.
				slog.Error("checking a request's token: the database is unavailable", "err", err)
				w.Header().Set("Retry-After", "5")
				g.refuse(w, "The database is unavailable: try again in a moment.", http.StatusServiceUnavailable)
				return
			default:
				slog.Error("checking a request's token", "err", err)
				g.refuse(w, "Internal error (logged on the server)", http.StatusInternalServerError)
				return
			}
			g.challenge(w, r, "invalid_token", why)
			g.refuse(w, "Unauthorized: "+why+"; ask for a new one (compass-mcp tokens add)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// Door is the chain every door that takes bearer tokens sits behind: Require (who asks,
// refused before the body is read), then guard (the transport's limits: the body budget,
// other origins), then RequireSpace (the asker may see the space space(r) names). The MCP
// endpoints, the messages endpoint and the sync's are each one Door.
func (g *Gate) Door(space func(*http.Request) string, guard func(http.Handler) http.Handler, h http.Handler) http.Handler {
	return g.Require(guard(g.RequireSpace(space, h)))
}

// challenge sets WWW-Authenticate: Bearer with the realm, the error if any, and the
// resource metadata URL if the gate has one (the OAuth server's for r's endpoint).
// Challenge sets the WWW-Authenticate header of a refusal of r, for a front door that
// refuses on its own after the gate let the request by (a read-only token that would
// write: code "insufficient_scope"). Every 401 and 403 carries one.
func (g *Gate) Challenge(w http.ResponseWriter, r *http.Request, code, description string) {
	g.challenge(w, r, code, description)
}

func (g *Gate) challenge(w http.ResponseWriter, r *http.Request, code, description string) {
	params := []string{`realm="compass-mcp"`}
	if metadata := g.ResourceMetadata; metadata != "" || g.OAuth != nil {
		if g.OAuth != nil {
			metadata = g.OAuth.ResourceMetadataURL(r.URL.Path)
		}
		params = append(params, fmt.Sprintf("resource_metadata=%q", metadata))
	}
	if code != "" {
		params = append(params, fmt.Sprintf("error=%q", code), fmt.Sprintf("error_description=%q", description))
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
}

// RequireSpace is middleware, after Require, that lets through only requests whose
// principal may see the space named by space(r) (403 otherwise, 404 for a name no space
// can have), and records that space in the context (SpaceOf) for what follows.
func (g *Gate) RequireSpace(space func(*http.Request) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := space(r)
		if spaces.Valid(name) != nil {
			g.refuse(w, "Not found: no space can have that name", http.StatusNotFound)
			return
		}
		p, ok := FromContext(r.Context())
		if !ok || !p.MaySee(name) {
			why := fmt.Sprintf("this token does not allow the space %s", name)
			g.challenge(w, r, "insufficient_scope", why)
			g.refuse(w, "Forbidden: "+why+" (its person is not a member, or the token is for other spaces)", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithSpace(r.Context(), name)))
	})
}

// PathSpace is the {space} of a route such as /spaces/{space}/mcp: the usual first
// argument of RequireSpace.
func PathSpace(r *http.Request) string { return r.PathValue("space") }

// SentFromPage reports whether r says a browser sent it from a page of the host it was
// sent to: Sec-Fetch-Site: same-origin, or an Origin whose host is r's Host (the comparison
// http.CrossOriginProtection makes, so a page behind a reverse proxy that keeps Host
// passes both alike). Every browser's form post and fetch says one or the other; a plain
// HTTP client says neither, and http.CrossOriginProtection lets such a request through.
// The person's page and the OAuth consent refuse a request that changes something without
// it: a program holding the person's cookie (a reviewed agent that was handed a sign-in
// link) is not the person.
func SentFromPage(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "same-origin" {
		return true
	}
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return false
	}
	u, err := url.Parse(o)
	return err == nil && u.Host != "" && u.Host == r.Host
}

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

// Gate turns an HTTP request into a Principal: the middleware every front door of a
// served store sits behind (the shape of go-sdk's auth.RequireBearerToken, with the token
// rows of a Store behind it).
//
// A request's bearer token is, in turn: the server's own --token (Static), which acts as
// the owner (see Store.WithOwner); or a token row's secret. A server with neither a static
// token nor any token row is open (it serves loopback only, see the cmd package): every
// request acts as the owner, as a one-person server always did.
type Gate struct {
	Store  *Store // members and token rows, with the owner set
	Static string // the server's own token (--token); "" for none
	Agent  string // who the owner's requests say the agent is (--agent); "" for the client's name
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

// NotRebound refuses (403) a request without a token that came to a loopback address
// naming another host: a web page that rebinds its own name to 127.0.0.1 (DNS rebinding)
// sends its name as both Host and Origin, so the Origin check lets it by, and on a server
// without a token it would read and write as the person. Every endpoint beside /mcp that
// the gate admits without a token goes through it (the messages endpoint, the sync's).
// (mcp-go refuses such requests at /mcp even with a token; a page can't send the person's
// token, so a reverse proxy on the same machine that keeps the public Host may still use
// one here.)
func (g *Gate) NotRebound(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if ok && r.Header.Get("Authorization") == "" && loopbackHost(hostOf(local.String())) && !loopbackHost(strings.Trim(hostOf(r.Host), "[]")) {
			g.refuse(w, fmt.Sprintf("a server on loopback takes requests for loopback names only, not %q", r.Host), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func hostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Authenticate returns who r acts as. It returns ErrNoBearer without a bearer token where
// one is needed, or Store.Verify's errors for a token that is not (or no longer) good.
func (g *Gate) Authenticate(r *http.Request) (Principal, error) {
	ctx := r.Context()
	token, hasToken := bearer(r)
	if g.Static != "" && hasToken && subtle.ConstantTimeCompare([]byte(token), []byte(g.Static)) == 1 {
		return g.owner(ctx)
	}
	if hasToken && strings.HasPrefix(token, secretPrefix) {
		return g.Store.Verify(ctx, token)
	}
	if g.Static == "" && !g.Closed {
		open, err := g.Store.HasTokens(ctx)
		if err != nil {
			return Principal{}, err
		}
		if !open {
			return g.owner(ctx) // no token is asked for: what the request carries doesn't matter
		}
	}
	if hasToken {
		return Principal{}, ErrUnknownToken
	}
	return Principal{}, ErrNoBearer
}

// ErrNoBearer is returned by Authenticate for a request without "Authorization: Bearer
// <token>" on a server that needs one.
var ErrNoBearer = errors.New("no bearer token")

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

// Require is middleware that puts the request's Principal in its context, or answers 401
// with a WWW-Authenticate challenge (RFC 6750) when there is none.
func (g *Gate) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := g.Authenticate(r)
		if err != nil {
			var why string
			switch {
			case errors.Is(err, ErrNoBearer):
				g.challenge(w, r, "", "")
				g.refuse(w, "Unauthorized: send Authorization: Bearer <token> (compass-mcp tokens add makes one)", http.StatusUnauthorized)
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
		if p.Resource != "" && (g.OAuth == nil || !g.OAuth.Allows(p.Resource, r.URL.Path)) {
			why := "the token is for another resource (" + p.Resource + ")"
			g.challenge(w, r, "invalid_token", why)
			g.refuse(w, "Unauthorized: "+why+"; sign in again for this address", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
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

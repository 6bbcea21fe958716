// Package oauth is compass-mcp's own OAuth 2.1 authorization server: the sign-in that
// Claude's connectors and other MCP clients use instead of a static token.
//
// It serves what the MCP authorization specification (2025-06-18 and 2025-11-25) asks of a
// server: protected resource metadata (RFC 9728), authorization server metadata (RFC 8414),
// the authorization code flow with PKCE (S256 only) for public clients, dynamic client
// registration (RFC 7591), client ID metadata documents (a client_id that is an HTTPS URL),
// resource indicators (RFC 8707) and rotating refresh tokens. The consent step is an HTML
// form shown to the person signed in on the browser.
//
// It keeps its own state (registered clients, consents being asked, codes, refresh chains)
// in its own buckets of the data file, and asks the rest of the server, through small
// interfaces, for what is not its own: who is signed in on a browser (Page: the person's
// page), and which spaces a person may give and the token rows its access tokens are
// (Access: package access's Store).
//
// # Caveats
//
// Page and Access are called outside this package's transactions: both may use the same
// store, whose single writer (kv runs one write transaction at a time, on either backend)
// would otherwise wait on itself. So an exchange is two
// transactions around the minting of a row, and each checks again what the other might have
// changed in between (a code burned, a chain revoked).
package oauth

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
)

// Page is what the authorization server needs of the person's page (web.Site): who is
// signed in on the browser, and how to ask them to sign in.
type Page interface {
	// SignedIn returns the id of the person signed in on the browser that sent r.
	SignedIn(r *http.Request) (person string, ok bool)
	// AskSignIn answers r, sent by a browser nobody is signed in on, with what the person
	// needs to sign in and then come back to r's URL.
	AskSignIn(w http.ResponseWriter, r *http.Request)
}

// Access is what the authorization server needs of who may do what (access.Store): the
// spaces a person may allow an agent into, and the token rows that access tokens are, the
// same rows as the team server's tokens, listed and revoked by the same commands. One
// consent is one row: a refresh gives the row a new secret and expiry (Rotate), so the
// person's list shows one row for a connector however often it refreshes, and revoking
// that row ends the connector.
type Access interface {
	// SpacesOf lists the spaces person may see, and so may allow an agent into.
	SpacesOf(ctx context.Context, person string) ([]string, error)
	// AddToken makes a row and returns its secret (the access token).
	AddToken(ctx context.Context, n access.NewToken) (secret string, t access.Token, err error)
	// Rotate gives row id a new secret, working until expires; the old secret stops
	// working. It returns access.ErrRevokedToken or access.ErrNoToken for a row that was
	// revoked or is gone: the refresh is refused and its chain ends.
	Rotate(ctx context.Context, id string, expires time.Time) (secret string, err error)
	// Revoke ends row id; it returns access.ErrNoToken for a row that is gone.
	Revoke(ctx context.Context, id string) (access.Token, error)
}

// Config is what New needs.
type Config struct {
	// Issuer is the server's public base URL, as clients reach it: https://compass.example.com
	// behind a reverse proxy, http://127.0.0.1:7410 locally. No path, query or fragment.
	Issuer string
	DB     kv.DB
	// Page is the person's page, where people sign in; nil when none is served beside the
	// server, and then nobody can sign in to allow an app (the consent says so).
	Page Page
	// Access is who may do what (access.Store, with the server's owner): required.
	Access Access

	// Lifetimes; zero means the default.
	CodeTTL    time.Duration // authorization codes: 1 minute
	AccessTTL  time.Duration // access tokens: 1 hour
	RefreshTTL time.Duration // a refresh chain unused this long ends: 30 days
	ConsentTTL time.Duration // a consent page left open: 10 minutes

	// Fetch bounds how client ID metadata documents are fetched.
	Fetch FetchOptions

	// Now is the clock; nil means time.Now. Tests move it to expire codes.
	Now func() time.Time
}

// FetchOptions bound the fetching of client ID metadata documents.
type FetchOptions struct {
	Timeout  time.Duration // the whole fetch: 5 s by default
	MaxBytes int64         // the document: 64 KiB by default
	// AllowLoopback lets a document be fetched from a loopback address; tests only. Private,
	// link-local and unspecified addresses are refused whatever this says.
	AllowLoopback bool
	// RootCAs, if set, are the certificates trusted for the fetch instead of the system's
	// (tests serve documents from httptest's TLS server).
	RootCAs *x509.CertPool
}

// Server is the authorization server. Its handlers are registered with Register.
type Server struct {
	issuer                                     string // without a trailing slash
	base                                       *url.URL
	db                                         kv.DB
	page                                       Page
	access                                     Access
	codeTTL, accessTTL, refreshTTL, consentTTL time.Duration
	fetch                                      FetchOptions
	now                                        func() time.Time
	client                                     *http.Client // for client ID metadata documents
	limit                                      *limiter     // unauthenticated requests, per client address (limit.go)
}

// New checks c and returns the authorization server it describes.
func New(ctx context.Context, c Config) (*Server, error) {
	u, err := url.Parse(c.Issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("the issuer is the server's public base URL, like https://compass.example.com (no path); got %q", c.Issuer)
	}
	if c.DB == nil || c.Access == nil {
		return nil, errors.New("oauth.New needs a data file and Access")
	}
	if c.Page == nil {
		c.Page = noPage{}
	}
	s := &Server{
		issuer:     u.Scheme + "://" + strings.ToLower(u.Host),
		db:         c.DB,
		page:       c.Page,
		access:     c.Access,
		codeTTL:    or(c.CodeTTL, time.Minute),
		accessTTL:  or(c.AccessTTL, time.Hour),
		refreshTTL: or(c.RefreshTTL, 30*24*time.Hour),
		consentTTL: or(c.ConsentTTL, 10*time.Minute),
		fetch:      c.Fetch,
		now:        c.Now,
	}
	s.base, _ = url.Parse(s.issuer)
	if s.now == nil {
		s.now = time.Now
	}
	s.fetch.Timeout = or(s.fetch.Timeout, 5*time.Second)
	if s.fetch.MaxBytes <= 0 {
		s.fetch.MaxBytes = 64 << 10
	}
	s.client = fetchClient(s.fetch)
	s.limit = newLimiter(s.now)
	if err := s.db.Update(ctx, createBuckets); err != nil {
		return nil, err
	}
	return s, nil
}

// noPage is the sign-in when no person's page is served beside the server: nobody is
// signed in, and asking to sign in says why.
type noPage struct{}

func (noPage) SignedIn(*http.Request) (string, bool) { return "", false }

func (noPage) AskSignIn(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "Allowing an app needs you signed in to the person's page, which this server does not serve beside /mcp (--web). Serve it there (the default) to connect apps with OAuth.", http.StatusServiceUnavailable)
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Issuer is the server's public base URL, without a trailing slash.
func (s *Server) Issuer() string { return s.issuer }

// Register adds the authorization server's routes to mux: the two metadata documents (the
// protected resource's also path-qualified), /authorize, /consent, /token and /register
// (these two limited per client address: limit.go).
func (s *Server) Register(mux access.Mux) {
	mux.HandleFunc("/.well-known/oauth-protected-resource", s.resourceMetadata)
	mux.HandleFunc("/.well-known/oauth-protected-resource/", s.resourceMetadata)
	mux.HandleFunc("/.well-known/oauth-authorization-server", s.serverMetadata)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.Handle("POST /consent", http.NewCrossOriginProtection().Handler(s.fromPage(http.HandlerFunc(s.consent))))
	mux.HandleFunc("/token", s.limited(s.token))
	mux.HandleFunc("/register", s.limited(s.register))
}

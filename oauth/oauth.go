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
// interfaces, for what is not its own: who is signed in (People) and the token rows that the
// access tokens it hands out are (Tokens).
//
// # Caveats
//
// People and Tokens are called outside this package's transactions: both may use the same
// store, whose single writer (kv runs one write transaction at a time, on either backend)
// would otherwise wait on itself. So an exchange is two
// transactions around the minting of a row, and each checks again what the other might have
// changed in between (a code burned, a chain revoked).
package oauth

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

// People is what the authorization server needs of the person's page: who is signed in on
// the browser, how to ask them to sign in, and which spaces they may give an agent.
type People interface {
	// SignedIn returns the id of the person signed in on the browser that sent r.
	SignedIn(r *http.Request) (person string, ok bool)
	// AskSignIn answers r, sent by a browser nobody is signed in on, with what the person
	// needs to sign in and then come back to r's URL.
	AskSignIn(w http.ResponseWriter, r *http.Request)
	// Spaces lists the spaces person may see, and so may allow an agent into.
	Spaces(person string) ([]string, error)
}

// Grant is what a person allowed a client, and so what an access token minted for it may do.
type Grant struct {
	Person   string
	Agent    string    // the agent's name, as versions and messages record it
	Spaces   []string  // the spaces the token reaches
	ReadOnly bool      // no writing tools
	Expires  time.Time // when the access token stops working
	Client   string    // the client's name and where it sends the person back, for the person's lists
	Resource string    // the RFC 8707 resource the token is bound to (see Server.Allows)
}

// Tokens mints and revokes the token rows that access tokens are: the same rows as the
// team server's tokens, listed and revoked by the same commands. One consent is one row:
// a refresh gives the row a new secret and expiry, so the person's list shows one row for
// a connector however often it refreshes, and revoking that row ends the connector.
type Tokens interface {
	// Mint makes a row for g and returns its secret (the access token) and its id.
	Mint(g Grant) (secret, id string, err error)
	// Rotate gives row id a new secret, working until expires; the old secret stops
	// working. It returns ErrEnded (wrapped) when the row was revoked or is gone.
	Rotate(id string, expires time.Time) (secret string, err error)
	// Revoke ends row id; revoking one already revoked or gone is not an error.
	Revoke(id string) error
}

// ErrEnded is returned by Tokens.Rotate for a row that was revoked (tokens revoke) or is
// gone: the refresh is refused and its chain ends.
var ErrEnded = errors.New("the token row was revoked")

// Config is what New needs.
type Config struct {
	// Issuer is the server's public base URL, as clients reach it: https://compass.example.com
	// behind a reverse proxy, http://127.0.0.1:7410 locally. No path, query or fragment.
	Issuer string
	DB     kv.DB
	People People
	Tokens Tokens

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
	people                                     People
	tokens                                     Tokens
	codeTTL, accessTTL, refreshTTL, consentTTL time.Duration
	fetch                                      FetchOptions
	now                                        func() time.Time
	client                                     *http.Client // for client ID metadata documents
}

// New checks c and returns the authorization server it describes.
func New(c Config) (*Server, error) {
	u, err := url.Parse(c.Issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("the issuer is the server's public base URL, like https://compass.example.com (no path); got %q", c.Issuer)
	}
	if c.DB == nil || c.People == nil || c.Tokens == nil {
		return nil, errors.New("oauth.New needs a data file, People and Tokens")
	}
	s := &Server{
		issuer:     u.Scheme + "://" + strings.ToLower(u.Host),
		db:         c.DB,
		people:     c.People,
		tokens:     c.Tokens,
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
	if err := s.db.Update(createBuckets); err != nil {
		return nil, err
	}
	return s, nil
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
// protected resource's also path-qualified), /authorize, /consent, /token and /register.
func (s *Server) Register(mux *http.ServeMux) {
	mux.HandleFunc("/.well-known/oauth-protected-resource", s.resourceMetadata)
	mux.HandleFunc("/.well-known/oauth-protected-resource/", s.resourceMetadata)
	mux.HandleFunc("/.well-known/oauth-authorization-server", s.serverMetadata)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.Handle("POST /consent", http.NewCrossOriginProtection().Handler(http.HandlerFunc(s.consent)))
	mux.HandleFunc("/token", s.token)
	mux.HandleFunc("/register", s.register)
}

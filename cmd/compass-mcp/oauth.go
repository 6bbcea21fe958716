package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/oauth"
	"github.com/compass-mcp/compass-mcp/web"
)

// oauthFlags adds the flag that says where clients reach the server.
func oauthFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.publicURL, "public-url", env("COMPASS_PUBLIC_URL", ""), "if set, the server's public base URL as clients reach it, like https://compass.example.com behind a reverse proxy: OAuth's issuer and resources are made from it, and every request needs a token (default: http://<the --http address>) [COMPASS_PUBLIC_URL]")
}

// signIns is what the OAuth consent asks of the person's page: who is signed in on a
// browser, and the page that says how to sign in.
type signIns interface {
	SignedIn(r *http.Request) (person string, ok bool)
	AskSignIn(w http.ResponseWriter, r *http.Request)
}

// registerOAuth serves compass-mcp's OAuth 2.1 authorization server on mux (the metadata,
// /authorize, /consent, /token, /register) and tells the gate about it: every refusal then
// names the endpoint's resource metadata, and a token bound to one resource is refused at
// the others. The tokens it mints are the gate's token rows; the consent's sign-in is the
// person's page's (site; nil when the page is not served beside /mcp, and then nobody can
// sign in to allow an app).
func registerOAuth(mux *http.ServeMux, db kv.DB, c config, addr net.Addr, gate *access.Gate, site *web.Site) error {
	var page signIns = noSignIn{}
	if site != nil {
		page = site
	}
	issuer, err := publicURL(c.publicURL, addr)
	if err != nil {
		return err
	}
	store := gate.Store
	as, err := oauth.New(oauth.Config{
		Issuer: issuer,
		DB:     db,
		People: oauthPeople{page: page, store: store},
		Tokens: oauthTokens{store: store},
	})
	if err != nil {
		return err
	}
	as.Register(mux)
	gate.OAuth = as
	gate.Closed = gate.Closed || c.publicURL != ""
	return nil
}

// publicURL is --public-url checked, or the address served on.
func publicURL(given string, addr net.Addr) (string, error) {
	if given == "" {
		return "http://" + addr.String(), nil
	}
	u, err := url.Parse(given)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
		return "", usageError{fmt.Sprintf("--public-url is the server's base URL as clients reach it, like https://compass.example.com (no path); got %q", given)}
	}
	return strings.TrimRight(given, "/"), nil
}

// noSignIn is the consent's sign-in when the person's page is not served beside /mcp.
type noSignIn struct{}

func (noSignIn) SignedIn(*http.Request) (string, bool) { return "", false }

func (noSignIn) AskSignIn(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "Allowing an app needs you signed in to the person's page, which this server does not serve beside /mcp (--web). Serve it there (the default) to connect apps with OAuth.", http.StatusServiceUnavailable)
}

// oauthPeople is the consent's view of people: the page's sign-in, the gate's members.
type oauthPeople struct {
	page  signIns
	store *access.Store
}

func (p oauthPeople) SignedIn(r *http.Request) (string, bool)          { return p.page.SignedIn(r) }
func (p oauthPeople) AskSignIn(w http.ResponseWriter, r *http.Request) { p.page.AskSignIn(w, r) }
func (p oauthPeople) Spaces(person string) ([]string, error)           { return p.store.SpacesOf(person) }

// oauthTokens mints OAuth's access tokens as token rows.
type oauthTokens struct{ store *access.Store }

func (t oauthTokens) Mint(g oauth.Grant) (string, string, error) {
	secret, row, err := t.store.AddToken(access.NewToken{Person: g.Person, Agent: g.Agent, Spaces: g.Spaces,
		ReadOnly: g.ReadOnly, Expires: g.Expires, Client: g.Client, Resource: g.Resource})
	return secret, row.ID, err
}

func (t oauthTokens) Rotate(id string, expires time.Time) (string, error) {
	secret, err := t.store.Rotate(id, expires)
	if errors.Is(err, access.ErrRevokedToken) || errors.Is(err, access.ErrNoToken) {
		return "", fmt.Errorf("%w: %v", oauth.ErrEnded, err)
	}
	return secret, err
}

func (t oauthTokens) Revoke(id string) error {
	if _, err := t.store.Revoke(id); err != nil && !errors.Is(err, access.ErrNoToken) {
		return err
	}
	return nil
}

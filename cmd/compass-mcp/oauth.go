package main

import (
	"flag"
	"net"
	"net/http"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/oauth"
	"github.com/compass-mcp/compass-mcp/web"
)

// oauthFlags adds the flag that says where clients reach the server.
func oauthFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.publicURL, "public-url", env("COMPASS_PUBLIC_URL", ""), "if set, the server's public base URL as clients reach it, like https://compass.example.com behind a reverse proxy: OAuth's issuer and resources are made from it, and every request needs a token (default: http://<the --http address>) [COMPASS_PUBLIC_URL]")
}

// registerOAuth serves compass-mcp's OAuth 2.1 authorization server on mux (the metadata,
// /authorize, /consent, /token, /register) and tells the gate about it: every refusal then
// names the endpoint's resource metadata, and a token bound to one resource is refused at
// the others. The tokens it mints are the gate's token rows; the consent's sign-in is the
// person's page's (site; nil when the page is not served beside /mcp, and then nobody can
// sign in to allow an app).
func registerOAuth(mux *http.ServeMux, db kv.DB, c config, addr net.Addr, gate *access.Gate, site *web.Site) error {
	issuer := "http://" + addr.String()
	if c.publicURL != "" {
		issuer = c.publicURL // oauth.New checks it
	}
	oc := oauth.Config{Issuer: issuer, DB: db, Access: gate.Store}
	if site != nil { // a nil *web.Site in the interface would not be a nil Page
		oc.Page = site
	}
	as, err := oauth.New(oc)
	if err != nil && c.publicURL != "" {
		return usageError{"--public-url: " + err.Error()}
	} else if err != nil {
		return err
	}
	as.Register(mux)
	gate.OAuth = as
	gate.Closed = gate.Closed || c.publicURL != ""
	return nil
}

package transport

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/access/oauth"
	"github.com/compass-mcp/compass-mcp/filesync"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/web"
	"github.com/mark3labs/mcp-go/server"
)

// Server is everything compass-mcp serve --http serves on one address: MCP at /mcp (the
// configured space) and /spaces/{space}/mcp (any the request's token allows and its
// person is a member of), behind access's gate; OAuth 2.1's authorization server; the chat
// messages endpoint (web.MountMessages); the sync's endpoint (filesync.Mount); and the
// person's page on the other paths, when it is served on this address.
type Server struct {
	MCP               *server.MCPServer
	DB                kv.DB
	Data              string        // the data's name, for the log (the store's Path)
	Space, For, Agent string        // the configured space and person (--space, --for), and --agent
	Token             string        // a bearer token every request may carry (--token); "" for only the token rows'
	PublicURL         string        // where clients reach the server (--public-url); "" for http://<the address>
	Idle              time.Duration // how long a session may go unused before it ends (0: never)
	Page              *web.Site     // the page, when it is served on this address beside /mcp; else nil
	PageAt            string        // where a browser opening /mcp is sent: "" when no page is served
	Links             *web.Links    // the tools' link base, told where the page is when it is served here
	Review            bool          // --review: every principal's changes are proposals, and the start line says so
}

// PublicURLError is returned by Server.Serve when the authorization server refuses
// PublicURL as its issuer: the command line's usage error (--public-url).
type PublicURLError struct{ Err error }

func (e *PublicURLError) Error() string { return "--public-url: " + e.Err.Error() }
func (e *PublicURLError) Unwrap() error { return e.Err }

// Serve serves on ln until ctx ends (HTTP.Serve), closing ln if it cannot start.
func (s Server) Serve(ctx context.Context, ln net.Listener) error {
	h, _, withdraw, err := s.handler(ctx, ln)
	if err != nil {
		ln.Close()
		return err
	}
	defer withdraw()
	attrs := []any{"url", "http://" + ln.Addr().String() + "/mcp", "space", s.Space, "for", "person:" + s.For, "data", s.Data}
	if s.Review {
		attrs = append(attrs, "review", "on: every change an agent makes is a proposal for the person")
	}
	slog.Info("serving MCP over streamable HTTP", attrs...)
	return h.Serve(ctx, ln)
}

// handler makes what Serve serves on ln: the HTTP server with its handler set, the
// patterns of the routes it has (the page's own are Page.Routes, under "/"), and the func
// that withdraws the page's record once the server has stopped.
func (s Server) handler(ctx context.Context, ln net.Listener) (*HTTP, []string, func(), error) {
	h := NewHTTP(s.MCP, access.NewSessions(s.DB, s.Idle), s.Idle, AllowedHosts(s.PublicURL)...)
	mux := &access.Routes{Mux: http.NewServeMux()}
	// The gate is for the other routes that must know who asks, too.
	gate := &access.Gate{Store: access.New(s.DB).WithOwner(s.Space, s.For), Static: s.Token, Agent: s.Agent, Review: s.Review,
		Hosts: AllowedHosts(s.PublicURL)}
	Route(mux, gate, s.Space, h.MCP)
	if err := s.registerOAuth(ctx, mux, ln.Addr(), gate); err != nil { // before the gate is copied
		return nil, nil, nil, err
	}
	mux.HandleFunc("GET /healthz", health)
	web.MountMessages(mux, s.DB, gate, Guard)
	filesync.Mount(mux, s.DB, gate, Guard)
	withdraw := s.mountPage(ctx, mux, h.Server, ln)
	// Every request names a Host the server answers to, whatever it carries (DNS
	// rebinding, access.ForeignHost): the page, OAuth and the icons as much as the doors.
	h.Server.Handler = access.KnownHosts(gate.Hosts, ToPage(s.PageAt, mux.Mux))
	return h, mux.Patterns, withdraw, nil
}

// registerOAuth serves compass-mcp's OAuth 2.1 authorization server on mux (the metadata,
// /authorize, /consent, /token, /register) and tells the gate about it: every refusal then
// names the endpoint's resource metadata, and a token bound to one resource is refused at
// the others. The tokens it mints are the gate's token rows; the consent's sign-in is the
// person's page's (nil when the page is not served beside /mcp, and then nobody can sign
// in to allow an app). A PublicURL makes every request need a token.
func (s Server) registerOAuth(ctx context.Context, mux access.Mux, addr net.Addr, gate *access.Gate) error {
	issuer := "http://" + addr.String()
	if s.PublicURL != "" {
		issuer = s.PublicURL // oauth.New checks it
	}
	oc := oauth.Config{Issuer: issuer, DB: s.DB, Access: gate.Store}
	if s.Page != nil { // a nil *web.Site in the interface would not be a nil Page
		oc.Page = s.Page
	}
	as, err := oauth.New(ctx, oc)
	if err != nil && s.PublicURL != "" {
		return &PublicURLError{err}
	} else if err != nil {
		return err
	}
	as.Register(mux)
	gate.OAuth = as
	gate.Closed = gate.Closed || s.PublicURL != ""
	return nil
}

// mountPage serves the page (if it is served beside /mcp) on the HTTP server's other
// paths, and makes the server's address the link base; the func it returns withdraws the
// page's record, once the server has stopped.
func (s Server) mountPage(ctx context.Context, mux access.Mux, hs *http.Server, ln net.Listener) (withdraw func()) {
	if s.Page == nil {
		return func() {}
	}
	url := web.URLOf(ln.Addr())
	if s.PublicURL != "" {
		url = strings.TrimRight(s.PublicURL, "/") // behind a proxy: links and sign-in links go there
	}
	if s.Links != nil {
		s.Links.Serving(url)
	}
	return s.Page.Mount(ctx, mux, hs, s.DB, url)
}

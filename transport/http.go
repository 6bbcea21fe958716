package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/mark3labs/mcp-go/server"
)

// HTTP is one MCP server served over streamable HTTP: mcp-go's transport, its sessions the
// store's (Sessions), on an http.Server hardened against slow and idle clients (Harden).
type HTTP struct {
	// Server is what Serve serves on. Its Handler is the caller's to set: a mux with MCP
	// on it behind the gate and Guard (Route), and whatever else the server answers.
	Server *http.Server
	// MCP is the handler of the MCP endpoints: Sessions.Check, then mcp-go.
	MCP http.Handler
	mcp *server.StreamableHTTPServer
}

// NewHTTP serves srv over streamable HTTP, its sessions kept in sessions; a session unused
// for idle is also forgotten by this process (0: never). allowedHosts are the Host names
// clients use beside loopback (the --public-url's, AllowedHosts): given any, a request
// naming another Host is refused on every listener, not only on loopback (DNS rebinding).
func NewHTTP(srv *server.MCPServer, sessions *access.Sessions, idle time.Duration, allowedHosts ...string) *HTTP {
	hs := &http.Server{}
	Harden(hs)
	s := NewSessions(sessions)
	mcpHTTP := server.NewStreamableHTTPServer(srv,
		server.WithEndpointPath("/mcp"),
		server.WithSessionIdManagerResolver(s),
		server.WithHTTPContextFunc(ClientName),
		server.WithStreamableHTTPLogger(tools.Quieter(slog.Default())),
		server.WithSessionIdleTTL(idle),
		server.WithAllowedHosts(allowedHosts...),
		// Its Shutdown closes the sessions first, which ends the GET streams clients hold
		// open; http.Server's alone would wait for them until its deadline.
		server.WithStreamableHTTPServer(hs),
	)
	return &HTTP{Server: hs, MCP: s.Check(Direct(mcpHTTP, allowedHosts...)), mcp: mcpHTTP}
}

// Serve serves on ln until ctx ends, then shuts down: the calls in flight get 10 s to
// finish, and are cut short after. It returns the server's error if it stopped by itself.
func (h *HTTP) Serve(ctx context.Context, ln net.Listener) error {
	done := make(chan error, 1)
	go func() { done <- h.Server.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	slog.Info("shutting down: finishing calls in flight")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.mcp.Shutdown(sctx); err != nil {
		slog.Warn("calls still running after 10 s were cut short", "err", err)
		h.Server.Close()
	}
	return nil
}

// Route serves mcp on mux at /mcp, in space, and at /spaces/{space}/mcp, in the space the
// path names, each a door of the gate (access.Gate.Door): who is asking first, so that a
// request without a good token is refused before its body is read, then Guard, then the
// gate's check that the asker may see the space.
func Route(mux access.Mux, gate *access.Gate, space string, mcp http.Handler) {
	configured := func(*http.Request) string { return space }
	mux.Handle("/mcp", gate.Door(configured, Guard, mcp))
	mux.Handle("/spaces/{space}/mcp", gate.Door(access.PathSpace, Guard, mcp))
}

// ToPage sends a browser that opens an MCP endpoint (/mcp, /spaces/{space}/mcp) to the page
// at pageAt, or says what the endpoint is when no page is served: an MCP endpoint would
// otherwise keep it waiting on an event stream, or refuse it for want of a token.
func ToPage(pageAt string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept := r.Header.Get("Accept")
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/mcp") && strings.Contains(accept, "text/html") && !strings.Contains(accept, "text/event-stream") {
			if pageAt != "" {
				http.Redirect(w, r, pageAt, http.StatusSeeOther)
				return
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintln(w, "This is compass-mcp's MCP endpoint: an MCP client (Claude, an editor) talks to it, not a browser. The person's page is off here (--web off).")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Guard refuses what mcp-go lets through: a browser page of another origin (mcp-go checks
// Host, not Origin) and bodies over MaxBody, and answers a tools/call holding a text
// longer than any may be with the tools' refusal (see oversized). A panic below it is
// logged and answered 500, not a dropped connection. Who may ask is not its business: it
// sits behind access.Gate.
func Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				slog.Error("HTTP handler panicked", "panic", p, "stack", string(debug.Stack()))
				http.Error(w, "Internal error (logged on the server)", http.StatusInternalServerError)
			}
		}()
		if fromAnotherOrigin(r) {
			refuse(w, "Forbidden: this server accepts requests from its own origin only", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodPost {
			// A GET stream lasts: the read deadline is for request bodies.
			_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		} else if r.Body != nil {
			body, release, ok := readBody(w, r)
			if !ok {
				return
			}
			defer release()
			if id, arg, n, found := oversized(body); found {
				refuseOversized(w, id, arg, n)
				return
			}
			r = withBody(r, body)
		}
		next.ServeHTTP(w, r)
	})
}

// crossOrigin is the standard library's rule for requests from another origin.
var crossOrigin = http.NewCrossOriginProtection()

// fromAnotherOrigin reports whether r comes from a browser page of another origin, by
// http.CrossOriginProtection's rule: Sec-Fetch-Site when the browser sends it, else the
// Origin's host and port against Host (the scheme may differ, behind a proxy that speaks
// TLS); another page on this machine (http://localhost:9999, http://127.0.0.2) is another
// origin. That rule lets GET, HEAD and OPTIONS by, as safe for a form to send; here they
// are asked too: a GET of /mcp opens an event stream that lasts, and the MCP transport
// asks servers to check the origin of every connection.
func fromAnotherOrigin(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		asked := r.WithContext(r.Context()) // a shallow copy, to be asked as a POST
		asked.Method = http.MethodPost
		r = asked
	}
	return crossOrigin.Check(r) != nil
}

// AllowedHosts is the Host a client sends to reach publicURL (--public-url), for NewHTTP:
// behind a proxy that passes the client's Host on, a server answers to its public name.
// None for no publicURL or one that doesn't parse (oauth.New refuses those at start).
func AllowedHosts(publicURL string) []string {
	u, err := url.Parse(publicURL)
	if publicURL == "" || err != nil || u.Host == "" {
		return nil
	}
	return []string{u.Host}
}

// ErrUnguarded is returned by BindAddress for an address beyond loopback on a server that
// asks for no token: anyone who could reach it could read and change the documents.
var ErrUnguarded = errors.New("serving beyond loopback needs a token")

// BindAddress is where to listen for addr, HOST:PORT or :PORT: loopback unless it names a
// host (":7410" is 127.0.0.1:7410). Beyond loopback it needs guarded (the server asks for
// a token), else it returns the address with ErrUnguarded. A malformed addr is
// net.SplitHostPort's error.
func BindAddress(addr string, guarded bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if host == "" {
		host = "127.0.0.1"
	}
	bind := net.JoinHostPort(host, port)
	if !IsLoopback(host) && !guarded {
		return bind, ErrUnguarded
	}
	return bind, nil
}

// IsLoopback reports whether host (a name or an IP literal, without a port) is this
// machine's loopback: localhost, 127.0.0.0/8, ::1.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

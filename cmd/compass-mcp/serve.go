package main

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/mark3labs/mcp-go/server"
)

// maxBody is the largest HTTP request accepted: room for a text at docstore.MaxText even
// when JSON escaping makes it several times larger, so that the tool (not the transport)
// says what the limit is.
const maxBody = 64 << 20

func serve(args []string) error {
	var c config
	fs := flags("serve", &c)
	serverFlags(fs, &c)
	fs.StringVar(&c.http, "http", env("COMPASS_HTTP", ""), "if set, serve streamable HTTP on this address (endpoint /mcp) instead of stdio; a bare :PORT binds loopback [COMPASS_HTTP]")
	idle := fs.Duration("session-idle", sessionIdle, "HTTP: how long a session may go unused before it is forgotten")
	followCC := fs.Bool("follow-claude-code", envBool("COMPASS_FOLLOW_CLAUDE_CODE"), "if set, import Claude Code's sessions (~/.claude/projects) as they happen, while serving [COMPASS_FOLLOW_CLAUDE_CODE]")
	token := fs.String("token", env("COMPASS_TOKEN", ""), "if set, every HTTP request needs the header Authorization: Bearer <token>; required to serve beyond loopback [COMPASS_TOKEN]")
	oauthFlags(fs, &c)
	webFlag(fs, &c)
	if rest, err := parse(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		return usageError{fmt.Sprintf("serve takes no arguments, got %q", rest)}
	}
	var addr string
	if c.http != "" {
		var err error
		if addr, err = bindAddress(c.http, *token != "" || hasTokenRows(c) || c.publicURL != ""); err != nil {
			return err
		}
	}
	db, srv, err := c.mcpServer()
	if err != nil {
		return err
	}
	defer db.Close()
	tuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *followCC {
		defer followClaudeCode(ctx, db, c)()
	}
	if err := c.servePage(ctx, db, addr, *token); err != nil {
		return err
	}
	if c.http != "" {
		return serveHTTP(ctx, srv, db, c, addr, *token, *idle)
	}
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		fmt.Fprintf(os.Stderr, "compass-mcp: serving MCP over stdio (space %s, for person:%s, data %s). An MCP client starts this command and talks on stdin/stdout; see the README for Claude Desktop, or use --http 127.0.0.1:7410. Ctrl-C stops.\n", c.space, c.me, db.Path())
	}
	return serveStdio(ctx, srv, os.Stdin, os.Stdout, 10*time.Second)
}

// sessionIdle is how long an HTTP session may go unused before it is forgotten (unless
// --session-idle says), so that a flood of sessions cannot grow the server without end.
const sessionIdle = 30 * time.Minute

func serveHTTP(ctx context.Context, srv *server.MCPServer, db store, c config, addr, token string, idle time.Duration) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	hs := &http.Server{}
	harden(hs)
	known := newSessions()
	mcpHTTP := server.NewStreamableHTTPServer(srv,
		server.WithEndpointPath("/mcp"),
		server.WithSessionIdManager(known),
		server.WithStreamableHTTPLogger(tools.Quieter(slog.Default())),
		server.WithSessionIdleTTL(idle),
		// Its Shutdown closes the sessions first, which ends the GET streams clients hold
		// open; http.Server's alone would wait for them until its deadline.
		server.WithStreamableHTTPServer(hs),
	)
	mux := http.NewServeMux()
	gate := registerTeam(mux, db, c, token, known.check(direct(mcpHTTP)))
	if err := registerOAuth(mux, db, c, ln.Addr(), gate, c.samePage); err != nil { // before the gate is copied
		ln.Close()
		return err
	}
	registerMessages(mux, db, gate)
	mountPage(mux, hs, c, ln)
	hs.Handler = toPage(c.pageAt, mux)
	slog.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "space", c.space, "for", "person:"+c.me, "data", db.Path())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	slog.Info("shutting down: finishing calls in flight")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := mcpHTTP.Shutdown(sctx); err != nil {
		slog.Warn("calls still running after 10 s were cut short", "err", err)
		hs.Close()
	}
	return nil
}

// bindAddress binds loopback unless the address names a host: ":7410" is 127.0.0.1:7410.
// Anything but loopback without a token (guarded: --token, or any token row) is refused:
// anyone who could reach it could read and change the space's documents.
func bindAddress(addr string, guarded bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", usageError{fmt.Sprintf("--http takes HOST:PORT or :PORT, like 127.0.0.1:7410; got %q", addr)}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !isLoopback(host) && !guarded {
		return "", usageError{fmt.Sprintf("refusing to serve on %s without --token (or COMPASS_TOKEN) or a token made with compass-mcp tokens add: anyone who can reach that address could read and change the space's documents. Set a token, or bind 127.0.0.1.", net.JoinHostPort(host, port))}
	}
	return net.JoinHostPort(host, port), nil
}

// guard refuses what mcp-go lets through: a request without the token (when there is
// one), a browser page of another origin (mcp-go checks Host, not Origin), and bodies
// over maxBody. A panic below it is logged and answered 500, not a dropped connection.
func guard(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
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
		if token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="compass-mcp"`)
			refuse(w, "Unauthorized: send Authorization: Bearer <token>, the token this server was started with", http.StatusUnauthorized)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r.Host) {
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

// sameOrigin reports whether origin is the server's own: the same host and port as the
// request's Host (the scheme may differ, behind a proxy that speaks TLS). Another page on
// this machine (http://localhost:9999, http://127.0.0.2) is another origin.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
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
	if rest, err := parse(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		return usageError{fmt.Sprintf("serve takes no arguments, got %q", rest)}
	}
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	srv, err := tools.New(db, c.tools())
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if c.http != "" {
		return serveHTTP(ctx, srv, c)
	}
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		fmt.Fprintf(os.Stderr, "compass-mcp: serving MCP over stdio (space %s, data %s). An MCP client starts this command and talks on stdin/stdout; see the README for Claude Desktop, or use --http 127.0.0.1:7410. Ctrl-C stops.\n", c.space, c.data)
	}
	err = server.NewStdioServer(srv).Listen(ctx, os.Stdin, os.Stdout)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func serveHTTP(ctx context.Context, srv *server.MCPServer, c config) error {
	addr, err := bindAddress(c.http)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", guard(server.NewStreamableHTTPServer(srv, server.WithEndpointPath("/mcp"), server.WithStreamableHTTPLogger(slog.Default()))))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	slog.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "space", c.space, "data", c.data)
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
	return hs.Shutdown(sctx)
}

// bindAddress binds loopback unless the address names a host: ":7410" is 127.0.0.1:7410.
func bindAddress(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", usageError{fmt.Sprintf("--http takes HOST:PORT or :PORT, like 127.0.0.1:7410; got %q", addr)}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" {
		slog.Warn("serving beyond this machine: anyone who can reach this address can read and change the space's documents", "address", host)
	}
	return net.JoinHostPort(host, port), nil
}

// guard refuses what mcp-go lets through: a browser page of another origin (mcp-go checks
// Host, not Origin), and bodies over maxBody.
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r.Host) {
			http.Error(w, "Forbidden: this server accepts requests from its own origin only", http.StatusForbidden)
			return
		}
		if r.ContentLength > maxBody {
			http.Error(w, fmt.Sprintf("Request body too large: at most %d MiB", maxBody>>20), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether origin is the server's own (same host and port as the
// request's Host), or a loopback page talking to a loopback server.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if u.Host == host {
		return true
	}
	return isLoopback(u.Hostname()) && isLoopback(hostOnly(host))
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

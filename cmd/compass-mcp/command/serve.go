package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/transport"
	"github.com/mark3labs/mcp-go/server"
)

var serveHelp = subcommand{name: "serve", args: "[--http ADDR] [flags]",
	does: "serve MCP over stdio (also with no command), or streamable HTTP at ADDR/mcp (and ADDR/spaces/{space}/mcp)"}

func serve(ctx context.Context, args []string) error {
	var c config
	fs := flags(serveHelp, &c)
	serverFlags(fs, &c)
	fs.StringVar(&c.http, "http", env("COMPASS_HTTP", ""), "if set, serve streamable HTTP on this address (endpoint /mcp) instead of stdio; a bare :PORT binds loopback [COMPASS_HTTP]")
	idle := fs.Duration("session-idle", sessionIdle, "HTTP: how long a session may go unused, on every server of the store, before it ends (0: never)")
	followCC := fs.Bool("follow-claude-code", envBool("COMPASS_FOLLOW_CLAUDE_CODE"), "if set, import Claude Code's sessions (~/.claude/projects) as they happen, while serving [COMPASS_FOLLOW_CLAUDE_CODE]")
	token := new(string)
	secretFlag(fs, token, "token", "COMPASS_TOKEN", nil, "if set, the `token` every HTTP request needs (the header Authorization: Bearer <token>); required to serve beyond loopback [COMPASS_TOKEN]")
	oauthFlags(fs, &c)
	webFlag(fs, &c)
	if rest, err := parse(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		if isCommand(rest[0]) && rest[0] != "serve" {
			return usageError{fmt.Sprintf("%s is a command, and only --data, --space and --for may come before a command: put the other flags after it (compass-mcp %s ... --flag)", rest[0], rest[0])}
		}
		return usageError{fmt.Sprintf("serve takes no arguments, got %q", rest)}
	}
	c.create, c.serving = true, true
	db, srv, err := c.mcpServer(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	if c.stopMeaning != nil {
		defer c.stopMeaning() // before the data is closed
	}
	var addr string
	if c.http != "" {
		if addr, err = bindAddress(c.http, access.New(db).Guarded(ctx, *token) || c.publicURL != ""); err != nil {
			return err
		}
	}
	transport.TuneGC()
	transport.SetLimits(transport.Limits{Text: docstore.MaxText})
	defer func() { // after stop: the page withdraws its record before the data is closed
		if c.pageDone != nil {
			<-c.pageDone
		}
	}()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *followCC {
		defer followClaudeCode(ctx, db, c)()
	}
	fi, err := os.Stdin.Stat()
	c.terminal = c.http == "" && err == nil && fi.Mode()&os.ModeCharDevice != 0
	if err := c.servePage(ctx, db, addr, *token); err != nil {
		return err
	}
	if c.http != "" {
		return serveHTTP(ctx, srv, db, c, addr, *token, *idle)
	}
	if c.terminal {
		fmt.Fprintln(os.Stderr, terminalLine(c.space, c.me, db.Path(), c.pageAt, c.review))
	}
	return transport.ServeStdio(ctx, srv, os.Stdin, os.Stdout, 10*time.Second)
}

// terminalLine is what serve says, on one line, to a person who started it on a terminal
// (README, "The two commands"): what it serves, for whom and where, and the next step.
// The page's own log line is left out there (siteConfig): this line names the page.
func terminalLine(space, me, data, page string, review bool) string {
	at := ""
	if page != "" {
		at = ", your page " + strings.TrimSuffix(page, "/")
	}
	if review {
		at += ", review mode: every change an agent makes is a proposal for you"
	}
	return fmt.Sprintf("compass-mcp: serving MCP over stdio (space %s, for person:%s, data %s%s). An MCP client starts this command itself: to set one up, run compass-mcp install CLIENT (compass-mcp install lists them). Ctrl-C stops.", space, me, data, at)
}

// sessionIdle is how long an HTTP session may go unused before it ends (unless
// --session-idle says), so that a flood of sessions cannot grow the store, or a server's
// memory, without end.
const sessionIdle = 30 * time.Minute

// serveHTTP listens on addr and serves there all --http serves (transport.Server) until ctx ends.
func serveHTTP(ctx context.Context, srv *server.MCPServer, db store, c config, addr, token string, idle time.Duration) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	s := transport.Server{MCP: srv, DB: db, Data: db.Path(), Space: c.space, For: c.me, Agent: c.agent, Token: token,
		PublicURL: c.publicURL, Idle: idle, Page: c.samePage, PageAt: c.pageAt, Links: c.links, Review: c.review}
	return s.Serve(ctx, ln)
}

// bindAddress is where --http (or --web) says to listen: loopback unless the address names
// a host, ":7410" is 127.0.0.1:7410. Anything but loopback without a token (guarded:
// --token, or any token row) is refused: anyone who could reach it could read and change
// the space's documents.
func bindAddress(addr string, guarded bool) (string, error) {
	bind, err := transport.BindAddress(addr, guarded)
	switch {
	case errors.Is(err, transport.ErrUnguarded):
		return "", usageError{fmt.Sprintf("refusing to serve on %s without --token (or COMPASS_TOKEN) or a token made with compass-mcp tokens add: anyone who can reach that address could read and change the space's documents. Set a token, or bind 127.0.0.1.", bind)}
	case err != nil:
		return "", usageError{fmt.Sprintf("--http takes HOST:PORT or :PORT, like 127.0.0.1:7410; got %q", addr)}
	}
	return bind, nil
}

// oauthFlags adds the flag that says where clients reach the server.
func oauthFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.publicURL, "public-url", env("COMPASS_PUBLIC_URL", ""), "if set, the server's public base URL as clients reach it, like https://compass.example.com behind a reverse proxy: OAuth's issuer and resources are made from it, and every request needs a token (default: http://<the --http address>) [COMPASS_PUBLIC_URL]")
}

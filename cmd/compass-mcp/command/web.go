package command

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/compass-mcp/compass-mcp/transport"
	"github.com/compass-mcp/compass-mcp/web"
)

// defaultWeb is where the person's page is served beside stdio unless --web says.
const defaultWeb = "127.0.0.1:7411"

func webFlag(fs interface {
	StringVar(*string, string, string, string)
}, c *config) {
	fs.StringVar(&c.web, "web", env("COMPASS_WEB", ""), "if set, where the person's page is served: HOST:PORT, or off (default: 127.0.0.1:7411 beside stdio; the --http address when serving HTTP) [COMPASS_WEB]")
}

// siteConfig is the page of the data file's spaces, c's first; who may see which is the
// access room's answer (each space's members, --for always among c's space's).
func (c *config) siteConfig(db store) web.Config {
	log := slog.Default()
	if c.terminal {
		log = slog.New(warnings{log.Handler()}) // the terminal's one line names the page
	}
	return web.Config{Space: c.space, Me: c.me, Path: db.Path(), Logger: log, Review: c.review,
		Access: access.New(db).WithOwner(c.space, c.me), Secure: c.pageSecure, Hosts: transport.AllowedHosts(c.publicURL), Semantic: c.meaning}
}

// warnings is a log handler that passes on only warnings and errors.
type warnings struct{ slog.Handler }

func (w warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

func (w warnings) WithAttrs(as []slog.Attr) slog.Handler { return warnings{w.Handler.WithAttrs(as)} }
func (w warnings) WithGroup(name string) slog.Handler    { return warnings{w.Handler.WithGroup(name)} }

// webAddress checks --web: HOST:PORT (a bare :PORT is loopback), beyond loopback only when
// guarded (tokens), by the same rule as --http.
func webAddress(addr string, guarded bool) (string, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", usageError{fmt.Sprintf("--web takes HOST:PORT, :PORT or off, like 127.0.0.1:7411; got %q", addr)}
	}
	return bindAddress(addr, guarded)
}

// startPage serves the page on its own address, in the background until ctx ends, with
// --http's timeouts; with busyOK, a busy address is no failure (web.Listen): then it may
// return no page.
func startPage(ctx context.Context, c *config, db store, addr string, busyOK bool) (*web.Page, error) {
	hs := &http.Server{}
	transport.Harden(hs) // a connection idle or slow to send its request is closed, as on --http
	return web.Start(ctx, db, addr, busyOK, c.siteConfig(db), hs)
}

var (
	webHelp  = subcommand{name: "web", args: "[--web ADDR]", does: "serve only the person's page (default 127.0.0.1:7411), and print a sign-in link"}
	openHelp = subcommand{name: "open", args: "[DOC] [--serve]",
		does: "a one-time sign-in link to the page (to DOC: a title, id or link), for --for;\n--serve serves the page here when no process serves it"}
)

// webCmd serves only the page, in the foreground.
func webCmd(ctx context.Context, args []string) error {
	var c config
	fs := flags(webHelp, &c)
	webFlag(fs, &c)
	memoryFlag(fs, &c)
	token := new(string)
	secretFlag(fs, token, "token", "COMPASS_TOKEN", nil, "if set, the `token` every request needs; required to serve beyond loopback [COMPASS_TOKEN]")
	browser := fs.Bool("browser", true, "if set, open the browser on a sign-in link")
	if rest, err := parse(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		return usageError{fmt.Sprintf("web takes no arguments, got %q", rest)}
	}
	return servePageOnly(ctx, c, *token, "", *browser, false)
}

// openCmd prints a one-time sign-in link to the page (to DOC, when given) for --for, and
// opens the browser on it where it can. With no page served for the data file, it fails,
// unless --serve asks it to serve one itself, in the foreground.
func openCmd(ctx context.Context, args []string) error {
	var c config
	fs := flags(openHelp, &c)
	webFlag(fs, &c)
	token := new(string)
	secretFlag(fs, token, "token", "COMPASS_TOKEN", nil, "if set, the `token` every request needs; required to serve beyond loopback [COMPASS_TOKEN]")
	browser := fs.Bool("browser", true, "if set, open the browser on the link")
	here := fs.Bool("serve", false, "if set, and no page is served for the data, serve one here, in the foreground, until interrupted")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageError{fmt.Sprintf("open takes at most one document (title, id or link), got %q", pos)}
	}
	c.create = true // a sign-in code is written
	db, err := c.openAs(ctx)
	if err != nil {
		return err
	}
	next, err := web.PathOf(ctx, db, c.space, strings.Join(pos, ""))
	if err != nil {
		db.Close()
		return err
	}
	url, ok := web.Served(ctx, db, db.Path())
	db.Close()
	switch {
	case !ok && !*here:
		return fmt.Errorf("no page is served for this data (%s) now: open --serve serves one here until Ctrl-C, compass-mcp web serves only the page, and a server (compass-mcp serve) serves it beside MCP", c.data)
	case !ok:
		fmt.Fprintln(os.Stderr, "No page is served for this data yet: serving it here (Ctrl-C stops).")
		return servePageOnly(ctx, c, *token, next, *browser, true)
	}
	return signInLink(ctx, c, url, next, *browser)
}

func signInLink(ctx context.Context, c config, url, next string, browser bool) error {
	db, err := c.open(ctx)
	if err != nil {
		return err
	}
	link, err := web.SignInLink(ctx, db, url, c.me, c.space, next)
	db.Close()
	if err != nil {
		return err
	}
	fmt.Println(link)
	if browser {
		web.OpenBrowser(link)
	}
	return nil
}

// agentSignIn makes the one-time sign-in links the agent may hand the person
// (list_documents sign_in), for --for only, in --space, where web.AgentSignIn says it may:
// a one-person server whose page is on this machine.
func (c *config) agentSignIn(db kv.DB) func(ctx context.Context, next string) (string, error) {
	return func(ctx context.Context, next string) (string, error) {
		link, ok, err := web.AgentSignIn(ctx, db, c.links.Base(), c.me, c.space, next, slog.Default())
		if err == nil && !ok {
			return "", tools.ErrNoSignIn // no page, one reached from elsewhere (--link-base), or a team's
		}
		return link, err
	}
}

// servePageOnly serves the page in the foreground and prints a sign-in link to it; with
// anyPort, a busy address moves it to a free port.
func servePageOnly(ctx context.Context, c config, token, next string, browser, anyPort bool) error {
	if c.web == "" || c.web == "off" {
		c.web = defaultWeb
	}
	c.create = true
	db, err := c.openAs(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	transport.TuneGC() // a server, as serve is: rendering copies each page several times
	addr, err := webAddress(c.web, access.New(db).Guarded(ctx, token))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	p, err := startPage(ctx, &c, db, addr, anyPort)
	if err != nil {
		return err
	}
	if p == nil {
		return fmt.Errorf("the page could not be served: %s is taken, and no other port could be had", addr)
	}
	fmt.Fprintln(os.Stderr, "Sign in with this link (it works once, for 15 minutes):")
	if err := signInLink(ctx, c, p.URL, next, browser); err != nil {
		stop()
		<-p.Done
		return err
	}
	return <-p.Done
}

// servePage starts the person's page as --web says, before the MCP server serves: on its
// own address (beside stdio, or beside HTTP when --web names another address), or, when
// serving HTTP on the same address as /mcp, as c.samePage for serveHTTP to mount.
func (c *config) servePage(ctx context.Context, db store, httpAddr, token string) error {
	if c.web == "off" {
		return nil
	}
	want := c.web
	if want == "" {
		want = defaultWeb
		if c.http != "" {
			want = httpAddr
		}
	}
	addr, err := webAddress(want, access.New(db).Guarded(ctx, token))
	if err != nil {
		return err
	}
	if c.http != "" && addr == httpAddr {
		// Beside /mcp, the page is reached at --public-url (mountPage): behind https there,
		// its session cookie is Secure though the proxy speaks plain HTTP to it.
		c.pageSecure = strings.HasPrefix(strings.ToLower(c.publicURL), "https://")
		site, err := web.New(ctx, db, c.siteConfig(db))
		if err != nil {
			return err
		}
		c.samePage, c.pageAt = site, "/"
		return nil
	}
	p, err := startPage(ctx, c, db, addr, c.http == "")
	if err != nil || p == nil {
		return err
	}
	c.pageDone = p.Done
	c.links.Serving(p.URL)
	c.pageAt = p.URL + "/"
	return nil
}

package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv/stores"
	"github.com/compass-mcp/compass-mcp/semantic"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads/claudecode"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/compass-mcp/compass-mcp/transport"
	"github.com/compass-mcp/compass-mcp/web"
	"github.com/mark3labs/mcp-go/server"
)

// store is the data a command works on, whichever backend --data chose (kv/stores).
type store = stores.Store

// errSilent ends a command that has already said why on stderr or stdout.
var errSilent = errors.New("")

// usageError is a command line that can't be run as given (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// exitCode is 0 for -h (help asked for is not a failure), 2 for a usage error (a --data
// that is neither a file nor a PostgreSQL URL is one, a token for a typo, and a
// --public-url OAuth refuses), else 1.
func exitCode(err error) int {
	var u usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &u), errors.As(err, new(*stores.NotDataError)), errors.As(err, new(*stores.MissingError)), errors.As(err, new(*TypoError)), errors.As(err, new(*transport.PublicURLError)):
		return 2
	}
	return 1
}

// config is what every command is scoped to, from flags with environment variables as fallbacks.
type config struct {
	data, space, agent, me, thread, linkBase, http string
	publicURL                                      string       // --public-url: where clients reach the HTTP server (oauth.go)
	web                                            string       // --web: the page's address, or off
	links                                          *web.Links   // the link base, once the file is open
	samePage                                       *web.Site    // the page, when served beside /mcp on the --http address
	pageSecure                                     bool         // the page's session cookie is Secure (https --public-url; web.go)
	pageAt                                         string       // where a browser opening /mcp is sent: "" when no page is served
	pageDone                                       <-chan error // the page on its own address: gets its end, once its record is withdrawn
	review                                         bool         // --review: the agents' changes are proposals
	memory                                         string       // --memory: the budget for work in flight, as given (memory.go)
	terminal                                       bool         // serve on a person's terminal: one line says it all (terminalLine)
	// create: the command writes, and may make a new data file where --data names none
	// (saying so on stderr); the others refuse a named file that isn't there.
	create bool
	// embeddings, embeddingsModel: the semantic tier's endpoint and model (index.go);
	// stopMeaning stops its background work, before the data is closed.
	embeddings, embeddingsModel string
	stopMeaning                 func()
	// meaning is the semantic tier the MCP server was made with (mcpServer), for the page
	// beside it to show (siteConfig); nil when off.
	meaning *semantic.Tier
	serving bool // serve, not call: the semantic tier works in the background
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// secretFlag defines a string flag that defaults to the environment variable's value, as
// the other flags do, but whose default -h shows through show: a token not at all (show
// nil), a database URL without its password (stores.Redact). A default in the help is printed
// wherever the help goes: a terminal's scrollback, a pasted bug report.
func secretFlag(fs *flag.FlagSet, p *string, name, envName string, show func(string) string, usage string) {
	*p = env(envName, "")
	fs.Var(&secretValue{p: p, show: show}, name, usage)
}

// secretValue is a secretFlag's value: String, which the flag package prints as the
// default, is what show makes of it ("" with no show, which prints no default).
type secretValue struct {
	p    *string
	show func(string) string
}

func (v *secretValue) Set(s string) error { *v.p = s; return nil }

func (v *secretValue) String() string {
	if v == nil || v.p == nil || v.show == nil {
		return ""
	}
	return v.show(*v.p)
}

// serverFlags adds the flags that only serving and calling tools use.
func serverFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.agent, "agent", env("COMPASS_AGENT", ""), "if set, who versions say made them (default: the MCP client's name, else \"agent\") [COMPASS_AGENT]")
	fs.StringVar(&c.thread, "thread", env("COMPASS_THREAD", claudecode.CurrentSession()), "if set, the conversation the agent is in, left out of list_conversations (default: Claude Code's session, when Claude Code started this server) [COMPASS_THREAD]")
	fs.BoolVar(&c.review, "review", envBool("COMPASS_REVIEW"), "if set, every change an agent makes is a proposal, kept for the person to accept or decline (docs proposals, or the page); the person's own saves never are [COMPASS_REVIEW]")
	memoryFlag(fs, c)
	embeddingFlags(fs, c)
	fs.StringVar(&c.linkBase, "link-base", env("COMPASS_LINK_BASE", ""), "if set, the prefix of document links: [Title](<base>/document/<id>); / for links relative to the server (default: the person's page when one is served for the data file, else compass://document/<id>) [COMPASS_LINK_BASE]")
}

// check checks what every command is scoped to: the space, and the person when given.
func (c *config) check() error {
	if err := spaces.Valid(c.space); err != nil {
		return usageError{fmt.Sprintf("--space: %v", err)}
	}
	if err := c.applyMemory(); err != nil {
		return err
	}
	if c.me == "" {
		return nil
	}
	if _, err := spaces.ParseActor("person:" + c.me); err != nil || strings.Contains(c.me, ":") {
		return usageError{fmt.Sprintf("--for: a person's id, like ana; got %q", c.me)}
	}
	return nil
}

// fallbackSaid makes the fallback to the system account said once a process, whichever
// copy of a config asks.
var fallbackSaid sync.Once

// person makes sure c names the person the command acts as (its versions and messages
// carry them): --for, else $USER or $USERNAME, else the system account's name, said once
// on stderr. Only the commands that act as a person ask.
func (c *config) person() error {
	if c.me == "" {
		c.me = access.EnvPerson()
	}
	if c.me == "" {
		// No $USER (a service, a container): the account the process runs as, said aloud,
		// since versions and messages will carry it.
		if c.me = access.AccountPerson(); c.me != "" {
			fallbackSaid.Do(func() {
				slog.Info("$USER is empty: working for the system account's user; --for (or COMPASS_ME) names another", "person", "person:"+c.me)
			})
		}
	}
	if c.me == "" {
		return usageError{"--for: no person to work for: $USER (or $USERNAME) is empty, and so is the system account's name. Give --for ID (or COMPASS_ME), the id of the person the agent works for, like ana."}
	}
	return c.check()
}

// open checks c and opens its data: a bbolt file, or a PostgreSQL database.
func (c *config) open(ctx context.Context) (store, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	named := c.data != ""
	if !named {
		p, err := stores.DefaultPath()
		if err != nil {
			return nil, err
		}
		c.data = p
	}
	if named && !c.create {
		return stores.OpenExisting(ctx, c.data)
	}
	_, statErr := os.Stat(c.data)
	db, err := stores.Open(ctx, c.data)
	if err == nil && !stores.IsURL(c.data) && errors.Is(statErr, fs.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "compass-mcp: there was no data file at %s: made a new, empty one there\n", c.data)
	}
	return db, err
}

// openSeen opens the data, with the spaces --for sees in it (access: the members' spaces,
// and --space, whose owner --for is); the caller closes the data.
func (c *config) openSeen(ctx context.Context) (store, []string, error) {
	file, err := c.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	mine, err := access.New(file).WithOwner(c.space, c.me).SeenBy(ctx, c.me)
	if err != nil {
		file.Close()
		return nil, nil, err
	}
	return file, mine, nil
}

// openAs is open for a command that acts as a person: person, then open.
func (c *config) openAs(ctx context.Context) (store, error) {
	if err := c.person(); err != nil {
		return nil, err
	}
	return c.open(ctx)
}

// mcpServer opens the data and makes the MCP server on it; the caller closes the store.
func (c *config) mcpServer(ctx context.Context) (store, *server.MCPServer, error) {
	db, err := c.openAs(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := tools.EnsureIndexes(ctx, db, c.space, slog.Default()); err != nil {
		db.Close()
		return nil, nil, err
	}
	c.links = web.NewLinks(c.linkBase, db, db.Path())
	cfg := c.tools()
	if cfg.Semantic, err = c.semanticTier(db); err != nil {
		db.Close()
		return nil, nil, err
	}
	c.meaning = cfg.Semantic
	if c.http == "" && c.linkBase == "" { // a --link-base is a page elsewhere: no links to hand out
		cfg.SignIn = c.agentSignIn(db)
	}
	srv, err := tools.New(db, cfg)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, srv, nil
}

func (c *config) tools() tools.Config {
	cfg := tools.Config{Space: c.space, Agent: c.agent, For: c.me, Thread: c.thread, LinkBase: strings.TrimRight(c.linkBase, "/"), Review: c.review}
	if c.links != nil {
		cfg.LinkBaseFunc = c.links.Base
	}
	return cfg
}

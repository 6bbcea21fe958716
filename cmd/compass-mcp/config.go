package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"strings"
	"sync"

	"github.com/compass-mcp/compass-mcp/claudecode"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/compass-mcp/compass-mcp/web"
	"github.com/mark3labs/mcp-go/server"
)

// errSilent ends a command that has already said why on stderr or stdout.
var errSilent = errors.New("")

// usageError is a command line that can't be run as given (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// exitCode is 0 for -h (help asked for is not a failure), 2 for a usage error, else 1.
func exitCode(err error) int {
	var u usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &u):
		return 2
	}
	return 1
}

// config is what every command is scoped to, from flags with environment variables as fallbacks.
type config struct {
	data, space, agent, me, thread, linkBase, http string
	publicURL                                      string     // --public-url: where clients reach the HTTP server (oauth.go)
	web                                            string     // --web: the page's address, or off
	links                                          *web.Links // the link base, once the file is open
	samePage                                       *web.Site  // the page, when served beside /mcp on the --http address
	pageSecure                                     bool       // the page's session cookie is Secure (https --public-url; web.go)
	pageAt                                         string     // where a browser opening /mcp is sent: "" when no page is served
	pageDone                                       chan error // the page on its own address: gets its end, once its record is withdrawn
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// flags makes a command's flag set with the flags every command shares.
func flags(name string, c *config) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.StringVar(&c.data, "data", env("COMPASS_DATA", ""), "if set, the data: a bbolt file's path, or a PostgreSQL database's postgres:// URL (pool: pool_max_conns in the URL, default max(4, 2×GOMAXPROCS); 30 s per transaction) (default: the bbolt file $XDG_DATA_HOME or ~/.local/share, then compass/compass.db) [COMPASS_DATA]")
	fs.StringVar(&c.space, "space", env("COMPASS_SPACE", "personal"), "the space every call is scoped to [COMPASS_SPACE]")
	fs.StringVar(&c.me, "for", env("COMPASS_ME", ""), "the person (id) the agent works for, and who the person's commands act as (default: $USER, else $USERNAME, else the system account's name) [COMPASS_ME]")
	return fs
}

// serverFlags adds the flags that only serving and calling tools use.
func serverFlags(fs *flag.FlagSet, c *config) {
	fs.StringVar(&c.agent, "agent", env("COMPASS_AGENT", ""), "if set, who versions say made them (default: the MCP client's name, else \"agent\") [COMPASS_AGENT]")
	fs.StringVar(&c.thread, "thread", env("COMPASS_THREAD", claudecode.CurrentSession()), "if set, the conversation the agent is in, left out of list_conversations (default: Claude Code's session, when Claude Code started this server) [COMPASS_THREAD]")
	fs.StringVar(&c.linkBase, "link-base", env("COMPASS_LINK_BASE", ""), "if set, the prefix of document links: [Title](<base>/document/<id>); / for links relative to the server (default: the person's page when one is served for the data file, else compass://document/<id>) [COMPASS_LINK_BASE]")
}

// parse reads args into fs, allowing flags after the positional arguments too; everything
// after "--" is positional.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return append(pos, rest...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// check checks what every command is scoped to: the space, and the person when given.
func (c *config) check() error {
	if err := spaces.Valid(c.space); err != nil {
		return usageError{fmt.Sprintf("--space: %v", err)}
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

// quietPerson is who a command without --for works for, when the environment says ($USER,
// $USERNAME), without the system account's fallback or a word on stderr: for commands that
// only need to know the server's own person.
func quietPerson() string { return env("USER", os.Getenv("USERNAME")) }

// person makes sure c names the person the command acts as (its versions and messages
// carry them): --for, else $USER or $USERNAME, else the system account's name, said once
// on stderr. Only the commands that act as a person ask.
func (c *config) person() error {
	if c.me == "" {
		c.me = quietPerson()
	}
	if c.me == "" {
		// No $USER (a service, a container): the account the process runs as, said aloud,
		// since versions and messages will carry it.
		if u, err := user.Current(); err == nil && u.Username != "" && !strings.ContainsAny(u.Username, `:\`) {
			c.me = u.Username
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
func (c *config) open() (store, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if c.data == "" {
		p, err := bolt.DefaultPath()
		if err != nil {
			return nil, err
		}
		c.data = p
	}
	return openStore(c.data)
}

// mcpServer opens the data and makes the MCP server on it; the caller closes the store.
func (c *config) mcpServer() (store, *server.MCPServer, error) {
	if err := c.person(); err != nil {
		return nil, nil, err
	}
	db, err := c.open()
	if err != nil {
		return nil, nil, err
	}
	if err := ensureIndexes(db, c.space); err != nil {
		db.Close()
		return nil, nil, err
	}
	c.links = web.NewLinks(c.linkBase, db, db.Path())
	srv, err := tools.New(db, c.tools())
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, srv, nil
}

func (c *config) tools() tools.Config {
	cfg := tools.Config{Space: c.space, Agent: c.agent, For: c.me, Thread: c.thread, LinkBase: strings.TrimRight(c.linkBase, "/")}
	if c.links != nil {
		cfg.LinkBaseFunc = c.links.Base
	}
	return cfg
}

const usage = `compass-mcp serves a space's shared, versioned Markdown documents to an AI agent over MCP.

Usage:
  compass-mcp [serve] [--http ADDR] [flags]   serve MCP over stdio, or streamable HTTP at ADDR/mcp
                                              (and ADDR/spaces/{space}/mcp)
  compass-mcp call TOOL [name=value ...]      call one tool in-process and print its answer
                                              (name=@FILE reads the value from FILE, @- from stdin)
  compass-mcp docs ...                        the person's side: list, show, history, diff, save,
                                              restore, rename, delete, export ("docs help")
  compass-mcp backup FILE                     a consistent copy of the bbolt data file, servers running or not
  compass-mcp copy --from A --to B           everything in A (a bbolt file or postgres:// URL) into B,
                                              empty, all or nothing, then checked byte for byte
  compass-mcp import FILE                     conversations in: JSON Lines or a Claude export's
                                              conversations.json (- for stdin)
  compass-mcp import --claude-code [DIR] [--project PATH] [--follow]
                                              Claude Code's sessions (default ~/.claude/projects),
                                              once or as they grow
  compass-mcp say CONVERSATION TEXT [--from person:ID|agent:NAME] [--to agent:NAME] [--private] [--title T]
                                              add one message (the conversation is made if new)
  compass-mcp people list                     the people's display names
  compass-mcp people set ID NAME              a person's display name, shown wherever they are
  compass-mcp web [--web ADDR]                serve only the person's page (default 127.0.0.1:7411)
  compass-mcp open [DOC]                      a one-time sign-in link to the page (to DOC), for --for
  compass-mcp members add|remove SPACE PERSON / members list [SPACE]
                                              who may see a space on a server shared by a team
  compass-mcp tokens add --for PERSON [--agent NAME] [--space S ...] [--read-only] [--expires 90d]
  compass-mcp tokens list [--for PERSON] / tokens revoke ID
                                              per-person tokens for /mcp and /spaces/{space}/mcp
  compass-mcp install [CLIENT] [--project]    add this binary to an MCP client's configuration (vscode, cursor,
                                              zed, claude-desktop, claude-code, ...); no CLIENT lists them
  compass-mcp version                         the version and commit this binary was built from (also --version)
  compass-mcp help                            this text

Every command takes --data, --space and --for (or COMPASS_DATA, COMPASS_SPACE, COMPASS_ME).
--data is a bbolt file's path (the default: one file on this machine) or a PostgreSQL
database's URL, postgres://USER:PASSWORD@HOST:PORT/DB[?search_path=SCHEMA], which several
servers can share (README: "Beyond one machine: PostgreSQL").
Run "compass-mcp COMMAND -h" for a command's flags.
`

func run(args []string) error {
	if versionRequested(args) {
		return printVersion(os.Stdout)
	}
	cmd := "serve"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(args)
	case "call":
		return call(args, os.Stdin, os.Stdout)
	case "docs":
		return docsCmd(args, os.Stdin, os.Stdout, os.Stderr)
	case "backup":
		return backup(args, os.Stdout)
	case "copy":
		return copyCmd(args, os.Stdout)
	case "import":
		return importConversations(args, os.Stdin, os.Stdout)
	case "say":
		return say(args, os.Stdout)
	case "people":
		return people(args, os.Stdout, os.Stderr)
	case "web":
		return webCmd(args)
	case "open":
		return openCmd(args)
	case "members":
		return members(args, os.Stdout)
	case "tokens":
		return tokens(args, os.Stdout)
	case "install":
		return install(args, os.Stdout, os.Stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(os.Stderr, usage)
		return nil
	}
	fmt.Fprint(os.Stderr, usage)
	return usageError{fmt.Sprintf("no command %q", cmd)}
}

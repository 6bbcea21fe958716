// Package command is compass-mcp's command line: flags and environment variables into a
// config, then serve or run a subcommand, one file a subcommand with its flags, its help and
// what it prints for the person (its words). What a subcommand does is in the packages
// below (docstore, threads, access, transport, ...).
package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/compass-mcp/compass-mcp/kv/stores"
	"github.com/compass-mcp/compass-mcp/search"
)

// Main runs compass-mcp with the program's arguments, logging to stderr (stdout is the
// stdio transport's), and exits with the command's status.
func Main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel()})))
	if err := run(os.Args[1:]); err != nil {
		if err != errSilent && !errors.Is(err, flag.ErrHelp) { // -h has printed the usage
			fmt.Fprintln(os.Stderr, "compass-mcp:", err)
		}
		os.Exit(exitCode(err))
	}
}

// logLevel is COMPASS_LOG (debug, info, warn, error), info by default. Logs go to stderr
// only: stdout is the stdio transport.
func logLevel() slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(os.Getenv("COMPASS_LOG")))); err != nil {
		return slog.LevelInfo
	}
	return l
}

// subcommand is how one of compass-mcp's commands is called and what it does: help lists
// them, and COMMAND -h shows one with its flags. Each is defined beside its command.
type subcommand struct {
	name, args string // "say", and what follows it: "CONVERSATION TEXT [--from ...]"
	does       string // what it does, for help
	more       string // for COMMAND -h only: the rest
}

// commands are the ones help lists, in its order.
var commands = []subcommand{serveHelp, callHelp, docsHelp, backupHelp, copyHelp, importHelp, sayHelp, conversationsHelp, peopleHelp,
	exportHelp, syncHelp, indexHelp, webHelp, openHelp, membersHelp, tokensHelp, installHelp, versionHelp, {name: "help", does: "this text"}}

const helpTail = `
Every command takes --data, --space and --for (or COMPASS_DATA, COMPASS_SPACE, COMPASS_ME).
--data is a bbolt file's path (the default: one file on this machine) or a PostgreSQL
database's URL, postgres://USER:PASSWORD@HOST:PORT/DB[?search_path=SCHEMA], which several
servers can share (docs/POSTGRES.md).
Run "compass-mcp COMMAND -h" for a command's arguments and flags.
`

// help writes what compass-mcp is and its commands.
func help(w io.Writer) {
	fmt.Fprint(w, "compass-mcp serves a space's shared, versioned Markdown documents to an AI agent over MCP.\n\nUsage:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  compass-mcp %s\n      %s\n", strings.TrimSpace(c.name+" "+c.args), strings.ReplaceAll(c.does, "\n", "\n      "))
	}
	fmt.Fprint(w, helpTail)
}

func run(args []string) error {
	if versionRequested(args) {
		return printVersion(os.Stdout)
	}
	cmd, args := commandOf(args)
	// One command a process, chosen here from the arguments before anything is served:
	// the commands given os.Stdout print for a person at a terminal and run instead of
	// serving, never beside it, and serve gives stdout to the stdio transport alone
	// (e2e/reliability's TestServingWritesOnlyProtocolToStdout). The commands that serve
	// stop on SIGINT or SIGTERM (contexts of their own, below this one); the others are
	// ended by it, as any program.
	ctx := context.Background()
	runs := map[string]func([]string) error{
		"serve":         func(a []string) error { return serve(ctx, a) },
		"web":           func(a []string) error { return webCmd(ctx, a) },
		"open":          func(a []string) error { return openCmd(ctx, a) },
		"call":          func(a []string) error { return call(ctx, a, os.Stdin, os.Stdout) },
		"docs":          func(a []string) error { return docsCmd(ctx, a, os.Stdin, os.Stdout, os.Stderr) },
		"backup":        func(a []string) error { return backup(ctx, a, os.Stdout) },
		"copy":          func(a []string) error { return copyCmd(ctx, a, os.Stdout) },
		"export":        func(a []string) error { return exportCmd(ctx, a, os.Stdout) },
		"sync":          func(a []string) error { return syncCmd(ctx, a, os.Stdout, os.Stderr) },
		"index":         func(a []string) error { return indexCmd(ctx, a, os.Stdout, os.Stderr) },
		"import":        func(a []string) error { return importConversations(ctx, a, os.Stdin, os.Stdout) },
		"say":           func(a []string) error { return say(ctx, a, os.Stdout) },
		"people":        func(a []string) error { return people(ctx, a, os.Stdout, os.Stderr) },
		"conversations": func(a []string) error { return conversationsCmd(ctx, a, os.Stdout, os.Stderr) },
		"members":       func(a []string) error { return members(ctx, a, os.Stdout) },
		"tokens":        func(a []string) error { return tokens(ctx, a, os.Stdout) },
		"install":       func(a []string) error { return install(ctx, a, os.Stdout, os.Stderr) },
		"version": func(a []string) error {
			if _, err := parse(newFlags(versionHelp, os.Stderr), a); err != nil {
				return err
			}
			return usageError{"version takes no arguments"}
		},
	}
	if r, ok := runs[cmd]; ok {
		return r(args)
	}
	if cmd == "help" || isHelp(cmd) {
		help(os.Stderr)
		return nil
	}
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	if near := search.Nearest(cmd, names); near != "" {
		return usageError{fmt.Sprintf("no command %q: did you mean %s? (compass-mcp help lists them)", cmd, near)}
	}
	return usageError{fmt.Sprintf("no command %q: compass-mcp help lists them", cmd)}
}

// sharedFlags are the flags every command takes (flags, install): given before the
// command, they are moved after it.
var sharedFlags = map[string]bool{"data": true, "space": true, "for": true}

// commandOf is the command args name and the arguments it gets: the first argument, or
// serve when it is a flag. The shared flags may come first (compass-mcp --data X call
// list_documents): they go to the command after its own arguments (docs takes its
// subcommand first) and before a "--" that ends its flags; one given again after the
// command is left to that one. Any other flag first means serve, as before: serve refuses
// a command name after it, saying to put the flag after the command.
func commandOf(args []string) (string, []string) {
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || isHelp(args[0])) {
		return args[0], args[1:]
	}
	type flagArgs struct {
		name string
		args []string
	}
	var shared []flagArgs
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		name, _, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !sharedFlags[name] || !hasValue && i+1 == len(args) {
			break
		}
		n := 2
		if hasValue {
			n = 1
		}
		shared = append(shared, flagArgs{name, args[i : i+n]})
		i += n
	}
	if len(shared) == 0 || i == len(args) || !isCommand(args[i]) {
		return "serve", args
	}
	cmd, rest := args[i], args[i+1:]
	end := len(rest)
	for j, a := range rest {
		if a == "--" {
			end = j
			break
		}
	}
	given := map[string]bool{}
	for _, a := range rest[:end] {
		if strings.HasPrefix(a, "-") {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			given[name] = true
		}
	}
	out := append([]string{}, rest[:end]...)
	for _, f := range shared {
		if !given[f.name] {
			out = append(out, f.args...)
		}
	}
	return cmd, append(out, rest[end:]...)
}

// isCommand says whether name is one of compass-mcp's commands.
func isCommand(name string) bool {
	for _, c := range commands {
		if c.name == name {
			return true
		}
	}
	return false
}

var versionHelp = subcommand{name: "version", does: "the version and commit this binary was built from (also --version)"}

// newFlags makes a command's flag set, whose -h prints the command's usage and flags on w.
func newFlags(cmd subcommand, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: compass-mcp %s\n\n%s\n", strings.TrimSpace(cmd.name+" "+cmd.args), cmd.does)
		if cmd.more != "" {
			fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(cmd.more))
		}
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprint(w, "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// flags makes a command's flag set with the flags every command shares.
func flags(cmd subcommand, c *config) *flag.FlagSet {
	fs := newFlags(cmd, os.Stderr)
	secretFlag(fs, &c.data, "data", "COMPASS_DATA", stores.Redact, "if set, the data: a bbolt file's `path`, or a PostgreSQL database's postgres:// URL (pool: pool_max_conns in the URL, default max(4, 2×GOMAXPROCS); 30 s per transaction) (default: the bbolt file $XDG_DATA_HOME or ~/.local/share, then compass/compass.db) [COMPASS_DATA]")
	fs.StringVar(&c.space, "space", env("COMPASS_SPACE", "personal"), "the space every call is scoped to [COMPASS_SPACE]")
	fs.StringVar(&c.me, "for", env("COMPASS_ME", ""), "the person (id) the agent works for, and who the person's commands act as (default: $USER, else $USERNAME, else the system account's name) [COMPASS_ME]")
	return fs
}

// parse reads args into fs, allowing flags after the positional arguments too; everything
// after "--" is positional. -h prints the command's usage (flag.ErrHelp: exit 0); a flag
// it doesn't have is refused once, naming the closest one it has, without the list.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	out := fs.Output()
	fs.SetOutput(io.Discard) // the flag package's own words would come with every flag
	defer fs.SetOutput(out)
	var pos []string
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(out)
			fs.Usage()
			return nil, err
		} else if err != nil {
			return nil, flagError(fs, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return append(pos, rest...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// flagError says what the flag package refused, as a usage error naming the command and,
// for a flag it doesn't have, the closest one it has.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg = fmt.Sprintf("%s has no flag --%s", fs.Name(), name)
		if near := search.Nearest(strings.TrimLeft(name, "-"), names); near != "" {
			msg += fmt.Sprintf(": did you mean --%s?", near)
		}
	}
	return usageError{fmt.Sprintf("%s (compass-mcp %s -h lists its flags)", msg, fs.Name())}
}

package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/internal/clientconfig"
	"github.com/compass-mcp/compass-mcp/kv/stores"
	"github.com/compass-mcp/compass-mcp/search"
)

var installHelp = subcommand{name: "install", args: "[CLIENT] [--project] [--for ID] [--space S] [--data PATH|URL] [--force] [--print]",
	does: "add this binary to an MCP client's configuration (vscode, cursor, zed, claude-desktop, claude-code, ...);\nno CLIENT lists them", more: installUsage}

const installUsage = `Adds compass-mcp to an MCP client's configuration on this machine, keeping every other
server and setting of the file (and its comments); the old file is kept beside it as
FILE.bak-YYYYMMDD-HHMMSS. With no CLIENT, lists the clients and where each keeps its
configuration here. docs/CLIENTS.md has each client's snippet and how to check it works.`

// install writes this binary into a client's configuration (clientconfig does the writing).
func install(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(installHelp, stderr)
	me := fs.String("for", "", "if set, the person the client's server works for (its COMPASS_ME) (default: the server's own, $USER where the client runs)")
	space := fs.String("space", "", "if set, the space the client's server is scoped to (its COMPASS_SPACE) (default: the server's own, personal)")
	data := fs.String("data", "", "if set, the data the client's server opens (its COMPASS_DATA): a bbolt file's path, made absolute here, or a postgres:// URL (default: the server's own, one file on this machine)")
	project := fs.Bool("project", false, "if set, the client's file for the project in the working folder (.vscode/mcp.json, .cursor/mcp.json, .zed/settings.json, ...) rather than the person's own")
	force := fs.Bool("force", false, "if set, replace a server of the name the file already has")
	printOnly := fs.Bool("print", false, "if set, write nothing: print the whole file as it would be written (for claude-code, the commands)")
	command := fs.String("command", "", "if set, the compass-mcp binary the client starts (default: this one)")
	name := fs.String("name", "compass", "the server's name in the client's configuration (another name keeps two, e.g. one a space)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	env, err := clientconfig.Host()
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		clientconfig.List(stdout, env)
		return nil
	}
	if len(pos) > 1 {
		return usageError{"install takes one client: " + clientconfig.Names()}
	}
	client := clientconfig.Lookup(pos[0])
	if client == nil {
		return usageError{noClient(pos[0])}
	}
	if *project && !client.HasProject() {
		return usageError{fmt.Sprintf("%s has no file of a project's own: install it without --project", client.Title)}
	}
	if err := stores.Check(*data); err != nil {
		return err
	}
	s, err := clientconfig.NewServer(*name, *command, *me, *space, *data, env)
	var bad clientconfig.ArgError
	if errors.As(err, &bad) {
		return usageError{string(bad)}
	} else if err != nil {
		return err
	}
	err = client.Install(env, s, *project, *force, *printOnly, time.Now(), stdout, stderr)
	if errors.As(err, new(*clientconfig.ExistsError)) {
		return fmt.Errorf("%v\nnothing was written. To replace it: compass-mcp install %s --force (the old file is kept beside it); to keep both, give another --name", err, strings.Join(args, " "))
	}
	return err
}

// noClient says there is no client name and which were meant: every client whose name
// starts with it ("claude": both Claude clients), else the one a typo away ("vscod").
func noClient(name string) string {
	var names, starts []string
	for _, c := range clientconfig.Clients {
		names = append(names, c.Name)
		if len(name) >= 3 && strings.HasPrefix(c.Name, strings.ToLower(name)) {
			starts = append(starts, c.Name)
		}
	}
	if len(starts) == 0 {
		if near := search.Nearest(name, names); near != "" {
			starts = []string{near}
		}
	}
	msg := fmt.Sprintf("no client %q", clip(name, 64))
	switch len(starts) {
	case 0:
		return fmt.Sprintf("%s: install takes one of %s (compass-mcp install lists them)", msg, clientconfig.Names())
	case 1:
		return fmt.Sprintf("%s: did you mean %s? (compass-mcp install lists them)", msg, starts[0])
	}
	return fmt.Sprintf("%s: did you mean %s or %s? (compass-mcp install lists them)", msg, strings.Join(starts[:len(starts)-1], ", "), starts[len(starts)-1])
}

// clip is s cut to n bytes, on a rune boundary, with … when cut: a name quoted back stays short.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

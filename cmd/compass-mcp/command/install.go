package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/clientconfig"
	"github.com/compass-mcp/compass-mcp/kv/stores"
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
		return usageError{fmt.Sprintf("no client %q: install takes one of %s (compass-mcp install lists them)", pos[0], clientconfig.Names())}
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

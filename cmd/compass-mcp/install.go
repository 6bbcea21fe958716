package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/clientconfig"
	"github.com/compass-mcp/compass-mcp/spaces"
)

var installHelp = subcommand{name: "install", args: "[CLIENT] [--project] [--for ID] [--space S] [--data PATH|URL] [--force] [--print]",
	does: "add this binary to an MCP client's configuration (vscode, cursor, zed, claude-desktop, claude-code, ...);\nno CLIENT lists them", more: installUsage}

const installUsage = `Adds compass-mcp to an MCP client's configuration on this machine, keeping every other
server and setting of the file (and its comments); the old file is kept beside it as
FILE.bak-YYYYMMDD-HHMMSS. With no CLIENT, lists the clients and where each keeps its
configuration here. docs/CLIENTS.md has each client's snippet and how to check it works.`

// install writes this binary into a client's configuration (clientconfig does the writing).
func install(args []string, stdout, stderr io.Writer) error {
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
		listClients(stdout, env)
		return nil
	}
	if len(pos) > 1 {
		return usageError{"install takes one client: " + clientNames()}
	}
	client := clientconfig.Lookup(pos[0])
	if client == nil {
		return usageError{fmt.Sprintf("no client %q: install takes one of %s (compass-mcp install lists them)", pos[0], clientNames())}
	}
	if *project && !client.HasProject() {
		return usageError{fmt.Sprintf("%s has no file of a project's own: install it without --project", client.Title)}
	}
	s, err := installServer(*name, *command, *me, *space, *data, env)
	if err != nil {
		return err
	}
	if cmds := client.Commands(s, *project, *force); cmds != nil {
		return installByCommand(client, s.Name, cmds, *printOnly, stdout, stderr)
	}
	ch, err := client.Prepare(env, *project, s, *force)
	var exists *clientconfig.ExistsError
	var broken *clientconfig.ParseError
	switch {
	case errors.As(err, &exists):
		return fmt.Errorf("%v\nnothing was written. To replace it: compass-mcp install %s --force (the old file is kept beside it); to keep both, give another --name", err, strings.Join(args, " "))
	case errors.As(err, &broken):
		return fmt.Errorf("%v\nthe file was left as it was: fix it (or move it away), then install again", err)
	case err != nil:
		return err
	}
	if *printOnly {
		fmt.Fprintf(stderr, "compass-mcp install: would write %s (%s), %s:\n", ch.File, client.Title, describeChange(ch))
		_, err := stdout.Write(ch.New)
		return err
	}
	if ch.Unchanged() {
		fmt.Fprintf(stdout, "%s already has %s as it would be written: nothing to do.\n", ch.File, s.Name)
		return nil
	}
	backup, err := ch.Write(time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Wrote %s into %s (%s): %s.\n", s.Name, ch.File, client.Title, describeChange(ch))
	if backup != "" {
		fmt.Fprintf(stdout, "The file as it was is kept as %s.\n", backup)
	}
	fmt.Fprintf(stdout, "To check it works: %s.\n", client.Check)
	return nil
}

func describeChange(ch *clientconfig.Change) string {
	switch {
	case ch.Old == nil:
		return "a new file"
	case ch.Replaced:
		return "the server there replaced, everything else kept"
	}
	return "the server added, everything else kept"
}

func clientNames() string {
	var names []string
	for _, c := range clientconfig.Clients {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// listClients says where each client keeps its configuration on this machine.
func listClients(w io.Writer, env clientconfig.Env) {
	fmt.Fprintf(w, "compass-mcp install CLIENT writes compass-mcp into one of these clients' configuration (%s):\n\n", env.OS)
	for _, c := range clientconfig.Clients {
		file := c.UserFile(env)
		there := ""
		if _, err := os.Stat(file); err == nil {
			there = " (there)"
		}
		fmt.Fprintf(w, "  %-15s %s\n  %-15s %s%s\n", c.Name, c.Title, "", file, there)
		if c.HasProject() {
			fmt.Fprintf(w, "  %-15s --project: %s\n", "", c.ProjectFile(env))
		}
	}
	fmt.Fprintf(w, "\nEach client's snippet, and how to check it works: docs/CLIENTS.md.\n")
}

// installServer is the server a client starts: this binary (or --command) with serve, and
// the person's --for, --space and --data as the environment variables the server reads.
func installServer(name, command, me, space, data string, env clientconfig.Env) (clientconfig.Server, error) {
	s := clientconfig.Server{Name: name, Args: []string{"serve"}, Env: map[string]string{}}
	if name == "" || strings.ContainsAny(name, "\x00\n\r") || len(name) > 64 {
		return s, usageError{"--name: a name of 1 to 64 characters, on one line"}
	}
	bin, err := installBinary(command)
	if err != nil {
		return s, err
	}
	s.Command = bin
	if me != "" {
		if _, err := spaces.ParseActor("person:" + me); err != nil || strings.Contains(me, ":") {
			return s, usageError{fmt.Sprintf("--for: a person's id, like ana; got %q", me)}
		}
		s.Env["COMPASS_ME"] = me
	}
	if space != "" {
		if err := spaces.Valid(space); err != nil {
			return s, usageError{fmt.Sprintf("--space: %v", err)}
		}
		s.Env["COMPASS_SPACE"] = space
	}
	if data != "" {
		if !strings.Contains(data, "://") {
			// A client starts the server in a working folder of its own, and no client
			// expands ~: the path the client is given is absolute.
			if data == "~" || strings.HasPrefix(data, "~/") || strings.HasPrefix(data, `~\`) {
				data = filepath.Join(env.Home, data[1:])
			}
			abs, err := filepath.Abs(data)
			if err != nil {
				return s, err
			}
			data = abs
		}
		s.Env["COMPASS_DATA"] = data
	}
	return s, nil
}

// goBuildDir is a folder go run builds in: $GOTMPDIR (or the system's temporary folder)
// /go-buildNNN/bNNN/exe/, removed when go run exits.
var goBuildDir = regexp.MustCompile(`(^|[/\\])go-build\d+[/\\]`)

// installBinary is the absolute path, links resolved, of the binary a client should start.
func installBinary(command string) (string, error) {
	given := command != ""
	if !given {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("finding this binary (give --command PATH): %w", err)
		}
		command = exe
	}
	abs, err := filepath.Abs(command)
	if err != nil {
		return "", err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("--command: %w", err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0 {
		return "", usageError{fmt.Sprintf("--command: %s is not an executable file", resolved)}
	}
	if goBuildDir.MatchString(resolved) {
		what := "this compass-mcp was built by go run"
		if given {
			what = "--command is a binary go run built"
		}
		return "", usageError{fmt.Sprintf("%s, into a temporary folder that go removes when it exits (%s), so a client could not start it. "+
			"Install the binary first (go install github.com/compass-mcp/compass-mcp/cmd/compass-mcp@latest, or go build ./cmd/compass-mcp in a clone) "+
			"and run its install, or give --command PATH", what, filepath.Dir(resolved))}
	}
	return resolved, nil
}

// installByCommand adds the server to a client with a command of its own (Claude Code):
// run where the client is on PATH, else printed for the person to run.
func installByCommand(client *clientconfig.Client, name string, cmds [][]string, printOnly bool, stdout, stderr io.Writer) error {
	bin, err := exec.LookPath(cmds[0][0])
	if printOnly || err != nil {
		if !printOnly {
			fmt.Fprintf(stderr, "compass-mcp install: %s is not on PATH, so nothing was run; where it is installed, run:\n", cmds[0][0])
		}
		for _, c := range cmds {
			fmt.Fprintln(stdout, shellQuote(c))
		}
		return nil
	}
	for i, c := range cmds {
		cmd := exec.Command(bin, c[1:]...)
		out, err := cmd.CombinedOutput()
		if i < len(cmds)-1 {
			continue // removing an old server that may not be there: its complaint is no news
		}
		stdout.Write(out)
		if err != nil {
			return fmt.Errorf("%s: %v\n(to replace a %s server there, install again with --force)", shellQuote(c), err, name)
		}
	}
	fmt.Fprintf(stdout, "To check it works: %s.\n", client.Check)
	return nil
}

// shellQuote writes a command as a POSIX shell would read it back.
func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:@,+") == "" {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

package clientconfig

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

	"github.com/compass-mcp/compass-mcp/spaces"
)

// ArgError is what NewServer and Binary return for an argument that can't be used as given
// (the command line's fault, not the machine's).
type ArgError string

func (e ArgError) Error() string { return string(e) }

// NewServer is the server a client starts as name: command (default: this binary,
// resolved by Binary) with serve, and the person's me, space and data (each if set) as the
// environment variables the server reads. A data path is made absolute (~ expanded from
// e.Home): a client starts the server in a working folder of its own, and no client
// expands ~.
func NewServer(name, command, me, space, data string, e Env) (Server, error) {
	s := Server{Name: name, Args: []string{"serve"}, Env: map[string]string{}}
	if name == "" || strings.ContainsAny(name, "\x00\n\r") || len(name) > 64 {
		return s, ArgError("--name: a name of 1 to 64 characters, on one line")
	}
	bin, err := Binary(command)
	if err != nil {
		return s, err
	}
	s.Command = bin
	if me != "" {
		if _, err := spaces.ParseActor("person:" + me); err != nil || strings.Contains(me, ":") {
			return s, ArgError(fmt.Sprintf("--for: a person's id, like ana; got %q", me))
		}
		s.Env["COMPASS_ME"] = me
	}
	if space != "" {
		if err := spaces.Valid(space); err != nil {
			return s, ArgError(fmt.Sprintf("--space: %v", err))
		}
		s.Env["COMPASS_SPACE"] = space
	}
	if data != "" {
		if !strings.Contains(data, "://") {
			if data == "~" || strings.HasPrefix(data, "~/") || strings.HasPrefix(data, `~\`) {
				data = filepath.Join(e.Home, data[1:])
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

// Binary is the absolute path, links resolved, of the binary a client should start:
// command, or this one. One that go run built (gone when go run exits) is refused.
func Binary(command string) (string, error) {
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
		return "", ArgError(fmt.Sprintf("--command: %s is not an executable file", resolved))
	}
	if goBuildDir.MatchString(resolved) {
		what := "this compass-mcp was built by go run"
		if given {
			what = "--command is a binary go run built"
		}
		return "", ArgError(fmt.Sprintf("%s, into a temporary folder that go removes when it exits (%s), so a client could not start it. "+
			"Install the binary first (go install github.com/compass-mcp/compass-mcp/cmd/compass-mcp@latest, or go build ./cmd/compass-mcp in a clone) "+
			"and run its install, or give --command PATH", what, filepath.Dir(resolved)))
	}
	return resolved, nil
}

// ErrNotInstalled is returned by Run when the client's command is not on PATH: the
// commands are printed for the person to run, and nothing was installed.
var ErrNotInstalled = errors.New("nothing was installed (the commands above do it)")

// Describe says what the change does to its file.
func (ch *Change) Describe() string {
	switch {
	case ch.Old == nil:
		return "a new file"
	case ch.Replaced:
		return "the server there replaced, everything else kept"
	}
	return "the server added, everything else kept"
}

// Names is the clients' names, comma-separated.
func Names() string {
	var names []string
	for _, c := range Clients {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// List writes where each client keeps its configuration on the machine e describes.
func List(w io.Writer, e Env) {
	fmt.Fprintf(w, "compass-mcp install CLIENT writes compass-mcp into one of these clients' configuration (%s):\n\n", e.OS)
	for _, c := range Clients {
		file := c.UserFile(e)
		there := ""
		if _, err := os.Stat(file); err == nil {
			there = " (there)"
		}
		fmt.Fprintf(w, "  %-15s %s\n  %-15s %s%s\n", c.Name, c.Title, "", file, there)
		if c.HasProject() {
			fmt.Fprintf(w, "  %-15s --project: %s\n", "", c.ProjectFile(e))
		}
	}
	fmt.Fprintf(w, "\nEach client's snippet, and how to check it works: docs/CLIENTS.md.\n")
}

// Run adds the server name to a client with a command of its own (Claude Code) by cmds
// (Commands'): run where the client is on PATH, else (or with printOnly) printed on stdout
// for the person to run.
func (c *Client) Run(name string, cmds [][]string, printOnly bool, stdout, stderr io.Writer) error {
	bin, err := exec.LookPath(cmds[0][0])
	if printOnly || err != nil {
		if !printOnly {
			fmt.Fprintf(stderr, "compass-mcp install: %s is not on PATH, so nothing was installed; where %s is installed, run:\n", cmds[0][0], c.Title)
		}
		for _, cmd := range cmds {
			fmt.Fprintln(stdout, ShellQuote(cmd))
		}
		if !printOnly {
			return ErrNotInstalled
		}
		return nil
	}
	for i, cmd := range cmds {
		out, err := exec.Command(bin, cmd[1:]...).CombinedOutput()
		if i < len(cmds)-1 {
			continue // removing an old server that may not be there: its complaint is no news
		}
		stdout.Write(out)
		if err != nil {
			return fmt.Errorf("%s: %v\n(to replace a %s server there, install again with --force)", ShellQuote(cmd), err, name)
		}
	}
	fmt.Fprintf(stdout, "To check it works: %s.\n", c.Check)
	return nil
}

// ShellQuote writes a command as a POSIX shell would read it back.
func ShellQuote(args []string) string {
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

// writeAttempts is how many times Install reads and writes a file that the client keeps
// saving before it gives up (ErrChanged).
const writeAttempts = 5

// testHookBeforeWrite, when set by a test, runs between Prepare and Write: a client's
// save at the worst moment.
var testHookBeforeWrite func(file string)

// Install writes s into the client's file (the project's, with project; replacing a server
// of its name, with force), keeping the old file beside it, and says on stdout what it did
// and how to check it works; printOnly writes nothing and prints the file as it would be
// (for a client with commands of its own, the commands). A file of s's name already there
// is an *ExistsError; a file that can't be read as the client's format, a *ParseError, said
// to be left as it was.
func (c *Client) Install(e Env, s Server, project, force, printOnly bool, now time.Time, stdout, stderr io.Writer) error {
	if project && c.HasProject() {
		var notes []string
		s, notes = c.Portable(s, e)
		for _, n := range notes {
			fmt.Fprintf(stderr, "compass-mcp install: %s.\n", n)
		}
	}
	if cmds := c.Commands(s, project, force); cmds != nil {
		return c.Run(s.Name, cmds, printOnly, stdout, stderr)
	}
	if !printOnly && (!project || c.HasProject()) {
		release, err := lock(c.File(e, project))
		if err != nil {
			return err
		}
		defer release()
	}
	var ch *Change
	var backup string
	for attempt := 1; ; attempt++ {
		var err error
		ch, err = c.Prepare(e, project, s, force)
		var broken *ParseError
		switch {
		case errors.As(err, &broken):
			msg := fmt.Sprintf("%v.\nNothing was written. To go on: fix what it names and install again; or move the file away and install again (a new file, then add back what it held); or add the server by hand, as a new file would hold it:", err)
			if fresh, _, ferr := c.format.set(nil, s, false); ferr == nil {
				msg += "\n" + string(fresh)
			}
			return errors.New(strings.TrimRight(msg, "\n"))
		case err != nil:
			return err
		}
		if printOnly {
			fmt.Fprintf(stderr, "compass-mcp install: would write %s (%s), %s:\n", ch.File, c.Title, ch.Describe())
			_, err := stdout.Write(ch.New)
			return err
		}
		if ch.Unchanged() {
			fmt.Fprintf(stdout, "%s already has %s as install would write it: already set up, nothing changed.\n", ch.File, s.Name)
			return nil
		}
		if testHookBeforeWrite != nil {
			testHookBeforeWrite(ch.File)
		}
		backup, err = ch.Write(now)
		if errors.Is(err, ErrChanged) && attempt < writeAttempts {
			continue // the client saved the file meanwhile: read it again, keeping its change
		}
		if err != nil {
			return err
		}
		break
	}
	fmt.Fprintf(stdout, "Wrote %s into %s (%s): %s.\n", s.Name, ch.File, c.Title, ch.Describe())
	if backup != "" {
		fmt.Fprintf(stdout, "The file as it was is kept as %s.\n", backup)
	}
	fmt.Fprintf(stdout, "To check it works: %s.\n", c.Check)
	return nil
}

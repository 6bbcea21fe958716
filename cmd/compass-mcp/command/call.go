package command

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/compass-mcp/compass-mcp/internal/version"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/compass-mcp/compass-mcp/transport"
)

var callHelp = subcommand{name: "call", args: "TOOL [name=value ...]",
	does: "call one tool in-process and print its answer as the model reads it (exit 1 on an error result);\nname=@FILE reads the value from FILE, @- from stdin; call TOOL -h shows the tool's arguments",
	more: "TOOL is one of " + strings.Join(tools.Names(), ", ") + "."}

// call runs one tool in-process and prints its answer as the model would read it.
// An error result is printed too, and ends with exit 1.
func call(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) > 1 && slices.Contains(tools.Names(), args[0]) && slices.ContainsFunc(args[1:], isHelp) {
		return toolHelp(os.Stderr, args[0])
	}
	var c config
	fs := flags(callHelp, &c)
	serverFlags(fs, &c)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError{"call needs a tool: compass-mcp call TOOL [name=value ...], where TOOL is one of " + strings.Join(tools.Names(), ", ")}
	}
	if !slices.Contains(tools.Names(), pos[0]) {
		return usageError{fmt.Sprintf("no tool %q: call takes one of %s", pos[0], strings.Join(tools.Names(), ", "))}
	}
	arguments := map[string]any{}
	for _, kv := range pos[1:] {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return usageError{fmt.Sprintf("call takes arguments as name=value; got %q", kv)}
		}
		if file, ok := strings.CutPrefix(value, "@"); ok {
			var data []byte
			if file == "-" {
				data, err = io.ReadAll(stdin)
			} else {
				data, err = os.ReadFile(file)
			}
			if err != nil {
				return fmt.Errorf("reading %s for %s: %w", file, name, err)
			}
			value = string(data)
		}
		arguments[name] = value
	}
	if c.agent == "" {
		c.agent = "agent"
	}
	c.create = !readOnly(pos[0]) // a tool that writes may start a new data file; one that reads may not
	db, srv, err := c.mcpServer(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	texts, isError, err := transport.CallInProcess(ctx, srv, "compass-mcp-call", version.Number(), pos[0], arguments)
	if err != nil {
		return err
	}
	for _, t := range texts {
		fmt.Fprintln(stdout, t)
	}
	if isError {
		return errSilent
	}
	return nil
}

// readOnly says whether the tool name only reads, as its annotations tell a client.
func readOnly(name string) bool {
	for _, t := range tools.Definitions() {
		if t.Name == name {
			return t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
		}
	}
	return false
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "--h" }

// toolHelp writes a tool's usage, its arguments as tools/list gives them (ends with
// flag.ErrHelp: exit 0).
func toolHelp(w io.Writer, name string) error {
	fmt.Fprint(w, tools.Usage(name, "compass-mcp call "+name+" [name=value ...]"))
	return flag.ErrHelp
}

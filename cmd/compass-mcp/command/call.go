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
	"github.com/compass-mcp/compass-mcp/search"
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
	if len(args) > 0 {
		if err := toolArgAsFlag(fs, args[0], args[1:]); err != nil {
			return err
		}
	}
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
			return usageError{fmt.Sprintf("call takes arguments as name=value; got %q (compass-mcp call %s -h lists its arguments)", clip(kv, 100), pos[0])}
		}
		if err := knownArgument(pos[0], name); err != nil {
			return err
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

// knownArgument refuses an argument the tool doesn't have, naming the close one and those
// it has, as call TOOL -h lists them (a tool would otherwise ignore it, or refuse it only
// once the data is open).
func knownArgument(tool, name string) error {
	if tools.Accepts(tool, name) {
		return nil
	}
	have := tools.Arguments(tool)
	msg := fmt.Sprintf("%s has no argument %s", tool, clip(name, 64))
	if near := search.Nearest(name, have); near != "" {
		msg += fmt.Sprintf(": did you mean %s?", near)
	}
	return usageError{fmt.Sprintf("%s (it takes %s; compass-mcp call %s -h says what each is)", msg, strings.Join(have, ", "), tool)}
}

// toolArgAsFlag refuses a tool's argument written as a flag (--limit 5), before the flag
// parser refuses it as a flag call doesn't have: tool arguments are written limit=5.
func toolArgAsFlag(fs *flag.FlagSet, tool string, args []string) error {
	have := tools.Arguments(tool)
	for i, a := range args {
		if a == "--" {
			return nil
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || fs.Lookup(name) != nil || !slices.Contains(have, name) {
			continue
		}
		if !hasValue {
			value = "VALUE"
			if i+1 < len(args) {
				value = clip(args[i+1], 40)
			}
		}
		return usageError{fmt.Sprintf("tool arguments are written name=value: %s=%s, not %s (compass-mcp call %s -h lists its arguments)", name, value, clip(a, 64), tool)}
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

package tools

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Definitions are the tools as tools/list gives them (name, description, input schema), in
// its order, without a store: for help on the command line.
func Definitions() []mcp.Tool {
	var s Server
	defs := map[string]mcp.Tool{}
	for _, t := range s.tools() {
		defs[t.def.Name] = t.def
	}
	out := make([]mcp.Tool, 0, len(defs))
	for _, name := range toolOrder {
		if d, ok := defs[name]; ok {
			out = append(out, d)
			delete(defs, name)
		}
	}
	for _, d := range defs { // a tool not (yet) in toolOrder: last, as inOrder puts it
		out = append(out, d)
	}
	return out
}

// Arguments are the names of the tool's arguments as Usage lists them (tools/list's input
// schema, the required ones first), nil for a name no tool has.
func Arguments(name string) []string {
	for _, t := range Definitions() {
		if t.Name == name {
			return argumentNames(t)
		}
	}
	return nil
}

// Accepts says whether the tool takes the argument arg on some server: Arguments', and
// those offered only where the server is configured for them (sign_in, with a page to
// sign in to), which call's in-process server is.
func Accepts(name, arg string) bool {
	s := Server{cfg: Config{SignIn: func(context.Context, string) (string, error) { return "", nil }}}
	for _, t := range s.tools() {
		if t.def.Name == name {
			return slices.Contains(argumentNames(t.def), arg)
		}
	}
	return false
}

func argumentNames(t mcp.Tool) []string {
	required := func(n string) bool { return slices.Contains(t.InputSchema.Required, n) }
	names := slices.Sorted(maps.Keys(t.InputSchema.Properties))
	slices.SortStableFunc(names, func(a, b string) int { // the required ones first
		return cmp.Compare(boolInt(!required(a)), boolInt(!required(b)))
	})
	return names
}

// Usage is the tool's usage line (given), description and arguments as tools/list gives
// them, for a terminal; "" for a name no tool has.
func Usage(name, usage string) string {
	for _, t := range Definitions() {
		if t.Name != name {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Usage: %s\n\n%s\n\nArguments (the input schema tools/list gives):\n", usage, t.Description)
		required := func(n string) bool { return slices.Contains(t.InputSchema.Required, n) }
		for _, n := range argumentNames(t) {
			p, _ := t.InputSchema.Properties[n].(map[string]any)
			req := ""
			if required(n) {
				req = ", required"
			}
			fmt.Fprintf(&b, "  %s (%v%s)\n      %v\n", n, p["type"], req, p["description"])
		}
		return b.String()
	}
	return ""
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

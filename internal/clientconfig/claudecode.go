package clientconfig

// claudeCode is Claude Code (https://code.claude.com/docs/en/mcp): it keeps the person's
// servers in ~/.claude.json (the "user" scope; $CLAUDE_CONFIG_DIR when set) and a
// project's in .mcp.json (the "project" scope), and adds one with its own command,
// claude mcp add [options] NAME -- COMMAND [ARGS...], every option before the name. The
// command is what install runs: ~/.claude.json is Claude Code's own state, rewritten
// while it runs.
var claudeCode = &Client{
	Name:  "claude-code",
	Title: "Claude Code",
	Docs:  "https://code.claude.com/docs/en/mcp",
	Check: "claude mcp list says compass: … ✔ Connected; /mcp inside a session lists it and its tools",
	user: func(e Env) string {
		if d := e.getenv("CLAUDE_CONFIG_DIR"); d != "" {
			return e.join(d, ".claude.json")
		}
		return e.join(e.Home, ".claude.json")
	},
	project: func(e Env) string { return e.join(e.Dir, ".mcp.json") },
	commands: func(s Server, project, force bool) [][]string {
		scope := "user"
		if project {
			scope = "project"
		}
		var cmds [][]string
		if force {
			cmds = append(cmds, []string{"claude", "mcp", "remove", "--scope", scope, s.Name})
		}
		add := []string{"claude", "mcp", "add"}
		for _, k := range sortedKeys(s.Env) {
			add = append(add, "--env", k+"="+s.Env[k])
		}
		// --scope after the variables: --env takes several values, and an option ends them
		// before the name could be read as one more.
		add = append(add, "--scope", scope, s.Name, "--", s.Command)
		return append(cmds, append(add, s.Args...))
	},
}

// Commands are the commands that add s to a client that adds servers with a command of
// its own (Claude Code), the first of them removing an old one when force is set; nil
// for a client whose file install writes.
func (c *Client) Commands(s Server, project, force bool) [][]string {
	if c.commands == nil {
		return nil
	}
	return c.commands(s, project, force)
}

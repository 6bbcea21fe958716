// Package clientconfig knows where each MCP client keeps its list of servers on each
// operating system and in what format, and writes one server into that list, keeping
// every other server and setting of the file as it was.
//
// # Caveats
//
// The places and formats come from each client's documentation, cited beside its entry
// below; where a client's page doesn't say (Claude Desktop on Linux, which has no official
// build; Cline's file, which its docs open from a button), the entry says where it comes
// from instead. Clients change: a test can't ask a client that isn't installed.
package clientconfig

import (
	"os"
	"path"
	"runtime"
	"sort"
	"strings"

	"github.com/compass-mcp/compass-mcp/internal/clientconfig/jsonc"
)

// A Server is what a client starts: an absolute command, its arguments and the variables
// added to its environment, under Name in the client's list.
type Server struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
}

// Env is where the writers look: the operating system (as runtime.GOOS names it), the
// home folder, the environment variables the clients themselves read (APPDATA,
// XDG_CONFIG_HOME, CODEX_HOME), and the project's folder for a project's file. Tests give
// their own; Host is this machine's.
type Env struct {
	OS     string
	Home   string
	Getenv func(string) string
	Dir    string
}

// Host is the Env of this process: its operating system, home folder, environment and
// working folder.
func Host() (Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Env{}, err
	}
	dir, err := os.Getwd()
	if err != nil {
		return Env{}, err
	}
	return Env{OS: runtime.GOOS, Home: home, Getenv: os.Getenv, Dir: dir}, nil
}

func (e Env) getenv(name string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(name)
}

// join joins a path of e's operating system: a Windows path's separators are backslashes
// even when the path is only shown on another system.
func (e Env) join(elem ...string) string {
	if e.OS == "windows" {
		for i := range elem {
			elem[i] = strings.TrimRight(strings.ReplaceAll(elem[i], "/", `\`), `\`)
		}
		return strings.Join(elem, `\`)
	}
	return path.Join(elem...)
}

// configHome is where Linux programs keep settings: $XDG_CONFIG_HOME, else ~/.config.
func (e Env) configHome() string {
	if d := e.getenv("XDG_CONFIG_HOME"); d != "" && path.IsAbs(d) {
		return d
	}
	return e.join(e.Home, ".config")
}

// appData is Windows' roaming application data: %APPDATA%, else the folder it usually is.
func (e Env) appData() string {
	if d := e.getenv("APPDATA"); d != "" {
		return d
	}
	return e.join(e.Home, "AppData", "Roaming")
}

// vscodeUser is VS Code's user folder (of the default profile), on each system.
func (e Env) vscodeUser() string {
	switch e.OS {
	case "darwin":
		return e.join(e.Home, "Library", "Application Support", "Code", "User")
	case "windows":
		return e.join(e.appData(), "Code", "User")
	}
	return e.join(e.configHome(), "Code", "User")
}

// A Client is one MCP client: where it keeps its servers, in what format, and how a
// person sees that a server works in it.
type Client struct {
	Name  string // what install takes: claude-desktop, vscode, ...
	Title string // the client's own name
	Docs  string // the page its format and place are from
	Check string // where the client shows that the server started, and its tools

	user      func(Env) string // the person's file on e.OS
	workspace string           // the variable the client expands to the project's folder in its file, if it has one
	project   func(Env) string // the project's file, or nil when the client has none
	format    format           // nil for a client that adds servers with its own command
	commands  func(s Server, project, force bool) [][]string
}

// UserFile is the client's file for the person on e's system.
func (c *Client) UserFile(e Env) string { return c.user(e) }

// ProjectFile is the client's file for the project in e.Dir, or "" when it has none.
func (c *Client) ProjectFile(e Env) string {
	if c.project == nil {
		return ""
	}
	return c.project(e)
}

// HasProject says whether the client has a file of a project's own.
func (c *Client) HasProject() bool { return c.project != nil }

// File is the client's file for the person, or with project for the project in e.Dir.
func (c *Client) File(e Env, project bool) string {
	if project {
		return c.ProjectFile(e)
	}
	return c.UserFile(e)
}

// command, args, env: the members most clients' entries share, in the order their
// documentation shows them.
func stdioFields(s Server) jsonc.Obj {
	o := jsonc.Obj{{Key: "command", Value: s.Command}}
	if len(s.Args) > 0 {
		o = append(o, jsonc.Field{Key: "args", Value: s.Args})
	}
	if len(s.Env) > 0 {
		o = append(o, jsonc.Field{Key: "env", Value: s.Env})
	}
	return o
}

// Clients are the clients install knows, in the order it lists them.
var Clients = []*Client{
	{
		// https://modelcontextprotocol.io/docs/develop/connect-local-servers: Settings →
		// Developer → Edit Config opens claude_desktop_config.json, in
		// ~/Library/Application Support/Claude on macOS and %APPDATA%\Claude on Windows,
		// with "mcpServers": {NAME: {"command", "args", "env"}}. Claude Desktop reads it with
		// JSON.parse: no comments. It has no Linux build of its own; the community's builds
		// keep the same file in ~/.config/Claude, which is what Linux gets here.
		Name:  "claude-desktop",
		Title: "Claude Desktop",
		Docs:  "https://modelcontextprotocol.io/docs/develop/connect-local-servers",
		Check: "quit Claude Desktop fully and open it again; Settings → Developer lists compass as running (its log is there too), and the tools menu in a chat lists its tools",
		user: func(e Env) string {
			switch e.OS {
			case "darwin":
				return e.join(e.Home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
			case "windows":
				return e.join(e.appData(), "Claude", "claude_desktop_config.json")
			}
			return e.join(e.configHome(), "Claude", "claude_desktop_config.json")
		},
		format: jsonFormat{dialect: jsonc.JSON, key: "mcpServers", entry: stdioFields},
	},
	claudeCode,
	{
		// https://code.visualstudio.com/docs/copilot/reference/mcp-configuration: mcp.json,
		// in the workspace (.vscode/mcp.json) or the user profile (MCP: Open User
		// Configuration), "servers": {NAME: {"type": "stdio", "command", "args", "env"}};
		// the user profile's folder is Code/User under the system's application settings
		// (https://code.visualstudio.com/docs/configure/settings#_settings-file-locations).
		// VS Code reads its settings as JSON with comments and trailing commas.
		Name:    "vscode",
		Title:   "VS Code (GitHub Copilot's agent mode)",
		Docs:    "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
		Check:   "Command Palette → MCP: List Servers → compass: Running, and Show Output for its log; in Copilot Chat's agent mode, the tools button lists compass's tools",
		user:    func(e Env) string { return e.join(e.vscodeUser(), "mcp.json") },
		project: func(e Env) string { return e.join(e.Dir, ".vscode", "mcp.json") },
		// ${workspaceFolder}: the mcp-configuration reference's predefined variables.
		workspace: "${workspaceFolder}",
		format: jsonFormat{dialect: jsonc.JSONC, key: "servers", entry: func(s Server) jsonc.Obj {
			return append(jsonc.Obj{{Key: "type", Value: "stdio"}}, stdioFields(s)...)
		}},
	},
	{
		// https://cursor.com/docs/mcp: ~/.cursor/mcp.json for every project,
		// .cursor/mcp.json in a project, "mcpServers": {NAME: {"command", "args", "env"}}.
		// The page doesn't say comments are allowed: plain JSON here.
		Name:    "cursor",
		Title:   "Cursor",
		Docs:    "https://cursor.com/docs/mcp",
		Check:   "Cursor Settings → Tools & MCP (Customize → MCPs in newer versions): compass switched on with a green dot and its tools listed; the Output panel's MCP Logs say why not",
		user:    func(e Env) string { return e.join(e.Home, ".cursor", "mcp.json") },
		project: func(e Env) string { return e.join(e.Dir, ".cursor", "mcp.json") },
		// ${workspaceFolder}: the page's config interpolation (with ${userHome}, ${env:NAME}).
		workspace: "${workspaceFolder}",
		format:    jsonFormat{dialect: jsonc.JSON, key: "mcpServers", entry: stdioFields},
	},
	{
		// https://docs.windsurf.com/windsurf/cascade/mcp: ~/.codeium/windsurf/mcp_config.json
		// "follows the same schema as the config file for Claude Desktop":
		// "mcpServers": {NAME: {"command", "args", "env"}}; %USERPROFILE% on Windows. No
		// project file.
		Name:   "windsurf",
		Title:  "Windsurf (Cascade)",
		Docs:   "https://docs.windsurf.com/windsurf/cascade/mcp",
		Check:  "in the Cascade panel, the MCPs icon → refresh: compass listed with its tools (Windsurf Settings → Cascade → MCP Servers too)",
		user:   func(e Env) string { return e.join(e.Home, ".codeium", "windsurf", "mcp_config.json") },
		format: jsonFormat{dialect: jsonc.JSON, key: "mcpServers", entry: stdioFields},
	},
	{
		// https://zed.dev/docs/ai/mcp: custom servers in the settings file,
		// "context_servers": {NAME: {"command", "args", "env"}}; the settings file is
		// ~/.config/zed/settings.json ($XDG_CONFIG_HOME/zed on Linux when set), a project's
		// .zed/settings.json (https://zed.dev/docs/configuring-zed), and %APPDATA%\Zed on
		// Windows. Zed reads it as JSON with comments and trailing commas.
		Name:  "zed",
		Title: "Zed",
		Docs:  "https://zed.dev/docs/ai/mcp",
		Check: "Agent panel → settings (Settings → AI → MCP Servers): a green dot beside compass, and its tools in the panel's tools menu",
		user: func(e Env) string {
			switch e.OS {
			case "windows":
				return e.join(e.appData(), "Zed", "settings.json")
			case "darwin":
				return e.join(e.Home, ".config", "zed", "settings.json")
			}
			return e.join(e.configHome(), "zed", "settings.json")
		},
		project: func(e Env) string { return e.join(e.Dir, ".zed", "settings.json") },
		format:  jsonFormat{dialect: jsonc.JSONC, key: "context_servers", entry: stdioFields},
	},
	{
		// https://geminicli.com/docs/tools/mcp-server/ and
		// https://geminicli.com/docs/cli/configuration: ~/.gemini/settings.json, a project's
		// .gemini/settings.json, "mcpServers": {NAME: {"command", "args", "env"}}. Gemini CLI
		// strips comments before JSON.parse (its settings loader uses strip-json-comments),
		// so comments are allowed and trailing commas are not.
		Name:    "gemini",
		Title:   "Gemini CLI",
		Docs:    "https://geminicli.com/docs/tools/mcp-server/",
		Check:   "gemini mcp list says compass … Connected; /mcp inside Gemini CLI lists its tools",
		user:    func(e Env) string { return e.join(e.Home, ".gemini", "settings.json") },
		project: func(e Env) string { return e.join(e.Dir, ".gemini", "settings.json") },
		format:  jsonFormat{dialect: jsonc.Dialect{Comments: true}, key: "mcpServers", entry: stdioFields},
	},
	{
		// https://docs.cline.bot/mcp/configuring-mcp-servers: the servers are in
		// cline_mcp_settings.json ("mcpServers", as Claude Desktop's), which Cline opens from
		// its MCP Servers → Configure button. Its place, in VS Code's global storage for the
		// extension saoudrizwan.claude-dev, is from the pages of other servers that document
		// Cline, not Cline's own. Plain JSON.
		Name:  "cline",
		Title: "Cline (in VS Code)",
		Docs:  "https://docs.cline.bot/mcp/configuring-mcp-servers",
		Check: "Cline's MCP Servers icon → Installed: compass with a green dot and its tools",
		user: func(e Env) string {
			return e.join(e.vscodeUser(), "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")
		},
		format: jsonFormat{dialect: jsonc.JSON, key: "mcpServers", entry: stdioFields},
	},
	{
		// https://developers.openai.com/codex/mcp: ~/.codex/config.toml ($CODEX_HOME when
		// set), or a trusted project's .codex/config.toml, a table [mcp_servers.NAME] with
		// command, args and env (a table of strings), shared by the CLI and the IDE
		// extension.
		Name:  "codex",
		Title: "Codex CLI",
		Docs:  "https://developers.openai.com/codex/mcp",
		Check: "codex mcp list shows compass enabled; /mcp inside Codex lists its tools",
		user: func(e Env) string {
			if d := e.getenv("CODEX_HOME"); d != "" {
				return e.join(d, "config.toml")
			}
			return e.join(e.Home, ".codex", "config.toml")
		},
		project: func(e Env) string { return e.join(e.Dir, ".codex", "config.toml") },
		format:  tomlFormat{},
	},
}

// Lookup is the client named name, or nil.
func Lookup(name string) *Client {
	for _, c := range Clients {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Command bundlecheck starts an unpacked MCP Bundle's server as Claude Desktop would, and
// runs an MCP session against it over stdio: initialize, list the tools, write, read.
//
//	go run ./internal/cmd/bundlecheck DIR me=ana space=check data=/tmp/c.db web=off
//
// DIR is the bundle unpacked (by mcpb unpack); KEY=VALUE are the answers to its install form
// (user_config). The command is the manifest's mcp_config for this machine's platform, with
// ${__dirname}, ${HOME}... and ${user_config.KEY} substituted by mcpb.Manifest.Launch (what
// Claude Desktop's loader does), run in the environment Claude Desktop gives a server: a few
// of its own variables (PATH, HOME...) and the manifest's env, nothing else. .ci/mcpb.sh runs it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/mcpb"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bundlecheck:", err)
		os.Exit(1)
	}
}

// platforms maps GOOS to Node's process.platform, the names manifests use.
var platforms = map[string]string{"darwin": "darwin", "windows": "win32", "linux": "linux"}

// inherited are the variables of its own environment a host passes to a server (those of
// the MCP TypeScript SDK's getDefaultEnvironment, which Claude Desktop uses).
var inherited = map[string][]string{
	"windows": {"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "PROGRAMFILES"},
	"":        {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"},
}

func run(args []string) error {
	if len(args) < 1 {
		return fmt.Errorf("usage: bundlecheck DIR [KEY=VALUE ...]")
	}
	dir, err := filepath.Abs(args[0])
	if err != nil {
		return err
	}
	values := map[string]string{}
	for _, a := range args[1:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("%q is not KEY=VALUE", a)
		}
		values[k] = v
	}
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return err
	}
	var m mcpb.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("manifest.json: %w", err)
	}
	for k := range values {
		if !slices.ContainsFunc(m.UserConfig, func(o mcpb.Option) bool { return o.Key == k }) {
			return fmt.Errorf("the manifest asks nothing called %q", k)
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return err
	}
	system := map[string]string{"HOME": home, "DESKTOP": filepath.Join(home, "Desktop"), "DOCUMENTS": filepath.Join(home, "Documents"), "DOWNLOADS": filepath.Join(home, "Downloads")}
	l, err := m.Launch(dir, platforms[runtime.GOOS], values, system)
	if err != nil {
		return err
	}
	// A variable left unsubstituted would reach the server as written.
	for _, s := range append(append([]string{l.Command}, l.Args...), envList(l.Env)...) {
		if strings.Contains(s, "${") {
			return fmt.Errorf("%q is left with a variable no host would fill in", s)
		}
	}
	keys := inherited[runtime.GOOS]
	if keys == nil {
		keys = inherited[""]
	}
	var env []string
	for _, k := range keys {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, envList(l.Env)...)
	fmt.Fprintf(os.Stderr, "bundlecheck: starting %s %q with %q\n", l.Command, l.Args, envList(l.Env))

	c, err := client.NewStdioMCPClientWithOptions(l.Command, env, l.Args, transport.WithCommandFunc(
		func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = env // exactly, not added to this process's
			cmd.Stderr = os.Stderr
			return cmd, nil
		}))
	if err != nil {
		return fmt.Errorf("starting the bundle's server: %w", err)
	}
	defer c.Close()
	if err := session(c, m, values["me"]); err != nil {
		return err
	}
	// The document is in the data file and the space the form named, as the person's
	// command line (given them as flags, in an environment without the manifest's) sees.
	if values["data"] != "" && values["space"] != "" {
		cmd := exec.Command(l.Command, "docs", "list", "--data", values["data"], "--space", values["space"], "--for", values["me"])
		cmd.Env = env[:len(env)-len(l.Env)]
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Bundle check") {
			return fmt.Errorf("compass-mcp docs list --data %s --space %s: %v\n%s", values["data"], values["space"], err, out)
		}
	}
	fmt.Fprintln(os.Stderr, "bundlecheck: initialize, tools/list, write_document and read_document answered as they should")
	return nil
}

// session is what a person's first minute with the bundle does.
func session(c *client.Client, m mcpb.Manifest, me string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "claude-ai", Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if res.ServerInfo.Name != "compass-mcp" || res.ServerInfo.Version != m.Version {
		return fmt.Errorf("initialize: the server is %s %s; the manifest says compass-mcp %s", res.ServerInfo.Name, res.ServerInfo.Version, m.Version)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	var served, listed []string
	for _, t := range tools.Tools {
		served = append(served, t.Name)
	}
	for _, t := range m.Tools {
		listed = append(listed, t.Name)
	}
	slices.Sort(served)
	slices.Sort(listed)
	if !slices.Equal(served, listed) {
		return fmt.Errorf("the server offers the tools %q; the manifest lists %q", served, listed)
	}
	text := "Checked by .ci/mcpb.sh at " + time.Now().UTC().Format(time.RFC3339Nano)
	call := func(tool string, args map[string]any) (string, error) {
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			return "", fmt.Errorf("%s: %w", tool, err)
		}
		var b strings.Builder
		for _, content := range res.Content {
			if tc, ok := content.(mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			return "", fmt.Errorf("%s answered an error: %s", tool, b.String())
		}
		return b.String(), nil
	}
	saved, err := call("write_document", map[string]any{"title": "Bundle check", "text": text})
	if err != nil {
		return err
	}
	if !strings.HasPrefix(saved, "Saved [Bundle check]") {
		return fmt.Errorf("write_document answered %q", saved)
	}
	read, err := call("read_document", map[string]any{"document": "Bundle check"})
	if err != nil {
		return err
	}
	if !strings.Contains(read, text) || !strings.Contains(read, "saved by claude-ai for "+me) {
		return fmt.Errorf("read_document answered %q: want the text written, saved by claude-ai for %s", read, me)
	}
	return nil
}

func envList(env map[string]string) []string {
	var l []string
	for k, v := range env {
		l = append(l, k+"="+v)
	}
	slices.Sort(l)
	return l
}

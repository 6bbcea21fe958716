package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/clientconfig/jsonc"
)

var (
	testServer = Server{Name: "compass", Command: "/opt/compass/bin/compass-mcp", Args: []string{"serve"},
		Env: map[string]string{"COMPASS_ME": "ana", "COMPASS_SPACE": "team", "COMPASS_DATA": `/home/ana/My "data"\compass.db`}}
	now = time.Date(2026, 12, 1, 15, 4, 5, 0, time.UTC)
)

func testEnv(t *testing.T) Env {
	home := t.TempDir()
	vars := map[string]string{"XDG_CONFIG_HOME": filepath.Join(home, ".config")}
	return Env{OS: "linux", Home: home, Getenv: func(k string) string { return vars[k] }, Dir: filepath.Join(home, "project")}
}

func fileClients() []*Client {
	var cs []*Client
	for _, c := range Clients {
		if c.format != nil {
			cs = append(cs, c)
		}
	}
	return cs
}

func fixture(t *testing.T, c *Client) []byte {
	t.Helper()
	ext := ".json"
	if _, ok := c.format.(tomlFormat); ok {
		ext = ".toml"
	}
	b, err := os.ReadFile(filepath.Join("testdata", c.Name+ext))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decode reads src as c does: JSON through encoding/json (its comments and trailing
// commas stripped first where c allows them), TOML through the package's reader.
func decode(t *testing.T, c *Client, src []byte) (doc map[string]any, servers map[string]any) {
	t.Helper()
	key := "mcp_servers"
	switch f := c.format.(type) {
	case jsonFormat:
		key = f.key
		if f.dialect.Comments || f.dialect.TrailingCommas {
			src = stripJSONC(src)
		}
		if err := json.Unmarshal(src, &doc); err != nil {
			t.Fatalf("%s: not JSON: %v\n%s", c.Name, err, src)
		}
	case tomlFormat:
		d, err := parseTOML(src)
		if err != nil {
			t.Fatalf("%s: not TOML: %v\n%s", c.Name, err, src)
		}
		doc = d.root
	}
	servers, _ = doc[key].(map[string]any)
	return doc, servers
}

func wantEntry(c *Client, s Server) map[string]any {
	env := map[string]any{}
	for k, v := range s.Env {
		env[k] = v
	}
	var args []any
	for _, a := range s.Args {
		args = append(args, a)
	}
	m := map[string]any{"command": s.Command, "args": args, "env": env}
	if c.Name == "vscode" {
		m["type"] = "stdio"
	}
	return m
}

// sameOthers checks that every top-level member, and every server, of before but s.Name
// is in after with the same bytes (JSON) or after begins with before (TOML, which gets the
// new table at its end).
func sameOthers(t *testing.T, c *Client, before, after []byte, name string) {
	t.Helper()
	f, ok := c.format.(jsonFormat)
	if !ok {
		if a, b := withoutTOMLServer(t, before, name), withoutTOMLServer(t, after, name); !bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b)) {
			t.Errorf("%s: apart from %s, the file was\n%s\nand is\n%s", c.Name, name, a, b)
		}
		return
	}
	b, err := jsonc.Parse(before, f.dialect)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range b.Members {
		if m.Key != f.key {
			raw(t, c, before, after, []string{m.Key})
			continue
		}
		for _, s := range m.Value.Members {
			if s.Key != name {
				raw(t, c, before, after, []string{f.key, s.Key})
			}
		}
	}
	// Every comment stays.
	for _, line := range strings.Split(string(before), "\n") {
		if i := strings.Index(line, "//"); i >= 0 && !strings.Contains(line, "://") || strings.Contains(line, "/*") {
			if !bytes.Contains(after, []byte(strings.TrimSpace(line[strings.Index(line, "/"):]))) {
				t.Errorf("%s: the comment in %q is gone", c.Name, line)
			}
		}
	}
}

// withoutTOMLServer is src without the sections of [mcp_servers.NAME].
func withoutTOMLServer(t *testing.T, src []byte, name string) []byte {
	doc, err := parseTOML(src)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte{}, src...)
	for i := len(doc.headers) - 1; i >= 0; i-- {
		h := doc.headers[i]
		if len(h.keys) >= 2 && h.keys[0] == "mcp_servers" && h.keys[1] == name {
			end := len(src)
			if i+1 < len(doc.headers) {
				end = doc.headers[i+1].start
			}
			out = append(out[:h.start], out[end:]...)
		}
	}
	return out
}

func raw(t *testing.T, c *Client, before, after []byte, path []string) {
	t.Helper()
	d := c.format.(jsonFormat).dialect
	a, err := jsonc.Lookup(before, d, path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := jsonc.Lookup(after, d, path)
	if err != nil || b == nil {
		t.Fatalf("%s: %v is gone (%v)", c.Name, path, err)
	}
	if !bytes.Equal(before[a.Start:a.End], after[b.Start:b.End]) {
		t.Errorf("%s: %v was\n%s\nand is\n%s", c.Name, path, before[a.Start:a.End], after[b.Start:b.End])
	}
}

// Each client's file, holding other servers, settings and (where its format has them)
// comments, gets the server, keeps the rest byte for byte, and the old file beside it.
func TestInstallOverAFixture(t *testing.T) {
	for _, c := range fileClients() {
		t.Run(c.Name, func(t *testing.T) {
			e := testEnv(t)
			file := c.UserFile(e)
			old := fixture(t, c)
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, old, 0o640); err != nil {
				t.Fatal(err)
			}
			ch, err := c.Prepare(e, false, testServer, false)
			if err != nil {
				t.Fatal(err)
			}
			if ch.File != file || ch.Replaced || !bytes.Equal(ch.Old, old) {
				t.Fatalf("change %+v", ch)
			}
			backup, err := ch.Write(now)
			if err != nil {
				t.Fatal(err)
			}
			if backup != file+".bak-20261201-150405" {
				t.Errorf("backup %s", backup)
			}
			if b, _ := os.ReadFile(backup); !bytes.Equal(b, old) {
				t.Errorf("the backup is not the old file")
			}
			got, _ := os.ReadFile(file)
			if !bytes.Equal(got, ch.New) {
				t.Fatalf("the file is not what Prepare said it would be")
			}
			if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want the old file's 0640", fi.Mode())
			}
			doc, servers := decode(t, c, got)
			if !reflect.DeepEqual(servers["compass"], wantEntry(c, testServer)) {
				t.Errorf("compass reads %#v", servers["compass"])
			}
			oldDoc, oldServers := decode(t, c, old)
			for k, v := range oldServers {
				if !reflect.DeepEqual(servers[k], v) {
					t.Errorf("server %s changed", k)
				}
			}
			delete(servers, "compass")
			if !reflect.DeepEqual(doc, oldDoc) {
				t.Errorf("the rest of the file reads differently:\n%v\n%v", doc, oldDoc)
			}
			sameOthers(t, c, old, got, "compass")

			// Again: the same entry is already set up, the file unchanged; another one is
			// refused, saying what is there, and replaced only with force.
			same, err := c.Prepare(e, false, testServer, false)
			if err != nil || !same.Unchanged() {
				t.Fatalf("the same install again: %v", err)
			}
			changed := testServer
			changed.Env = map[string]string{"COMPASS_ME": "bo"}
			_, err = c.Prepare(e, false, changed, false)
			var exists *ExistsError
			if !errors.As(err, &exists) || exists.File != file || exists.Line == 0 || !strings.Contains(exists.Entry, "compass-mcp") {
				t.Fatalf("a second install: %v", err)
			}
			other := testServer
			other.Env = map[string]string{"COMPASS_SPACE": "other"}
			ch, err = c.Prepare(e, false, other, true)
			if err != nil || !ch.Replaced {
				t.Fatalf("with force: %v %+v", err, ch)
			}
			if _, err := ch.Write(now); err != nil {
				t.Fatal(err)
			}
			again, _ := os.ReadFile(file)
			_, servers = decode(t, c, again)
			if !reflect.DeepEqual(servers["compass"], wantEntry(c, other)) {
				t.Errorf("replaced compass reads %#v", servers["compass"])
			}
			if len(servers) != len(oldServers)+1 {
				t.Errorf("%d servers after replacing, want %d", len(servers), len(oldServers)+1)
			}
			sameOthers(t, c, got, again, "compass")
			if b, _ := os.ReadFile(file + ".bak-20261201-150405-2"); !bytes.Equal(b, got) {
				t.Errorf("the second backup is not the file before it")
			}
		})
	}
}

// A new file is a snippet: the server alone. Made with its folders, the person's alone.
func TestInstallWithoutAFile(t *testing.T) {
	for _, c := range fileClients() {
		for _, project := range []bool{false, true} {
			if project && !c.HasProject() {
				if _, err := c.Prepare(testEnv(t), true, testServer, false); !errors.Is(err, ErrNoProjectFile) {
					t.Errorf("%s --project: %v", c.Name, err)
				}
				continue
			}
			e := testEnv(t)
			ch, err := c.Prepare(e, project, testServer, false)
			if err != nil {
				t.Fatal(err)
			}
			if project && !strings.HasPrefix(ch.File, e.Dir+string(filepath.Separator)) {
				t.Errorf("%s: a project's file at %s", c.Name, ch.File)
			}
			backup, err := ch.Write(now)
			if err != nil || backup != "" {
				t.Fatalf("%s: %v, backup %q", c.Name, err, backup)
			}
			got, _ := os.ReadFile(ch.File)
			_, servers := decode(t, c, got)
			if !reflect.DeepEqual(servers["compass"], wantEntry(c, testServer)) {
				t.Errorf("%s: compass reads %#v", c.Name, servers["compass"])
			}
			want, wantDir := os.FileMode(0o600), os.FileMode(0o700)
			if project { // a team's file: the usual modes
				want, wantDir = 0o644, 0o755
			}
			if fi, _ := os.Stat(ch.File); fi.Mode().Perm() != want {
				t.Errorf("%s: a new file's mode is %v", c.Name, fi.Mode())
			}
			if fi, _ := os.Stat(filepath.Dir(ch.File)); fi.Mode().Perm() != wantDir {
				t.Errorf("%s: a new folder's mode is %v", c.Name, fi.Mode())
			}
		}
	}
}

// A file the client couldn't read is refused with its line, and never written.
func TestMalformedFilesAreLeftAlone(t *testing.T) {
	for _, c := range fileClients() {
		old := fixture(t, c)
		lines := strings.SplitAfter(string(old), "\n")
		broken := map[string]string{}
		if _, ok := c.format.(tomlFormat); ok {
			broken["line 3"] = strings.Join(lines[:2], "") + "oops =\n" + strings.Join(lines[2:], "")
			broken["mcp_servers.context7 is defined twice"] = strings.Join(lines[:3], "") + "[mcp_servers.context7]\n" + strings.Join(lines[3:], "")
		} else {
			broken["line 3"] = strings.Join(lines[:2], "") + `"oops" "no colon",` + "\n" + strings.Join(lines[2:], "")
			if !c.format.(jsonFormat).dialect.Comments {
				broken["comment"] = strings.Join(lines[:1], "") + "// a comment\n" + strings.Join(lines[1:], "")
			}
		}
		for want, src := range broken {
			e := testEnv(t)
			file := c.UserFile(e)
			os.MkdirAll(filepath.Dir(file), 0o755)
			os.WriteFile(file, []byte(src), 0o644)
			_, err := c.Prepare(e, false, testServer, true)
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), file) {
				t.Errorf("%s, %s: %v", c.Name, want, err)
			}
			if got, _ := os.ReadFile(file); string(got) != src {
				t.Errorf("%s: the file changed", c.Name)
			}
		}
	}
}

// The places, on each system, as the clients' documentation gives them.
func TestWhereEachClientLooks(t *testing.T) {
	envs := map[string]Env{
		"linux":   {OS: "linux", Home: "/home/ana", Dir: "/src/app"},
		"darwin":  {OS: "darwin", Home: "/Users/ana", Dir: "/src/app"},
		"windows": {OS: "windows", Home: `C:\Users\ana`, Dir: `C:\src\app`, Getenv: func(k string) string { return map[string]string{"APPDATA": `C:\Users\ana\AppData\Roaming`}[k] }},
	}
	want := map[string]map[string]string{
		"claude-desktop": {"linux": "/home/ana/.config/Claude/claude_desktop_config.json", "darwin": "/Users/ana/Library/Application Support/Claude/claude_desktop_config.json", "windows": `C:\Users\ana\AppData\Roaming\Claude\claude_desktop_config.json`},
		"claude-code":    {"linux": "/home/ana/.claude.json", "darwin": "/Users/ana/.claude.json", "windows": `C:\Users\ana\.claude.json`},
		"vscode":         {"linux": "/home/ana/.config/Code/User/mcp.json", "darwin": "/Users/ana/Library/Application Support/Code/User/mcp.json", "windows": `C:\Users\ana\AppData\Roaming\Code\User\mcp.json`},
		"cursor":         {"linux": "/home/ana/.cursor/mcp.json", "darwin": "/Users/ana/.cursor/mcp.json", "windows": `C:\Users\ana\.cursor\mcp.json`},
		"windsurf":       {"linux": "/home/ana/.codeium/windsurf/mcp_config.json", "darwin": "/Users/ana/.codeium/windsurf/mcp_config.json", "windows": `C:\Users\ana\.codeium\windsurf\mcp_config.json`},
		"zed":            {"linux": "/home/ana/.config/zed/settings.json", "darwin": "/Users/ana/.config/zed/settings.json", "windows": `C:\Users\ana\AppData\Roaming\Zed\settings.json`},
		"gemini":         {"linux": "/home/ana/.gemini/settings.json", "darwin": "/Users/ana/.gemini/settings.json", "windows": `C:\Users\ana\.gemini\settings.json`},
		"cline":          {"linux": "/home/ana/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json", "darwin": "/Users/ana/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json", "windows": `C:\Users\ana\AppData\Roaming\Code\User\globalStorage\saoudrizwan.claude-dev\settings\cline_mcp_settings.json`},
		"codex":          {"linux": "/home/ana/.codex/config.toml", "darwin": "/Users/ana/.codex/config.toml", "windows": `C:\Users\ana\.codex\config.toml`},
	}
	project := map[string]string{"vscode": ".vscode/mcp.json", "cursor": ".cursor/mcp.json", "zed": ".zed/settings.json", "gemini": ".gemini/settings.json", "codex": ".codex/config.toml", "claude-code": ".mcp.json"}
	if len(want) != len(Clients) {
		t.Fatalf("%d clients, %d expected", len(Clients), len(want))
	}
	for _, c := range Clients {
		for os, e := range envs {
			if got := c.UserFile(e); got != want[c.Name][os] {
				t.Errorf("%s on %s: %s, want %s", c.Name, os, got, want[c.Name][os])
			}
		}
		p := c.ProjectFile(envs["linux"])
		if project[c.Name] == "" && p != "" || project[c.Name] != "" && p != "/src/app/"+project[c.Name] {
			t.Errorf("%s: project file %q", c.Name, p)
		}
		if w := c.ProjectFile(envs["windows"]); project[c.Name] != "" && w != `C:\src\app\`+strings.ReplaceAll(project[c.Name], "/", `\`) {
			t.Errorf("%s: project file on windows %q", c.Name, w)
		}
	}
	e := envs["linux"]
	e.Getenv = func(k string) string {
		return map[string]string{"XDG_CONFIG_HOME": "/xdg", "CODEX_HOME": "/codex", "CLAUDE_CONFIG_DIR": "/cc"}[k]
	}
	for name, w := range map[string]string{"zed": "/xdg/zed/settings.json", "vscode": "/xdg/Code/User/mcp.json", "codex": "/codex/config.toml", "claude-code": "/cc/.claude.json", "cursor": "/home/ana/.cursor/mcp.json"} {
		if got := Lookup(name).UserFile(e); got != w {
			t.Errorf("%s with its variables set: %s, want %s", name, got, w)
		}
	}
}

// A file saved by the client between reading and writing is not overwritten.
func TestWriteRefusesAChangedFile(t *testing.T) {
	c := Lookup("cursor")
	e := testEnv(t)
	ch, err := c.Prepare(e, false, testServer, false)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(ch.File), 0o755)
	os.WriteFile(ch.File, []byte(`{"mcpServers": {}}`), 0o644)
	if _, err := ch.Write(now); !errors.Is(err, ErrChanged) {
		t.Fatalf("%v", err)
	}
	if b, _ := os.ReadFile(ch.File); string(b) != `{"mcpServers": {}}` {
		t.Errorf("the file changed: %s", b)
	}
}

// A settings file that is a link (to a dotfiles repository) stays a link; the file it
// names gets the change.
func TestWriteFollowsALink(t *testing.T) {
	c := Lookup("zed")
	e := testEnv(t)
	real := filepath.Join(e.Home, "dotfiles", "zed.json")
	os.MkdirAll(filepath.Dir(real), 0o755)
	os.WriteFile(real, fixture(t, c), 0o644)
	file := c.UserFile(e)
	os.MkdirAll(filepath.Dir(file), 0o755)
	if err := os.Symlink(real, file); err != nil {
		t.Fatal(err)
	}
	ch, err := c.Prepare(e, false, testServer, false)
	if err != nil {
		t.Fatal(err)
	}
	backup, err := ch.Write(now)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is gone: %v", err)
	}
	if b, _ := os.ReadFile(real); !bytes.Equal(b, ch.New) {
		t.Errorf("the linked file didn't change")
	}
	if backup != real+".bak-20261201-150405" {
		t.Errorf("backup %s", backup)
	}
}

func TestClaudeCodeCommands(t *testing.T) {
	c := Lookup("claude-code")
	s := Server{Name: "compass", Command: "/bin/compass-mcp", Args: []string{"serve"}, Env: map[string]string{"COMPASS_SPACE": "team", "COMPASS_ME": "ana"}}
	got := c.Commands(s, true, true)
	want := [][]string{
		{"claude", "mcp", "remove", "--scope", "project", "compass"},
		{"claude", "mcp", "add", "--env", "COMPASS_ME=ana", "--env", "COMPASS_SPACE=team", "--scope", "project", "compass", "--", "/bin/compass-mcp", "serve"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
	if got := c.Commands(s, false, false); len(got) != 1 || got[0][len(got[0])-5] != "user" {
		t.Errorf("user scope: %q", got)
	}
	if _, err := c.Prepare(testEnv(t), false, s, false); err == nil {
		t.Error("Prepare wrote a file for Claude Code")
	}
}

// stripJSONC turns JSONC into JSON, apart from package jsonc's parser: comments become
// spaces, a comma before a closing bracket goes.
func stripJSONC(src []byte) []byte {
	out := make([]byte, 0, len(src))
	lastComma := -1
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			out = append(out, src[i:min(j+1, len(src))]...)
			i = j
			lastComma = -1
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				return append(out, src[i:]...)
			}
			out = append(out, ' ')
			i += 2 + end + 1
		case c == ',':
			lastComma = len(out)
			out = append(out, c)
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma = -1
			out = append(out, c)
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			out = append(out, c)
		default:
			lastComma = -1
			out = append(out, c)
		}
	}
	return out
}

// Every client's file as tools write it, compact (JSON.stringify's one line) or pretty,
// with or without servers, gets the server and keeps the rest.
func TestInstallIntoEveryShape(t *testing.T) {
	for _, c := range fileClients() {
		var shapes []string
		if _, ok := c.format.(tomlFormat); ok {
			shapes = []string{"model = \"o3\"\n", "[mcp_servers.ws]\ncommand = \"ws-mcp\"\n", "mcp_servers.ws.command = \"ws-mcp\"\n", "[mcp_servers]\nws = { command = \"ws-mcp\" }\n", ""}
		} else {
			key := c.format.(jsonFormat).key
			var compact bytes.Buffer
			if err := json.Compact(&compact, stripJSONC(fixture(t, c))); err != nil {
				t.Fatal(err)
			}
			shapes = []string{`{"x":1}`, `{}`, `{"` + key + `":{}}`, `{"` + key + `":{"ws":{"command":"ws-mcp"}}}`,
				`{"x":[1,{"y":null}],"` + key + `":{"ws":{"command":"ws-mcp","args":["a"]}},"z":"}"}`, compact.String(),
				"{\n  \"" + key + "\": {\n    \"ws\": {\"command\": \"ws-mcp\"}\n  }\n}\n"}
		}
		for _, shape := range shapes {
			e := testEnv(t)
			file := c.UserFile(e)
			os.MkdirAll(filepath.Dir(file), 0o755)
			os.WriteFile(file, []byte(shape), 0o644)
			ch, err := c.Prepare(e, false, testServer, false)
			if err != nil {
				t.Errorf("%s, %q: %v", c.Name, shape, err)
				continue
			}
			_, servers := decode(t, c, ch.New)
			if !reflect.DeepEqual(servers["compass"], wantEntry(c, testServer)) {
				t.Errorf("%s, %q: compass reads %#v", c.Name, shape, servers["compass"])
			}
			if shape != "" {
				sameOthers(t, c, []byte(shape), ch.New, "compass")
			}
		}
	}
}

// A client that saves its file between install's reading and writing keeps its change:
// install sees the file changed, reads it again and writes both.
func TestInstallKeepsTheClientsSave(t *testing.T) {
	c := Lookup("cursor")
	e := testEnv(t)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(e.Home, ".cache"))
	file := c.UserFile(e)
	os.MkdirAll(filepath.Dir(file), 0o755)
	os.WriteFile(file, []byte(`{"mcpServers":{}}`), 0o644)
	saves := 0
	testHookBeforeWrite = func(f string) {
		if saves++; saves <= 2 { // twice: the second read is raced too
			os.WriteFile(f, []byte(fmt.Sprintf(`{"mcpServers":{},"saved":%d}`, saves)), 0o644)
		}
	}
	defer func() { testHookBeforeWrite = nil }()
	var out bytes.Buffer
	if err := c.Install(e, testServer, false, false, false, now, &out, &out); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	doc, servers := decode(t, c, b)
	if doc["saved"] != float64(2) || servers["compass"] == nil {
		t.Errorf("after the client's saves:\n%s", b)
	}
	// A client that never stops saving: install gives up, and says so.
	saves = -100
	other := testServer
	other.Name = "other"
	if err := c.Install(e, other, false, false, false, now, &out, &out); !errors.Is(err, ErrChanged) {
		t.Errorf("a file that keeps changing: %v", err)
	}
}

// A project's file is the team's: the command by its name when PATH finds this one, a
// data file in the project from the project's folder where the client has a variable for
// it, and a note for what stays this machine's.
func TestPortableProjectFiles(t *testing.T) {
	bin := t.TempDir()
	cmd := filepath.Join(bin, "compass-mcp")
	if err := os.WriteFile(cmd, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e := testEnv(t)
	s := Server{Name: "compass", Command: cmd, Args: []string{"serve"},
		Env: map[string]string{"COMPASS_DATA": filepath.Join(e.Dir, "data", "team.db"), "COMPASS_SPACE": "launch"}}

	t.Setenv("PATH", bin)
	got, notes := Lookup("vscode").Portable(s, e)
	if got.Command != "compass-mcp" || got.Env["COMPASS_DATA"] != "${workspaceFolder}/data/team.db" || got.Env["COMPASS_SPACE"] != "launch" || len(notes) != 0 {
		t.Errorf("vscode: %+v %q", got, notes)
	}
	if s.Command != cmd || s.Env["COMPASS_DATA"] != filepath.Join(e.Dir, "data", "team.db") {
		t.Error("Portable changed the server it was given")
	}
	got, notes = Lookup("zed").Portable(s, e)
	if got.Command != "compass-mcp" || got.Env["COMPASS_DATA"] != s.Env["COMPASS_DATA"] || len(notes) != 1 || !strings.Contains(notes[0], "no variable for the project's folder") {
		t.Errorf("zed: %+v %q", got, notes)
	}
	outside := s
	outside.Env = map[string]string{"COMPASS_DATA": filepath.Join(e.Home, "mine.db"), "COMPASS_ME": "ana"}
	t.Setenv("PATH", t.TempDir()) // another compass-mcp, or none, on PATH: the path stays
	got, notes = Lookup("cursor").Portable(outside, e)
	if got.Command != cmd || got.Env["COMPASS_DATA"] != outside.Env["COMPASS_DATA"] || len(notes) != 3 ||
		!strings.Contains(notes[0], "not on PATH") || !strings.Contains(notes[1], "outside the project") || !strings.Contains(notes[2], "--for ana") {
		t.Errorf("cursor, nothing portable: %+v %q", got, notes)
	}
	pg := s
	pg.Env = map[string]string{"COMPASS_DATA": "postgres://team@10.0.0.1/compass"}
	if got, notes = Lookup("vscode").Portable(pg, e); got.Env["COMPASS_DATA"] != pg.Env["COMPASS_DATA"] {
		t.Errorf("a URL: %+v %q", got, notes)
	}

	// Install writes it so, and says what isn't portable.
	t.Setenv("PATH", bin)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(e.Home, ".cache"))
	var out, errs bytes.Buffer
	if err := Lookup("vscode").Install(e, s, true, false, false, now, &out, &errs); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(e.Dir, ".vscode", "mcp.json"))
	if !bytes.Contains(b, []byte(`"command": "compass-mcp"`)) || !bytes.Contains(b, []byte(`"COMPASS_DATA": "${workspaceFolder}/data/team.db"`)) || bytes.Contains(b, []byte(e.Home)) || errs.Len() != 0 {
		t.Errorf("the project's file:\n%s\n%s", b, errs.String())
	}
}

package mcpb

import (
	"encoding/json"
	"slices"
	"testing"
)

// A manifest as a host gets it, using each rule of Claude Desktop's loader once.
const sample = `{
  "manifest_version": "0.3", "name": "x", "version": "1.0.0", "description": "d", "author": {"name": "a"},
  "server": {"type": "binary", "entry_point": "server/x", "mcp_config": {
    "command": "${__dirname}/server/x",
    "args": ["--dir", "${user_config.dir}", "${user_config.empty}", "${user_config.unset}", "${HOME}${/}notes", "--n=${user_config.n}"],
    "env": {"EMPTY": "${user_config.empty}", "FLAG": "${user_config.flag}", "NAME": "${user_config.name}"},
    "platform_overrides": {"win32": {"command": "${__dirname}\\server\\x.exe", "env": {"ONLY": "windows"}}}
  }},
  "user_config": {
    "name": {"type": "string", "title": "Name", "description": "", "required": true},
    "dir": {"type": "directory", "title": "Dir", "description": "", "default": "/default"},
    "empty": {"type": "string", "title": "Empty", "description": "", "default": ""},
    "unset": {"type": "string", "title": "Unset", "description": ""},
    "n": {"type": "number", "title": "N", "description": "", "default": 10},
    "flag": {"type": "boolean", "title": "Flag", "description": "", "default": true}
  }
}`

func TestLaunch(t *testing.T) {
	var m Manifest
	if err := json.Unmarshal([]byte(sample), &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range m.UserConfig {
		keys = append(keys, o.Key)
	}
	if !slices.Equal(keys, []string{"name", "dir", "empty", "unset", "n", "flag"}) {
		t.Errorf("user_config read in the order %q, not the manifest's", keys)
	}

	l, err := m.Launch("/ext", "darwin", map[string]string{"name": "ana", "dir": "/chosen"}, map[string]string{"HOME": "/Users/ana"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Command != "/ext/server/x" {
		t.Errorf("command %q", l.Command)
	}
	wantArgs := []string{"--dir", "/chosen", "${user_config.empty}", "${user_config.unset}", "/Users/ana/notes", "--n=10"}
	if !slices.Equal(l.Args, wantArgs) {
		t.Errorf("args\n%q, want\n%q", l.Args, wantArgs)
	}
	if l.Env["EMPTY"] != "" || l.Env["FLAG"] != "true" || l.Env["NAME"] != "ana" || len(l.Env) != 3 {
		t.Errorf("env %q", l.Env)
	}

	w, err := m.Launch(`C:\ext`, "win32", map[string]string{"name": "ana"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.Command != `C:\ext\server\x.exe` || w.Env["ONLY"] != "windows" || len(w.Env) != 1 || w.Args[1] != "/default" {
		t.Errorf("on win32: %q %q %q (the override replaces command and env whole, args stay)", w.Command, w.Args, w.Env)
	}

	if _, err := m.Launch("/ext", "linux", map[string]string{"name": ""}, nil); err == nil {
		t.Error("a required option given as empty started the server")
	}
}

func TestUserConfigKeepsOrder(t *testing.T) {
	uc := UserConfig{{Key: "z", Type: "string", Title: "Z", Description: "z"}, {Key: "a", Type: "number", Title: "A", Description: "a", Default: 3}}
	b, err := json.Marshal(uc)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"z":{"type":"string","title":"Z","description":"z"},"a":{"type":"number","title":"A","description":"a","default":3}}`; string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
}

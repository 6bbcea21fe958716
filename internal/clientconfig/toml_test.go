package clientconfig

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestTOMLValues(t *testing.T) {
	src := `# a comment
title = "TOML \"ex\" \u00e9"
path = 'C:\Users\ana'
lines = """
one\
   two"""
raw = '''
a\n'''
ints = [1_000, -3, 0x1F, 0o7, 0b10, +4]
floats = [1.5, -2e3, 6.02e+23, inf, -inf]
when = 1979-05-27T07:32:00Z
day = 1979-05-27
clock = 07:32:00.5
spaced = 1979-05-27 07:32:00
multi = [
  "a", # first
  "b",
]
inline = { x = 1, y.z = "w" }
"quoted key" = true
a.b.c = false

[server."with dots"]
name = "x"

[[fruit]]
name = "apple"
[fruit.color]
red = true
[[fruit]]
name = "pear"
`
	doc, err := parseTOML([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"title": `TOML "ex" é`, "path": `C:\Users\ana`, "lines": "onetwo", "raw": `a\n`,
		"ints": []any{int64(1000), int64(-3), int64(31), int64(7), int64(2), int64(4)},
		"when": "1979-05-27T07:32:00Z", "day": "1979-05-27", "clock": "07:32:00.5", "spaced": "1979-05-27 07:32:00",
		"multi":      []any{"a", "b"},
		"inline":     map[string]any{"x": int64(1), "y": map[string]any{"z": "w"}},
		"quoted key": true,
		"a":          map[string]any{"b": map[string]any{"c": false}},
		"server":     map[string]any{"with dots": map[string]any{"name": "x"}},
		"fruit":      []any{map[string]any{"name": "apple", "color": map[string]any{"red": true}}, map[string]any{"name": "pear"}},
	}
	floats := doc.root["floats"].([]any)
	delete(doc.root, "floats")
	if !reflect.DeepEqual(doc.root, want) {
		t.Errorf("got %#v", doc.root)
	}
	if floats[0] != 1.5 || floats[1] != -2000.0 || floats[2] != 6.02e23 || !math.IsInf(floats[3].(float64), 1) || !math.IsInf(floats[4].(float64), -1) {
		t.Errorf("floats %v", floats)
	}
}

func TestTOMLErrors(t *testing.T) {
	for src, want := range map[string]string{
		"a = 1\na = 2":                      "line 2, column 1: the key a is defined twice",
		"[t]\n[t]":                          "line 2, column 3: the table t is defined twice",
		"a = \"open":                        "line 1, column 5: a string not closed",
		"a = 1 b = 2":                       "line 1, column 7",
		"x = { a = 1 }\n[x.b]":              "inline table",
		"a = [1 2]":                         "commas",
		"p = \"C:\\xyz\"":                   "'single quotes'",
		"a = nope":                          `"nope" is not a TOML value`,
		"[a]\nb = 1\n[a.b]":                 "a value",
		"a = " + strings.Repeat("[", 200):   "nested more than",
		"k =\n":                             "where a value should be",
		"[mcp_servers]\ncompass = { }\n[x]": "",
	} {
		_, err := parseTOML([]byte(src))
		if want == "" {
			if err != nil {
				t.Errorf("%q: %v", src, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", src, err, want)
		}
	}
	// A server written inline is there, but not as a table install can replace.
	_, _, err := tomlFormat{}.set([]byte("[mcp_servers]\ncompass = { command = \"x\" }\n"), testServer, true)
	if err == nil || !strings.Contains(err.Error(), "inline") {
		t.Errorf("inline server: %v", err)
	}
	_, _, err = tomlFormat{}.set([]byte("mcp_servers = 3\n"), testServer, true)
	if err == nil || !strings.Contains(err.Error(), "not a table") {
		t.Errorf("mcp_servers a number: %v", err)
	}
}

// go test -fuzz=FuzzTOMLSet ./clientconfig
//
// Any file either is refused, or gets the server in a file that reads back, with every
// byte before the server's place kept.
func FuzzTOMLSet(f *testing.F) {
	b, _ := os.ReadFile(filepath.Join("testdata", "codex.toml"))
	f.Add(b, false)
	f.Add([]byte("[mcp_servers.compass]\ncommand = \"old\"\n[mcp_servers.compass.env]\nA = \"1\"\n[other]\nx = 1\n"), true)
	f.Add([]byte("a = '''\n[mcp_servers.compass]\n'''\r\n"), true)
	f.Fuzz(func(t *testing.T, src []byte, force bool) {
		out, _, err := tomlFormat{}.set(src, testServer, force)
		if err != nil {
			return
		}
		if err := checkTOML(out, testServer); err != nil {
			t.Fatal(err)
		}
		doc, _ := parseTOML(src)
		keep := len(src)
		for _, h := range doc.headers {
			if len(h.keys) >= 2 && h.keys[0] == "mcp_servers" && h.keys[1] == testServer.Name {
				keep = h.start
				break
			}
		}
		if string(out[:keep]) != string(src[:keep]) {
			t.Fatalf("bytes before the server changed")
		}
	})
}

package jsonc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var server = Obj{{"command", "/opt/bin/compass-mcp"}, {"args", []string{"serve"}}, {"env", map[string]string{"COMPASS_ME": "ana"}}}

func TestSet(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		d              Dialect
	}{
		{
			name: "a member added after the others, comments kept",
			d:    JSONC,
			in: `// my settings
{
	"theme": "One Dark", // dark
	"servers": {
		/* the first */
		"memory": {"command": "npx"} // trailing
	}
}
`,
			want: `// my settings
{
	"theme": "One Dark", // dark
	"servers": {
		/* the first */
		"memory": {"command": "npx"}, // trailing
		"compass": {
			"command": "/opt/bin/compass-mcp",
			"args": [
				"serve"
			],
			"env": {
				"COMPASS_ME": "ana"
			}
		}
	}
}
`,
		},
		{
			name: "the path made, after a trailing comma",
			d:    JSONC,
			in:   "{\n  \"vim_mode\": true,\n}\n",
			want: "{\n  \"vim_mode\": true,\n  \"servers\": {\n    \"compass\": {\n      \"command\": \"/opt/bin/compass-mcp\",\n      \"args\": [\n        \"serve\"\n      ],\n      \"env\": {\n        \"COMPASS_ME\": \"ana\"\n      }\n    }\n  }\n}\n",
		},
		{
			name: "an existing member replaced in place",
			d:    JSON,
			in:   "{\r\n  \"servers\": {\r\n    \"compass\": {\"command\": \"old\"},\r\n    \"other\": 1\r\n  }\r\n}",
			want: "{\r\n  \"servers\": {\r\n    \"compass\": {\r\n      \"command\": \"/opt/bin/compass-mcp\",\r\n      \"args\": [\r\n        \"serve\"\r\n      ],\r\n      \"env\": {\r\n        \"COMPASS_ME\": \"ana\"\r\n      }\r\n    },\r\n    \"other\": 1\r\n  }\r\n}",
		},
		{
			name: "an empty object on one line",
			d:    JSON,
			in:   `{"servers": {}}`,
			want: "{\"servers\": {\n  \"compass\": {\n    \"command\": \"/opt/bin/compass-mcp\",\n    \"args\": [\n      \"serve\"\n    ],\n    \"env\": {\n      \"COMPASS_ME\": \"ana\"\n    }\n  }\n}}",
		},
		{
			name: "an empty file",
			d:    JSON,
			in:   "",
			want: "{\n  \"servers\": {\n    \"compass\": {\n      \"command\": \"/opt/bin/compass-mcp\",\n      \"args\": [\n        \"serve\"\n      ],\n      \"env\": {\n        \"COMPASS_ME\": \"ana\"\n      }\n    }\n  }\n}\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Set([]byte(tc.in), tc.d, []string{"servers", "compass"}, server)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			valid(t, got, tc.d)
		})
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		d    Dialect
		line int
		msg  string
	}{
		{"{\n  \"a\": 1\n  \"b\": 2\n}", JSONC, 3, "missing comma"},
		{"{\n  // hi\n  \"a\": 1\n}", JSON, 2, "comment"},
		{"{\n  \"a\": 1,\n}", JSON, 2, "comma after the object's last member"},
		{"{\n \"p\": \"C:\\Users\"\n}", JSONC, 2, "\\\\ for each"},
		{"{\n\n  \"a\": tru\n}", JSONC, 3, "not true, false or null"},
		{"[1, 2]", JSONC, 0, ""}, // parses; not an object: Set refuses it below
		{"{\"a\": 1} x", JSONC, 1, "after the end"},
		{"{\"a\": /* open", JSONC, 1, "never closed"},
		{strings.Repeat("[", MaxDepth+1), JSONC, 1, "nested more than"},
	} {
		_, err := Parse([]byte(tc.in), tc.d)
		if tc.line == 0 {
			if err != nil {
				t.Errorf("%q: %v", tc.in, err)
			}
			continue
		}
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != tc.line || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("%q: got %v, want line %d saying %q", tc.in, err, tc.line, tc.msg)
		}
	}
	if _, err := Set([]byte("[1, 2]"), JSONC, []string{"a"}, 1); err == nil || !strings.Contains(err.Error(), "not an object") {
		t.Errorf("an array at the top: %v", err)
	}
	if _, err := Set([]byte(`{"servers": [], "x": 1}`), JSONC, []string{"servers", "compass"}, 1); err == nil || !strings.Contains(err.Error(), `"servers" is an array`) {
		t.Errorf("servers an array: %v", err)
	}
	if _, err := Set([]byte("{\"servers\": {\"compass\": 1,\n \"compass\": 2}}"), JSONC, []string{"servers", "compass"}, 1); err == nil || !strings.Contains(err.Error(), "lines 1 and 2") {
		t.Errorf("a key twice: %v", err)
	}
}

// valid checks src with a reader of d written apart from the package's parser: comments
// and trailing commas stripped by a scanner of its own, then encoding/json.
func valid(t testing.TB, src []byte, d Dialect) any {
	t.Helper()
	if d.Comments || d.TrailingCommas {
		src = stripJSONC(src)
	}
	var v any
	if err := json.Unmarshal(bytes.TrimPrefix(src, []byte("\xef\xbb\xbf")), &v); err != nil {
		t.Fatalf("not valid: %v\n%s", err, src)
	}
	return v
}

// stripJSONC turns JSONC into JSON: comments become spaces, a comma after a value and
// before a closing bracket goes. A comma with no value before it ("{,}", "[1,,]") stays,
// for encoding/json to refuse: a trailing comma follows a member.
func stripJSONC(src []byte) []byte {
	out := make([]byte, 0, len(src))
	lastComma := -1
	var prev byte // the last byte written that is not a space or a comment
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
			if j >= len(src) {
				j = len(src) - 1
			}
			out = append(out, src[i:j+1]...)
			i = j
			lastComma = -1
			prev = '"'
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
			lastComma = -1
			if prev != 0 && prev != '{' && prev != '[' && prev != ',' && prev != ':' {
				lastComma = len(out)
			}
			out = append(out, c)
			prev = c
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma = -1
			out = append(out, c)
			prev = c
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			out = append(out, c)
		default:
			lastComma = -1
			out = append(out, c)
			prev = c
		}
	}
	return out
}

// go test -fuzz=FuzzSplice ./internal/clientconfig/jsonc
//
// Every valid document of its dialect whose top level is an object gets the member, and
// keeps every other member of the objects on the path and every byte before and after the
// top-level object. Set may refuse only what a reader written apart from the package
// (refusable) finds is not such a document: not valid, not an object at the top, a key on
// the path there twice or not an object, or nested deeper than MaxDepth.
func FuzzSplice(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "testdata", "*"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b, true, "mcpServers")
		}
	}
	for _, s := range []string{"", "{}", "{\"servers\":{}}", "// c\n{\n\t\"a\": [1,2,],\n}\n", "{\"servers\": {\"compass\": null}}", "\xef\xbb\xbf{\"a\":\"\\u00e9\"}", "{\"servers\": 3}",
		`{"x":1}`, `{"servers":{"ws":{"command":"ws-mcp"}}}`, `{"a":[1,{"b":2}],"servers":{"x":{}}}`} {
		f.Add([]byte(s), true, "servers")
		f.Add([]byte(s), false, "servers")
	}
	f.Fuzz(func(t *testing.T, src []byte, comments bool, key string) {
		d := Dialect{Comments: comments, TrailingCommas: comments}
		path := []string{key, "compass"}
		out, err := Set(src, d, path, server)
		if err != nil {
			if out != nil {
				t.Fatal("an error, and output too")
			}
			if why := refusable(src, d, path); why == "" {
				t.Fatalf("a valid document refused: %v\n%s", err, src)
			}
			return
		}
		keeps(t, src, out, d, path)
	})
}

// TestSetEveryShape is FuzzSplice's property over documents made to be valid: compact (as
// JSON.stringify writes them) and pretty, with and without the servers' object, empty or
// holding servers, with comments and trailing commas where the dialect has them. None may
// be refused.
func TestSetEveryShape(t *testing.T) {
	dialects := []Dialect{JSON, JSONC, {Comments: true}}
	rng := rand.New(rand.NewPCG(36, 1))
	for i := 0; i < 3000; i++ {
		d := dialects[i%len(dialects)]
		g := gen{rng: rng, d: d, pretty: i%2 == 0}
		src := g.doc("servers")
		path := []string{"servers", "compass"}
		if why := refusable(src, d, path); why != "" {
			t.Fatalf("the generator made a document it shouldn't (%s):\n%s", why, src)
		}
		out, err := Set(src, d, path, server)
		if err != nil {
			t.Fatalf("refused %s:\n%s", err, src)
		}
		keeps(t, src, out, d, path)
	}
}

// gen writes random valid documents of a dialect.
type gen struct {
	rng    *rand.Rand
	d      Dialect
	pretty bool
	b      bytes.Buffer
	key    string // the servers' key at the top level, "" for none
	keyAt  int    // which member it is
}

// doc is an object with a few members, one of them (maybe) key holding an object of
// servers, with space and comments around it where the dialect allows them.
func (g *gen) doc(key string) []byte {
	g.b.Reset()
	g.gap(0)
	var members []func()
	for n := g.rng.IntN(4); n > 0; n-- {
		members = append(members, func() { g.value(2) })
	}
	if g.rng.IntN(4) > 0 {
		servers := func() {
			g.object(1, g.rng.IntN(3), func(int) { g.object(2, g.rng.IntN(3), func(int) { g.value(1) }) })
		}
		at := g.rng.IntN(len(members) + 1)
		members = append(members[:at], append([]func(){servers}, members[at:]...)...)
		g.keyAt = at
		g.key = key
	} else {
		g.key = ""
	}
	g.members(0, members)
	g.gap(0)
	return append([]byte{}, g.b.Bytes()...)
}

func (g *gen) members(depth int, vals []func()) {
	keys := g.keys(len(vals))
	if depth == 0 && g.key != "" {
		keys[g.keyAt] = g.key
	}
	g.open(depth, '{', len(vals), func(i int) {
		k, _ := json.Marshal(keys[i])
		g.b.Write(k)
		g.b.WriteString(":")
		if g.pretty {
			g.b.WriteString(" ")
		}
		vals[i]()
	}, '}')
}

// keys are n distinct keys that are never "servers" or "compass".
func (g *gen) keys(n int) []string {
	var ks []string
	for i := 0; i < n; i++ {
		ks = append(ks, fmt.Sprintf("%s%d", []string{"a", "theme", "é", "k\"q", "mcp"}[g.rng.IntN(5)], i))
	}
	return ks
}

func (g *gen) object(depth, n int, val func(int)) {
	keys := g.keys(n)
	g.open(depth, '{', n, func(i int) {
		k, _ := json.Marshal(keys[i])
		g.b.Write(k)
		g.b.WriteString(":")
		val(depth)
	}, '}')
}

func (g *gen) open(depth int, o byte, n int, item func(int), c byte) {
	g.b.WriteByte(o)
	for i := 0; i < n; i++ {
		g.gap(depth + 1)
		item(i)
		g.gap(depth + 1)
		if i < n-1 || g.d.TrailingCommas && g.rng.IntN(3) == 0 {
			g.b.WriteByte(',')
		}
	}
	g.gap(depth)
	g.b.WriteByte(c)
}

// gap is what may stand between tokens: nothing, a line break and indentation, a comment.
func (g *gen) gap(depth int) {
	if g.pretty {
		g.b.WriteString("\n" + strings.Repeat("  ", depth))
	}
	if g.d.Comments && g.rng.IntN(6) == 0 {
		if g.rng.IntN(2) == 0 {
			g.b.WriteString("/* a } comment, */")
		} else {
			g.b.WriteString("// a line comment }\n")
		}
	}
}

func (g *gen) value(depth int) {
	switch r := g.rng.IntN(7); {
	case depth <= 0 || r < 3:
		g.b.WriteString([]string{"1", "-0.5e3", `"s"`, "true", "null", `"a\\b \u00e9 }"`, `""`}[g.rng.IntN(7)])
	case r < 5:
		n := g.rng.IntN(3)
		g.open(depth, '[', n, func(int) { g.value(depth - 1) }, ']')
	default:
		g.object(depth, g.rng.IntN(3), func(int) { g.value(depth - 1) })
	}
}

// refusable says why src is not a document Set must take ("" when it is one), read apart
// from the package's parser: comments stripped by the test's own scanner, then
// encoding/json.
func refusable(src []byte, d Dialect, path []string) string {
	for _, k := range path {
		if !utf8.ValidString(k) {
			return "a key on the path that is not UTF-8"
		}
	}
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	if len(bytes.Trim(src, " \t\r\n")) == 0 { // JSON's white space: not TrimSpace's \f or \v
		return ""
	}
	switch {
	case d.Comments && !d.TrailingCommas:
		src = stripComments(src)
	case d.Comments || d.TrailingCommas:
		src = stripJSONC(src)
	}
	if !json.Valid(src) {
		return "not valid"
	}
	if nesting(src) >= MaxDepth {
		return "too deep"
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	for i := 0; ; i++ {
		tok, err := dec.Token()
		if err != nil {
			return "not valid"
		}
		if tok != json.Delim('{') {
			return "not an object"
		}
		if i == len(path) {
			return ""
		}
		var next json.RawMessage
		seen := 0
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return "not valid"
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return "not valid"
			}
			if kt.(string) == path[i] {
				seen++
				next = v
			}
		}
		if seen > 1 {
			return "a key twice"
		}
		if seen == 0 {
			return ""
		}
		dec = json.NewDecoder(bytes.NewReader(next))
	}
}

// stripComments is stripJSONC keeping trailing commas.
func stripComments(src []byte) []byte {
	out := stripJSONC(bytes.ReplaceAll(src, []byte(","), []byte("\x00")))
	return bytes.ReplaceAll(out, []byte("\x00"), []byte(","))
}

// nesting is how deeply arrays and objects nest in the JSON src.
func nesting(src []byte) int {
	depth, most, inStr := 0, 0, false
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '[' || c == '{'):
			depth++
			most = max(most, depth)
		case !inStr && (c == ']' || c == '}'):
			depth--
		}
	}
	return most
}

// keeps checks that out is a document of d with the member at path holding server, and
// that everything else of src is there as it was.
func keeps(t *testing.T, src, out []byte, d Dialect, path []string) {
	t.Helper()
	valid(t, out, d)
	v, err := Lookup(out, d, path)
	if err != nil || v == nil {
		t.Fatalf("the member is not there: %v\n%s", err, out)
	}
	var got any
	json.Unmarshal(out[v.Start:v.End], &got)
	want := map[string]any{"command": "/opt/bin/compass-mcp", "args": []any{"serve"}, "env": map[string]any{"COMPASS_ME": "ana"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the member reads %s", out[v.Start:v.End])
	}
	if len(bytes.TrimSpace(bytes.TrimPrefix(src, []byte("\xef\xbb\xbf")))) == 0 {
		return
	}
	in, err := Parse(src, d)
	if err != nil {
		t.Fatalf("Set accepted what Parse refuses: %v", err)
	}
	after, _ := Parse(out, d)
	if !bytes.Equal(src[:in.Start], out[:after.Start]) || !bytes.Equal(src[in.End:], out[after.End:]) {
		t.Fatal("bytes outside the top-level object changed")
	}
	a, b := in, after
	for i, k := range path {
		seen := map[string]int{} // a key given twice (JSON allows it) is matched occurrence by occurrence
		for _, m := range a.Members {
			if m.Key == k {
				continue
			}
			nth := seen[m.Key]
			seen[m.Key]++
			var n *Member
			for j, o := 0, 0; j < len(b.Members); j++ {
				if b.Members[j].Key == m.Key {
					if o == nth {
						n = &b.Members[j]
						break
					}
					o++
				}
			}
			if n == nil || !bytes.Equal(src[m.Value.Start:m.Value.End], out[n.Value.Start:n.Value.End]) {
				t.Fatalf("the member %q at depth %d changed", m.Key, i)
			}
		}
		var next *Value
		for _, m := range a.Members {
			if m.Key == k {
				next = m.Value
			}
		}
		if next == nil {
			break
		}
		a = next
		for _, m := range b.Members {
			if m.Key == k {
				b = m.Value
			}
		}
	}
}

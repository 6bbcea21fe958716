package clientconfig

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A TOML document read far enough to refuse a broken file with its line, to find where a
// server's table is, and to give its values back (datetimes as their text). It follows
// TOML 1.0; what Codex's own reader refuses beyond that, it refuses.

// tomlDoc is a parsed TOML file.
type tomlDoc struct {
	root    map[string]any
	headers []tomlHeader
}

// tomlHeader is one [table] or [[array]] line: its keys, and where its line starts.
type tomlHeader struct {
	keys  []string
	start int // the offset of the line the header is on
}

// tomlTable is a table and how it came to be, which says what may still be added to it.
type tomlTable struct {
	m        map[string]any
	explicit bool // defined by a [header]
	dotted   bool // defined by a dotted key
	inline   bool // an inline table: closed
}

type tomlArrayOfTables struct{ tables []*tomlTable }

type tomlParser struct {
	src  []byte
	i    int
	root *tomlTable
	cur  *tomlTable
	doc  *tomlDoc
}

func parseTOML(src []byte) (*tomlDoc, error) {
	if !utf8.Valid(src) {
		return nil, errors.New("the file is not UTF-8 text")
	}
	p := &tomlParser{src: src, root: &tomlTable{m: map[string]any{}, explicit: true}, doc: &tomlDoc{}}
	p.cur = p.root
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		p.i = 3
	}
	for {
		p.spaces()
		if p.i >= len(src) {
			break
		}
		switch c := src[p.i]; {
		case c == '#':
			if err := p.comment(); err != nil {
				return nil, err
			}
		case c == '\n' || c == '\r':
			if err := p.newline(); err != nil {
				return nil, err
			}
			continue
		case c == '[':
			if err := p.header(); err != nil {
				return nil, err
			}
		default:
			if err := p.keyValue(p.cur); err != nil {
				return nil, err
			}
		}
		if err := p.endOfLine(); err != nil {
			return nil, err
		}
	}
	p.doc.root = plain(p.root).(map[string]any)
	return p.doc, nil
}

// plain turns the parser's tables into maps and slices.
func plain(v any) any {
	switch v := v.(type) {
	case *tomlTable:
		m := make(map[string]any, len(v.m))
		for k, e := range v.m {
			m[k] = plain(e)
		}
		return m
	case *tomlArrayOfTables:
		s := make([]any, len(v.tables))
		for i, t := range v.tables {
			s[i] = plain(t)
		}
		return s
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = plain(e)
		}
		return s
	}
	return v
}

func (p *tomlParser) errAt(off int, format string, args ...any) error {
	line, col := position(p.src, off)
	return fmt.Errorf("line %d, column %d: %s", line, col, fmt.Sprintf(format, args...))
}

func position(src []byte, off int) (line, col int) {
	if off > len(src) {
		off = len(src)
	}
	line = 1 + bytes.Count(src[:off], []byte("\n"))
	ls := bytes.LastIndexByte(src[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(src[ls:off])
}

func (p *tomlParser) spaces() {
	for p.i < len(p.src) && (p.src[p.i] == ' ' || p.src[p.i] == '\t') {
		p.i++
	}
}

func (p *tomlParser) comment() error {
	for p.i < len(p.src) && p.src[p.i] != '\n' {
		c := p.src[p.i]
		if c == '\r' && p.i+1 < len(p.src) && p.src[p.i+1] == '\n' {
			return nil
		}
		if c < 0x20 && c != '\t' || c == 0x7f {
			return p.errAt(p.i, "a control character in a comment")
		}
		p.i++
	}
	return nil
}

func (p *tomlParser) newline() error {
	if p.src[p.i] == '\n' {
		p.i++
		return nil
	}
	if p.src[p.i] == '\r' && p.i+1 < len(p.src) && p.src[p.i+1] == '\n' {
		p.i += 2
		return nil
	}
	return p.errAt(p.i, "a carriage return without a line feed")
}

// endOfLine passes the rest of a line: spaces, a comment, the line break.
func (p *tomlParser) endOfLine() error {
	p.spaces()
	if p.i < len(p.src) && p.src[p.i] == '#' {
		if err := p.comment(); err != nil {
			return err
		}
	}
	if p.i >= len(p.src) {
		return nil
	}
	if p.src[p.i] == '\n' || p.src[p.i] == '\r' {
		return p.newline()
	}
	return p.errAt(p.i, "%s where the line should end (one key = value a line)", describeByte(p.src, p.i))
}

func describeByte(src []byte, i int) string {
	r, _ := utf8.DecodeRune(src[i:])
	return fmt.Sprintf("%q", r)
}

func (p *tomlParser) header() error {
	start := bytes.LastIndexByte(p.src[:p.i], '\n') + 1
	array := p.i+1 < len(p.src) && p.src[p.i+1] == '['
	if array {
		p.i += 2
	} else {
		p.i++
	}
	p.spaces()
	keys, err := p.key()
	if err != nil {
		return err
	}
	p.spaces()
	closing := "]"
	if array {
		closing = "]]"
	}
	if !bytes.HasPrefix(p.src[p.i:], []byte(closing)) {
		return p.errAt(p.i, "a table header not closed with %s", closing)
	}
	at := p.i
	p.i += len(closing)
	p.doc.headers = append(p.doc.headers, tomlHeader{keys: keys, start: start})
	t := p.root
	for _, k := range keys[:len(keys)-1] {
		next, err := p.descend(t, k, at, false)
		if err != nil {
			return err
		}
		t = next
	}
	last := keys[len(keys)-1]
	name := strings.Join(keys, ".")
	switch e := t.m[last].(type) {
	case nil:
		if array {
			nt := &tomlTable{m: map[string]any{}, explicit: true}
			t.m[last] = &tomlArrayOfTables{tables: []*tomlTable{nt}}
			p.cur = nt
		} else {
			nt := &tomlTable{m: map[string]any{}, explicit: true}
			t.m[last] = nt
			p.cur = nt
		}
	case *tomlTable:
		if array || e.explicit || e.dotted || e.inline {
			return p.errAt(at, "the table %s is defined twice", name)
		}
		e.explicit = true
		p.cur = e
	case *tomlArrayOfTables:
		if !array {
			return p.errAt(at, "%s is an array of tables ([[%s]]), and here a table", name, name)
		}
		nt := &tomlTable{m: map[string]any{}, explicit: true}
		e.tables = append(e.tables, nt)
		p.cur = nt
	default:
		return p.errAt(at, "%s is a value, and here a table", name)
	}
	return nil
}

// descend goes into the table k of t, making it if absent (as by a dotted key when dotted).
func (p *tomlParser) descend(t *tomlTable, k string, at int, dotted bool) (*tomlTable, error) {
	switch e := t.m[k].(type) {
	case nil:
		nt := &tomlTable{m: map[string]any{}, dotted: dotted}
		t.m[k] = nt
		return nt, nil
	case *tomlTable:
		if e.inline {
			return nil, p.errAt(at, "%s is an inline table, to which nothing can be added", k)
		}
		if dotted && e.explicit {
			return nil, p.errAt(at, "%s is a [table] defined elsewhere, which a dotted key can't add to", k)
		}
		return e, nil
	case *tomlArrayOfTables:
		if dotted {
			return nil, p.errAt(at, "%s is an array of tables, which a dotted key can't add to", k)
		}
		return e.tables[len(e.tables)-1], nil
	default:
		return nil, p.errAt(at, "%s is a value, not a table", k)
	}
}

func (p *tomlParser) keyValue(t *tomlTable) error {
	at := p.i
	keys, err := p.key()
	if err != nil {
		return err
	}
	p.spaces()
	if p.i >= len(p.src) || p.src[p.i] != '=' {
		return p.errAt(p.i, "a key without '= value' after it")
	}
	p.i++
	p.spaces()
	v, err := p.value(0)
	if err != nil {
		return err
	}
	for _, k := range keys[:len(keys)-1] {
		if t, err = p.descend(t, k, at, true); err != nil {
			return err
		}
	}
	last := keys[len(keys)-1]
	if _, ok := t.m[last]; ok {
		return p.errAt(at, "the key %s is defined twice", strings.Join(keys, "."))
	}
	t.m[last] = v
	return nil
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func isBareKeyByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func (p *tomlParser) key() ([]string, error) {
	var keys []string
	for {
		p.spaces()
		if p.i >= len(p.src) {
			return nil, p.errAt(p.i, "the file ends where a key should be")
		}
		switch p.src[p.i] {
		case '"', '\'':
			s, err := p.str(false)
			if err != nil {
				return nil, err
			}
			keys = append(keys, s)
		default:
			j := p.i
			for j < len(p.src) && isBareKeyByte(p.src[j]) {
				j++
			}
			if j == p.i {
				return nil, p.errAt(p.i, "%s where a key should be", describeByte(p.src, p.i))
			}
			keys = append(keys, string(p.src[p.i:j]))
			p.i = j
		}
		p.spaces()
		if p.i < len(p.src) && p.src[p.i] == '.' {
			p.i++
			continue
		}
		return keys, nil
	}
}

// skipArraySpace passes whitespace, line breaks and comments inside an array.
func (p *tomlParser) skipArraySpace() error {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t':
			p.i++
		case '\n', '\r':
			if err := p.newline(); err != nil {
				return err
			}
		case '#':
			if err := p.comment(); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

const tomlMaxDepth = 128

func (p *tomlParser) value(depth int) (any, error) {
	if depth > tomlMaxDepth {
		return nil, p.errAt(p.i, "arrays and tables nested more than %d deep", tomlMaxDepth)
	}
	if p.i >= len(p.src) {
		return nil, p.errAt(p.i, "the file ends where a value should be")
	}
	switch c := p.src[p.i]; c {
	case '"', '\'':
		return p.str(true)
	case '[':
		start := p.i
		p.i++
		arr := []any{}
		for {
			if err := p.skipArraySpace(); err != nil {
				return nil, err
			}
			if p.i >= len(p.src) {
				return nil, p.errAt(start, "an array not closed with ]")
			}
			if p.src[p.i] == ']' {
				p.i++
				return arr, nil
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
			if err := p.skipArraySpace(); err != nil {
				return nil, err
			}
			if p.i < len(p.src) && p.src[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.src) && p.src[p.i] == ']' {
				p.i++
				return arr, nil
			}
			return nil, p.errAt(p.i, "an array's elements need commas between them")
		}
	case '{':
		p.i++
		t := &tomlTable{m: map[string]any{}}
		p.spaces()
		if p.i < len(p.src) && p.src[p.i] == '}' {
			p.i++
			t.inline = true
			return t, nil
		}
		for {
			p.spaces()
			if err := p.keyValue(t); err != nil {
				return nil, err
			}
			p.spaces()
			if p.i < len(p.src) && p.src[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.src) && p.src[p.i] == '}' {
				p.i++
				markInline(t)
				return t, nil
			}
			return nil, p.errAt(p.i, "an inline table, which must be on one line, not closed with } (no comma after the last key)")
		}
	}
	return p.scalar()
}

// markInline closes an inline table and the tables its dotted keys made.
func markInline(t *tomlTable) {
	t.inline = true
	for _, v := range t.m {
		if sub, ok := v.(*tomlTable); ok {
			markInline(sub)
		}
	}
}

var (
	tomlInt      = regexp.MustCompile(`^[+-]?(0|[1-9](_?[0-9])*)$`)
	tomlPrefixed = regexp.MustCompile(`^(0x[0-9A-Fa-f](_?[0-9A-Fa-f])*|0o[0-7](_?[0-7])*|0b[01](_?[01])*)$`)
	tomlFloat    = regexp.MustCompile(`^[+-]?(0|[1-9](_?[0-9])*)((\.[0-9](_?[0-9])*)([eE][+-]?[0-9](_?[0-9])*)?|[eE][+-]?[0-9](_?[0-9])*)$`)
	tomlSpecial  = regexp.MustCompile(`^[+-]?(inf|nan)$`)
	tomlDate     = regexp.MustCompile(`^\d{4}-\d\d-\d\d([Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)?)?$`)
	tomlTime     = regexp.MustCompile(`^\d\d:\d\d:\d\d(\.\d+)?$`)
)

func (p *tomlParser) scalar() (any, error) {
	start := p.i
	j := p.i
	for j < len(p.src) && !bytes.ContainsRune([]byte(" \t\r\n#,]}"), rune(p.src[j])) {
		j++
	}
	// A datetime may have a space between its date and time.
	if j+1 < len(p.src) && p.src[j] == ' ' && tomlDate.Match(p.src[start:j]) && p.src[j+1] >= '0' && p.src[j+1] <= '9' {
		k := j + 1
		for k < len(p.src) && !bytes.ContainsRune([]byte(" \t\r\n#,]}"), rune(p.src[k])) {
			k++
		}
		if tomlDate.Match(p.src[start:k]) {
			j = k
		}
	}
	tok := string(p.src[start:j])
	p.i = j
	switch {
	case tok == "true":
		return true, nil
	case tok == "false":
		return false, nil
	case tomlInt.MatchString(tok):
		n, err := strconv.ParseInt(strings.ReplaceAll(tok, "_", ""), 10, 64)
		if err != nil {
			return nil, p.errAt(start, "the integer %s is out of range", tok)
		}
		return n, nil
	case tomlPrefixed.MatchString(tok):
		n, err := strconv.ParseInt(strings.ReplaceAll(tok, "_", ""), 0, 64)
		if err != nil {
			return nil, p.errAt(start, "the integer %s is out of range", tok)
		}
		return n, nil
	case tomlFloat.MatchString(tok):
		f, err := strconv.ParseFloat(strings.ReplaceAll(tok, "_", ""), 64)
		if err != nil {
			return nil, p.errAt(start, "the number %s is out of range", tok)
		}
		return f, nil
	case tomlSpecial.MatchString(tok):
		if strings.HasSuffix(tok, "nan") {
			return math.NaN(), nil
		}
		if tok[0] == '-' {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	case tomlDate.MatchString(tok) || tomlTime.MatchString(tok):
		return tok, nil
	case tok == "":
		return nil, p.errAt(start, "%s where a value should be", describeByte(p.src, start))
	}
	return nil, p.errAt(start, "%q is not a TOML value (a string needs quotes)", tok)
}

// str reads one string; multi says whether the multi-line forms are allowed (not in keys).
func (p *tomlParser) str(multi bool) (string, error) {
	start := p.i
	q := p.src[p.i]
	if multi && bytes.HasPrefix(p.src[p.i:], []byte{q, q, q}) {
		p.i += 3
		if p.i < len(p.src) && p.src[p.i] == '\n' {
			p.i++
		} else if bytes.HasPrefix(p.src[p.i:], []byte("\r\n")) {
			p.i += 2
		}
		var b strings.Builder
		for p.i < len(p.src) {
			if bytes.HasPrefix(p.src[p.i:], []byte{q, q, q}) {
				// Up to two quotes may end the content just before the closing three.
				n := 3
				for n < 5 && p.i+n < len(p.src) && p.src[p.i+n] == q {
					n++
				}
				b.WriteString(strings.Repeat(string(q), n-3))
				p.i += n
				return b.String(), nil
			}
			c := p.src[p.i]
			switch {
			case q == '"' && c == '\\':
				if err := p.escape(&b, true); err != nil {
					return "", err
				}
			case c == '\r' && p.i+1 < len(p.src) && p.src[p.i+1] == '\n':
				b.WriteString("\r\n")
				p.i += 2
			case c == '\n' || c == '\t' || c >= 0x20 && c != 0x7f:
				b.WriteByte(c)
				p.i++
			default:
				return "", p.errAt(p.i, "a control character in a string")
			}
		}
		return "", p.errAt(start, "a multi-line string not closed with %s", strings.Repeat(string(q), 3))
	}
	p.i++
	var b strings.Builder
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case q == '"' && c == '\\':
			if err := p.escape(&b, false); err != nil {
				return "", err
			}
		case c == '\t' || c >= 0x20 && c != 0x7f:
			b.WriteByte(c)
			p.i++
		case c == '\n' || c == '\r':
			return "", p.errAt(start, "a string not closed on its line")
		default:
			return "", p.errAt(p.i, "a control character in a string")
		}
	}
	return "", p.errAt(start, "a string not closed")
}

func (p *tomlParser) escape(b *strings.Builder, multi bool) error {
	at := p.i
	p.i++
	if p.i >= len(p.src) {
		return p.errAt(at, "a string not closed")
	}
	c := p.src[p.i]
	switch c {
	case 'b':
		b.WriteByte('\b')
	case 't':
		b.WriteByte('\t')
	case 'n':
		b.WriteByte('\n')
	case 'f':
		b.WriteByte('\f')
	case 'r':
		b.WriteByte('\r')
	case '"':
		b.WriteByte('"')
	case '\\':
		b.WriteByte('\\')
	case 'u', 'U':
		n := 4
		if c == 'U' {
			n = 8
		}
		if p.i+1+n > len(p.src) {
			return p.errAt(at, "a \\%c escape without %d hexadecimal digits", c, n)
		}
		r, err := strconv.ParseUint(string(p.src[p.i+1:p.i+1+n]), 16, 32)
		if err != nil || !utf8.ValidRune(rune(r)) {
			return p.errAt(at, "a \\%c escape that is not a Unicode scalar value", c)
		}
		b.WriteRune(rune(r))
		p.i += n
	default:
		if multi && (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			// A line-ending backslash: the break and the whitespace after it go.
			j := p.i
			for j < len(p.src) && (p.src[j] == ' ' || p.src[j] == '\t') {
				j++
			}
			if j < len(p.src) && (p.src[j] == '\n' || p.src[j] == '\r') {
				for j < len(p.src) && (p.src[j] == ' ' || p.src[j] == '\t' || p.src[j] == '\n' || p.src[j] == '\r') {
					j++
				}
				p.i = j
				return nil
			}
		}
		return p.errAt(at, "the escape \\%c, which TOML doesn't have (a Windows path needs \\\\, or 'single quotes')", c)
	}
	p.i++
	return nil
}

// tomlString writes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlKey(k string) string {
	if bareKey.MatchString(k) {
		return k
	}
	return tomlString(k)
}

// tomlFormat is Codex's config.toml: a table [mcp_servers.NAME] a server.
type tomlFormat struct{}

func (tomlFormat) entry(s Server, nl string) string {
	var b strings.Builder
	b.WriteString("[mcp_servers." + tomlKey(s.Name) + "]" + nl)
	b.WriteString("command = " + tomlString(s.Command) + nl)
	if len(s.Args) > 0 {
		args := make([]string, len(s.Args))
		for i, a := range s.Args {
			args[i] = tomlString(a)
		}
		b.WriteString("args = [" + strings.Join(args, ", ") + "]" + nl)
	}
	if len(s.Env) > 0 {
		var env []string
		for _, k := range sortedKeys(s.Env) {
			env = append(env, tomlKey(k)+" = "+tomlString(s.Env[k]))
		}
		b.WriteString("env = { " + strings.Join(env, ", ") + " }" + nl)
	}
	return b.String()
}

// tomlFields is how many keys entry writes for s.
func tomlFields(s Server) int {
	n := 1
	if len(s.Args) > 0 {
		n++
	}
	if len(s.Env) > 0 {
		n++
	}
	return n
}

func (f tomlFormat) set(old []byte, s Server, force bool) ([]byte, bool, error) {
	doc, err := parseTOML(old)
	if err != nil {
		return nil, false, err
	}
	nl := "\n"
	if bytes.Contains(old, []byte("\r\n")) {
		nl = "\r\n"
	}
	servers, _ := doc.root["mcp_servers"].(map[string]any)
	if _, isTable := doc.root["mcp_servers"].(map[string]any); doc.root["mcp_servers"] != nil && !isTable {
		return nil, false, errors.New("mcp_servers is not a table of servers: fix it by hand, then install again")
	}
	// The server's own sections: its [mcp_servers.NAME] header and the [mcp_servers.NAME.…]
	// ones under it, each up to the next header.
	var sections [][2]int
	line := 0
	for i, h := range doc.headers {
		if len(h.keys) >= 2 && h.keys[0] == "mcp_servers" && h.keys[1] == s.Name {
			end := len(old)
			if i+1 < len(doc.headers) {
				end = doc.headers[i+1].start
			}
			sections = append(sections, [2]int{h.start, end})
			if line == 0 {
				line, _ = position(old, h.start)
			}
		}
	}
	out := append([]byte{}, old...)
	replaced := false
	if have, ok := servers[s.Name].(map[string]any); ok && len(have) == tomlFields(s) && checkTOML(old, s) == nil {
		return old, false, nil // already set up: the file stays as it is
	}
	if _, ok := servers[s.Name]; ok {
		if len(sections) == 0 {
			return nil, false, fmt.Errorf("mcp_servers.%s is there, written inline rather than as its own [mcp_servers.%s] table: remove it by hand, then install again", tomlKey(s.Name), tomlKey(s.Name))
		}
		if !force {
			var b strings.Builder
			for _, sec := range sections {
				b.Write(bytes.TrimRight(old[sec[0]:sec[1]], "\r\n"))
				b.WriteString("\n")
			}
			return nil, false, &ExistsError{Name: s.Name, Line: line, Entry: strings.TrimRight(b.String(), "\n")}
		}
		replaced = true
		at := sections[0][0]
		for i := len(sections) - 1; i >= 0; i-- {
			out = append(out[:sections[i][0]], out[sections[i][1]:]...)
		}
		entry := f.entry(s, nl)
		if at < len(out) {
			entry += nl
		}
		out = append(out[:at], append([]byte(entry), out[at:]...)...)
	} else {
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
			out = append(out, nl...)
		}
		if len(bytes.TrimSpace(out)) > 0 {
			out = append(out, nl...)
		}
		out = append(out, f.entry(s, nl)...)
	}
	if err := checkTOML(out, s); err != nil {
		return nil, false, fmt.Errorf("adding [mcp_servers.%s]: the result would not read back (%v); the file is left as it was", tomlKey(s.Name), err)
	}
	return out, replaced, nil
}

// checkTOML parses out and compares its server s.Name with s.
func checkTOML(out []byte, s Server) error {
	doc, err := parseTOML(out)
	if err != nil {
		return err
	}
	servers, _ := doc.root["mcp_servers"].(map[string]any)
	got, _ := servers[s.Name].(map[string]any)
	if got == nil || got["command"] != s.Command {
		return fmt.Errorf("no command in mcp_servers.%s", s.Name)
	}
	args, _ := got["args"].([]any)
	if len(args) != len(s.Args) {
		return fmt.Errorf("mcp_servers.%s.args has %d arguments", s.Name, len(args))
	}
	for i, a := range args {
		if a != s.Args[i] {
			return fmt.Errorf("mcp_servers.%s.args[%d] is %v", s.Name, i, a)
		}
	}
	env, _ := got["env"].(map[string]any)
	if len(env) != len(s.Env) {
		return fmt.Errorf("mcp_servers.%s.env has %d variables", s.Name, len(env))
	}
	for k, v := range s.Env {
		if env[k] != v {
			return fmt.Errorf("mcp_servers.%s.env.%s is %v", s.Name, k, env[k])
		}
	}
	return nil
}

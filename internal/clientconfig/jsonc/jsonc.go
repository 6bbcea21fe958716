// Package jsonc reads JSON, and JSON with comments and trailing commas as VS Code's and
// Zed's settings files are written, and sets one member of an object in place: every other
// byte of the file, its comments and its layout, stays as it was.
//
// It splices text rather than decoding and encoding the document, since a decoder drops
// the comments, the order of the members and the person's formatting.
package jsonc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"unicode/utf8"
)

// A Dialect is what a file may hold beyond plain JSON.
type Dialect struct {
	Comments       bool // "//" line and "/* */" block comments
	TrailingCommas bool // a comma after an object's last member or an array's last element
}

var (
	// JSON is plain JSON (RFC 8259), as JSON.parse and encoding/json read it.
	JSON = Dialect{}
	// JSONC is JSON with comments and trailing commas, as VS Code and Zed read their settings.
	JSONC = Dialect{Comments: true, TrailingCommas: true}
)

// MaxDepth bounds how deeply arrays and objects may nest: deeper input is refused rather
// than recursed into.
const MaxDepth = 256

// A SyntaxError is input that is not a document of the dialect; Line and Column (1-based,
// Column in characters) say where.
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// A Kind is what sort of value a Value is.
type Kind int

// The kinds of values.
const (
	Object Kind = iota
	Array
	String
	Number
	Literal // true, false or null
)

// A Value is one value of a parsed document: its bytes are src[Start:End].
type Value struct {
	Kind       Kind
	Start, End int
	Members    []Member // an Object's, in the file's order
	Elems      []*Value // an Array's
}

// A Member is one key and its value in an object.
type Member struct {
	Key      string // decoded
	KeyStart int    // where its opening quote is
	Value    *Value
}

// Parse parses src as one document of dialect d.
func Parse(src []byte, d Dialect) (*Value, error) {
	p := &parser{src: src, d: d}
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		p.i = 3
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.i == len(src) {
		return nil, p.errAt(p.i, "the file holds no value")
	}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.i != len(src) {
		return nil, p.errAt(p.i, fmt.Sprintf("%s after the end of the top-level value", p.describe(p.i)))
	}
	return v, nil
}

type parser struct {
	src []byte
	i   int
	d   Dialect
}

// Position is the line and column (1-based, column in characters) of offset off in src.
func Position(src []byte, off int) (line, col int) {
	if off > len(src) {
		off = len(src)
	}
	line = 1 + bytes.Count(src[:off], []byte("\n"))
	ls := bytes.LastIndexByte(src[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(src[ls:off])
}

func (p *parser) errAt(off int, msg string) error {
	line, col := Position(p.src, off)
	return &SyntaxError{Line: line, Column: col, Msg: msg}
}

func (p *parser) describe(off int) string {
	if off >= len(p.src) {
		return "the end of the file"
	}
	r, _ := utf8.DecodeRune(p.src[off:])
	if r == utf8.RuneError {
		return fmt.Sprintf("byte %#x", p.src[off])
	}
	return fmt.Sprintf("%q", r)
}

// skip passes over whitespace and, where the dialect has them, comments.
func (p *parser) skip() error {
	for p.i < len(p.src) {
		switch c := p.src[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		case c == '/' && p.i+1 < len(p.src) && (p.src[p.i+1] == '/' || p.src[p.i+1] == '*'):
			if !p.d.Comments {
				return p.errAt(p.i, "a comment, which plain JSON doesn't allow")
			}
			if p.src[p.i+1] == '/' {
				nl := bytes.IndexByte(p.src[p.i:], '\n')
				if nl < 0 {
					p.i = len(p.src)
				} else {
					p.i += nl + 1
				}
				continue
			}
			end := bytes.Index(p.src[p.i+2:], []byte("*/"))
			if end < 0 {
				return p.errAt(p.i, "a /* comment that is never closed with */")
			}
			p.i += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

func (p *parser) value(depth int) (*Value, error) {
	if depth >= MaxDepth {
		return nil, p.errAt(p.i, fmt.Sprintf("arrays and objects nested more than %d deep", MaxDepth))
	}
	if p.i >= len(p.src) {
		return nil, p.errAt(p.i, "the file ends where a value should be")
	}
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		start := p.i
		if err := p.str(); err != nil {
			return nil, err
		}
		return &Value{Kind: String, Start: start, End: p.i}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(p.src[p.i:], []byte(lit)) {
				start := p.i
				p.i += len(lit)
				if p.i < len(p.src) && isIdent(p.src[p.i]) {
					break
				}
				return &Value{Kind: Literal, Start: start, End: p.i}, nil
			}
		}
		return nil, p.errAt(p.i, "a word that is not true, false or null (strings need double quotes)")
	default:
		return nil, p.errAt(p.i, fmt.Sprintf("%s where a value should be", p.describe(p.i)))
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *parser) object(depth int) (*Value, error) {
	v := &Value{Kind: Object, Start: p.i}
	p.i++
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		v.End = p.i
		return v, nil
	}
	for {
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			return nil, p.errAt(p.i, fmt.Sprintf("%s where a member's key (a string in double quotes) should be", p.describe(p.i)))
		}
		keyStart := p.i
		if err := p.str(); err != nil {
			return nil, err
		}
		key, err := decodeString(p.src[keyStart:p.i])
		if err != nil {
			return nil, p.errAt(keyStart, err.Error())
		}
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return nil, p.errAt(p.i, fmt.Sprintf("%s where the ':' after the key %q should be", p.describe(p.i), key))
		}
		p.i++
		if err := p.skip(); err != nil {
			return nil, err
		}
		val, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v.Members = append(v.Members, Member{Key: key, KeyStart: keyStart, Value: val})
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.i < len(p.src) && p.src[p.i] == '}' {
			p.i++
			v.End = p.i
			return v, nil
		}
		if p.i >= len(p.src) || p.src[p.i] != ',' {
			return nil, p.errAt(p.i, fmt.Sprintf("%s where a ',' or the object's '}' should be (a missing comma?)", p.describe(p.i)))
		}
		comma := p.i
		p.i++
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.i < len(p.src) && p.src[p.i] == '}' {
			if !p.d.TrailingCommas {
				return nil, p.errAt(comma, "a comma after the object's last member, which this file's format doesn't allow")
			}
			p.i++
			v.End = p.i
			return v, nil
		}
	}
}

func (p *parser) array(depth int) (*Value, error) {
	v := &Value{Kind: Array, Start: p.i}
	p.i++
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		v.End = p.i
		return v, nil
	}
	for {
		e, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v.Elems = append(v.Elems, e)
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.i < len(p.src) && p.src[p.i] == ']' {
			p.i++
			v.End = p.i
			return v, nil
		}
		if p.i >= len(p.src) || p.src[p.i] != ',' {
			return nil, p.errAt(p.i, fmt.Sprintf("%s where a ',' or the array's ']' should be (a missing comma?)", p.describe(p.i)))
		}
		comma := p.i
		p.i++
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.i < len(p.src) && p.src[p.i] == ']' {
			if !p.d.TrailingCommas {
				return nil, p.errAt(comma, "a comma after the array's last element, which this file's format doesn't allow")
			}
			p.i++
			v.End = p.i
			return v, nil
		}
	}
}

// str passes over one string, checking its escapes and that it holds no control characters.
func (p *parser) str() error {
	start := p.i
	p.i++
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '"':
			p.i++
			return nil
		case c < 0x20:
			return p.errAt(p.i, "a control character (a line break?) inside a string: write it as an escape such as \\n")
		case c == '\\':
			if p.i+1 >= len(p.src) {
				return p.errAt(p.i, "a string that is never closed")
			}
			switch p.src[p.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i += 2
			case 'u':
				if p.i+6 > len(p.src) || !isHex4(p.src[p.i+2:p.i+6]) {
					return p.errAt(p.i, "a \\u escape without four hexadecimal digits")
				}
				p.i += 6
			default:
				return p.errAt(p.i, fmt.Sprintf("the escape \\%c, which JSON doesn't have (a Windows path needs \\\\ for each \\)", p.src[p.i+1]))
			}
		default:
			p.i++
		}
	}
	return p.errAt(start, "a string that is never closed")
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (p *parser) number() (*Value, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.src) && p.src[p.i] >= '0' && p.src[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.src[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.src) && p.src[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, p.errAt(start, "a number without digits")
	}
	if p.i < len(p.src) && p.src[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.errAt(start, "a number with no digits after its '.'")
		}
	}
	if p.i < len(p.src) && (p.src[p.i] == 'e' || p.src[p.i] == 'E') {
		p.i++
		if p.i < len(p.src) && (p.src[p.i] == '+' || p.src[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.errAt(start, "a number with no digits in its exponent")
		}
	}
	if p.i < len(p.src) && (isIdent(p.src[p.i]) || p.src[p.i] == '.') {
		return nil, p.errAt(start, "a malformed number")
	}
	return &Value{Kind: Number, Start: start, End: p.i}, nil
}

func decodeString(raw []byte) (string, error) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("a string JSON can't decode: %v", err)
	}
	return s, nil
}

// An Obj is a JSON object whose members are written in the order given, as a config file's
// reader expects to see them (encoding/json sorts a map's keys).
type Obj []Field

// A Field is one member of an Obj.
type Field struct {
	Key   string
	Value any
}

// MarshalJSON writes o's members in order.
func (o Obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(f.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Key, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping: a config file keeps "<" and "&" as written.
func marshal(v any) ([]byte, error) {
	return render(v, "", "", "\n")
}

// render writes v indented as a member at indent would be, with unit as the step and nl as
// the line ending.
func render(v any, indent, unit, nl string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if unit != "" {
		enc.SetIndent(indent, unit)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if nl != "\n" {
		out = bytes.ReplaceAll(out, []byte("\n"), []byte(nl))
	}
	return out, nil
}

// Lookup finds the value at path (object keys from the top) in src. It returns nil, nil
// when some key on the path is absent, and an error when src doesn't parse, when a key on
// the path is there twice, or when something on the path is not an object.
func Lookup(src []byte, d Dialect, path []string) (*Value, error) {
	root, err := Parse(src, d)
	if err != nil {
		return nil, err
	}
	v := root
	for i, key := range path {
		if v.Kind != Object {
			return nil, notObject(src, path[:i], v)
		}
		m, err := member(src, v, path[:i], key)
		if err != nil || m == nil {
			return nil, err
		}
		v = m.Value
	}
	return v, nil
}

func pathName(path []string) string {
	if len(path) == 0 {
		return "the top level"
	}
	b, _ := marshal(path[len(path)-1])
	return string(b)
}

func notObject(src []byte, path []string, v *Value) error {
	line, _ := Position(src, v.Start)
	kind := map[Kind]string{Array: "an array", String: "a string", Number: "a number", Literal: "a literal"}[v.Kind]
	return fmt.Errorf("line %d: %s is %s, not an object of members", line, pathName(path), kind)
}

// member finds key in obj: nil when absent, an error when it is there more than once
// (readers disagree on which one counts).
func member(src []byte, obj *Value, path []string, key string) (*Member, error) {
	var found *Member
	for i := range obj.Members {
		m := &obj.Members[i]
		if m.Key != key {
			continue
		}
		if found != nil {
			l1, _ := Position(src, found.KeyStart)
			l2, _ := Position(src, m.KeyStart)
			k, _ := marshal(key)
			return nil, fmt.Errorf("lines %d and %d: %s has the key %s twice; remove one", l1, l2, pathName(path), k)
		}
		found = m
	}
	return found, nil
}

// Set returns src with the member at path (object keys from the top; the last one is the
// member's) set to value, written as JSON: the objects on the path are made where absent,
// an existing member's value is replaced, and every other byte of src is kept. An empty or
// all-whitespace src is a document of its own. The result is checked to parse and to hold
// value at path before it is returned.
func Set(src []byte, d Dialect, path []string, value any) ([]byte, error) {
	if len(path) == 0 {
		return nil, fmt.Errorf("jsonc.Set: an empty path")
	}
	nl := "\n"
	if bytes.Contains(src, []byte("\r\n")) {
		nl = "\r\n"
	}
	var out []byte
	if len(bytes.TrimSpace(bytes.TrimPrefix(src, []byte("\xef\xbb\xbf")))) == 0 {
		doc, err := render(nest(path, value), "", "  ", nl)
		if err != nil {
			return nil, err
		}
		out = append(append(append([]byte{}, src...), doc...), nl...)
	} else {
		root, err := Parse(src, d)
		if err != nil {
			return nil, err
		}
		if root.Kind != Object {
			return nil, notObject(src, nil, root)
		}
		e := editor{src: src, nl: nl, unit: indentUnit(src, root)}
		obj := root
		done := false
		for i, key := range path {
			m, err := member(src, obj, path[:i], key)
			if err != nil {
				return nil, err
			}
			if m == nil {
				if err := e.insert(obj, key, nest(path[i+1:], value)); err != nil {
					return nil, err
				}
				done = true
				break
			}
			if i == len(path)-1 {
				if err := e.replace(m, value); err != nil {
					return nil, err
				}
				done = true
				break
			}
			if m.Value.Kind != Object {
				return nil, notObject(src, path[:i+1], m.Value)
			}
			obj = m.Value
		}
		if !done {
			return nil, fmt.Errorf("jsonc.Set: nothing to do") // unreachable: the loop ends by inserting or replacing
		}
		out = e.apply()
	}
	if err := check(out, d, path, value); err != nil {
		return nil, fmt.Errorf("setting %s: the result would not read back (%v); the file is left as it was", pathName(path), err)
	}
	return out, nil
}

// nest wraps value in one object a key of path, innermost last.
func nest(path []string, value any) any {
	for i := len(path) - 1; i >= 0; i-- {
		value = Obj{{path[i], value}}
	}
	return value
}

// check parses out and compares the value at path with value.
func check(out []byte, d Dialect, path []string, value any) error {
	v, err := Lookup(out, d, path)
	if err != nil {
		return err
	}
	if v == nil {
		return fmt.Errorf("%s is absent", pathName(path))
	}
	want, err := marshal(value)
	if err != nil {
		return err
	}
	var a, b any
	if err := json.Unmarshal(want, &a); err != nil {
		return err
	}
	if err := json.Unmarshal(out[v.Start:v.End], &b); err != nil {
		return err
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Errorf("%s reads back as %s", pathName(path), out[v.Start:v.End])
	}
	return nil
}

type edit struct {
	at, end int
	text    []byte
}

type editor struct {
	src   []byte
	nl    string
	unit  string
	edits []edit
}

// apply makes the edits from the end of the file back, so that each one's offsets still
// hold. Edits at one offset land in the order they were made (insert's comma, then its
// member): applied back to front, the last made goes in first and ends up after the rest.
func (e *editor) apply() []byte {
	order := make([]int, len(e.edits))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool {
		x, y := e.edits[order[a]], e.edits[order[b]]
		if x.at != y.at {
			return x.at > y.at
		}
		return order[a] > order[b]
	})
	out := append([]byte{}, e.src...)
	for _, i := range order {
		ed := e.edits[i]
		out = append(out[:ed.at], append(append([]byte{}, ed.text...), out[ed.end:]...)...)
	}
	return out
}

// lineStart is the offset at which off's line begins.
func (e *editor) lineStart(off int) int {
	return bytes.LastIndexByte(e.src[:off], '\n') + 1
}

// indent is the leading whitespace of off's line.
func (e *editor) indent(off int) string {
	ls := e.lineStart(off)
	i := ls
	for i < len(e.src) && (e.src[i] == ' ' || e.src[i] == '\t') {
		i++
	}
	return string(e.src[ls:i])
}

// firstOnLine says whether only spaces and tabs stand before off on its line.
func (e *editor) firstOnLine(off int) bool {
	return len(bytes.Trim(e.src[e.lineStart(off):off], " \t")) == 0
}

// indentUnit guesses the file's step of indentation from the top-level object's first
// member: two spaces when it can't tell.
func indentUnit(src []byte, root *Value) string {
	e := editor{src: src}
	if len(root.Members) > 0 {
		k := root.Members[0].KeyStart
		if e.firstOnLine(k) && e.lineStart(k) > e.lineStart(root.Start) {
			if in := e.indent(k); in != "" && len(in) <= 16 {
				return in
			}
		}
	}
	return "  "
}

func (e *editor) replace(m *Member, value any) error {
	text, err := render(value, e.indent(m.KeyStart), e.unit, e.nl)
	if err != nil {
		return err
	}
	e.edits = append(e.edits, edit{at: m.Value.Start, end: m.Value.End, text: text})
	return nil
}

func (e *editor) insert(obj *Value, key string, value any) error {
	objIndent := e.indent(obj.Start)
	memberIndent := objIndent + e.unit
	if len(obj.Members) > 0 && e.firstOnLine(obj.Members[0].KeyStart) {
		memberIndent = e.indent(obj.Members[0].KeyStart)
	}
	k, err := marshal(key)
	if err != nil {
		return err
	}
	v, err := render(value, memberIndent, e.unit, e.nl)
	if err != nil {
		return err
	}
	text := append(append(k, ": "...), v...)
	if n := len(obj.Members); n > 0 && !e.commaAfter(obj.Members[n-1].Value.End) {
		e.edits = append(e.edits, edit{at: obj.Members[n-1].Value.End, end: obj.Members[n-1].Value.End, text: []byte(",")})
	}
	closing := obj.End - 1
	if e.firstOnLine(closing) && e.lineStart(closing) > obj.Start {
		// The '}' on a line of its own: the new member goes on a line before it.
		at := e.lineStart(closing)
		ins := append(append([]byte(memberIndent), text...), e.nl...)
		e.edits = append(e.edits, edit{at: at, end: at, text: ins})
		return nil
	}
	ins := append(append(append([]byte(e.nl+memberIndent), text...), e.nl...), objIndent...)
	e.edits = append(e.edits, edit{at: closing, end: closing, text: ins})
	return nil
}

// commaAfter says whether a comma follows off, past whitespace and comments: a trailing
// comma already there.
func (e *editor) commaAfter(off int) bool {
	p := &parser{src: e.src, i: off, d: JSONC}
	if p.skip() != nil {
		return false
	}
	return p.i < len(e.src) && e.src[p.i] == ','
}

// Decode is v's value as encoding/json decodes into an any: objects as map[string]any
// (a key there twice keeps its last value), arrays as []any, numbers as float64.
// Comments and trailing commas, which encoding/json refuses, are not in the tree.
func Decode(src []byte, v *Value) (any, error) {
	switch v.Kind {
	case Object:
		m := make(map[string]any, len(v.Members))
		for _, mem := range v.Members {
			e, err := Decode(src, mem.Value)
			if err != nil {
				return nil, err
			}
			m[mem.Key] = e
		}
		return m, nil
	case Array:
		a := make([]any, len(v.Elems))
		for i, el := range v.Elems {
			e, err := Decode(src, el)
			if err != nil {
				return nil, err
			}
			a[i] = e
		}
		return a, nil
	}
	var x any
	if err := json.Unmarshal(src[v.Start:v.End], &x); err != nil {
		return nil, err
	}
	return x, nil
}

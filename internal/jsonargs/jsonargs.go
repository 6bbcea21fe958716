// Package jsonargs reads a JSON object's fields one by one, the way both the tools'
// arguments and the imported JSON Lines are read: unknown names refused with the known
// ones, each value's kind named when it is wrong, and text refused rather than repaired
// where encoding/json would put U+FFFD (a lone surrogate escape like \ud800).
package jsonargs

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"
)

var (
	// ErrNotObject is returned by Object for JSON that is not one object.
	ErrNotObject = errors.New("not a JSON object")
	// ErrNotString is returned by String for a value that is not a JSON string.
	ErrNotString = errors.New("not a JSON string")
	// ErrSurrogate is returned for text with an escape of half a character.
	ErrSurrogate = errors.New("an escape of half a character (an unpaired surrogate like \\ud800)")
	// ErrNotUTF8 is returned for bytes that are not valid UTF-8.
	ErrNotUTF8 = errors.New("not valid UTF-8")
)

// Field is one field of an object: its name and its value as raw JSON, both slices of the
// object's bytes (nothing is copied).
type Field struct {
	Name  string
	Value json.RawMessage
}

// Fields are an object's fields, in the order they came.
type Fields []Field

// Get gives the value of the field name (the last one, when the object repeats it, as
// encoding/json would), or nil.
func (fs Fields) Get(name string) json.RawMessage {
	for i := len(fs) - 1; i >= 0; i-- {
		if fs[i].Name == name {
			return fs[i].Value
		}
	}
	return nil
}

// Object reads raw, one JSON object, into its fields. Blank input and null are an empty
// object. It returns ErrNotUTF8 (the decoder would turn bad bytes into U+FFFD), a
// *json.SyntaxError for JSON that isn't, and ErrNotObject. It checks raw with json.Valid
// and then splits it without decoding, so a line's fields cost no copies (importing
// 100,000 messages through a map of json.RawMessage allocated a third of the 1.1 GB).
func Object(raw []byte) (Fields, error) {
	if !utf8.Valid(raw) {
		return nil, ErrNotUTF8
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return Fields{}, nil
	}
	if !json.Valid(t) {
		var v any
		if err := json.Unmarshal(t, &v); err != nil {
			return nil, err
		}
		return nil, errors.New("not valid JSON")
	}
	if t[0] != '{' {
		return nil, ErrNotObject
	}
	return split(t), nil
}

// FieldOf gives the value of one field of valid, JSON already checked (as mcp-go has
// checked a message before its hooks see it), or nil when valid isn't an object or hasn't
// the field. The field is the one encoding/json would decode into a struct's field of that
// name: the last whose name is name, ignoring case. It reads valid once, decoding nothing:
// a hook that looks at every message's method, with a whole document in its arguments,
// costs a scan of it and not a decoding.
func FieldOf(valid []byte, name string) json.RawMessage {
	t := bytes.TrimSpace(valid)
	if len(t) < 2 || t[0] != '{' {
		return nil
	}
	fs := split(t)
	for i := len(fs) - 1; i >= 0; i-- {
		if strings.EqualFold(fs[i].Name, name) {
			return fs[i].Value
		}
	}
	return nil
}

// split gives the fields of t, one valid JSON object without white space around it.
func split(t []byte) Fields {
	fs := make(Fields, 0, 8)
	i := space(t, 1)
	for t[i] != '}' {
		end := valueEnd(t, i)
		name := t[i+1 : end-1]
		key := string(name)
		if bytes.IndexByte(name, '\\') >= 0 {
			_ = json.Unmarshal(t[i:end], &key) // t is valid: it decodes
		}
		i = space(t, space(t, end)+1) // past the colon
		end = valueEnd(t, i)
		fs = append(fs, Field{Name: key, Value: t[i:end]})
		i = space(t, end)
		if t[i] == ',' {
			i = space(t, i+1)
		}
	}
	return fs
}

// space skips white space from i.
func space(t []byte, i int) int {
	for i < len(t) && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r') {
		i++
	}
	return i
}

// valueEnd gives the end of the JSON value that starts at i in valid JSON t.
func valueEnd(t []byte, i int) int {
	switch t[i] {
	case '"':
		for i++; t[i] != '"'; i++ {
			if t[i] == '\\' {
				i++
			}
		}
		return i + 1
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch t[i] {
			case '"':
				i = valueEnd(t, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(t) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(t[i])) {
		i++
	}
	return i
}

// Unknown gives the names of fields that known doesn't have, sorted.
func Unknown(fields Fields, known []string) []string {
	var unknown []string
	for _, f := range fields {
		if !slices.Contains(known, f.Name) && !slices.Contains(unknown, f.Name) {
			unknown = append(unknown, f.Name)
		}
	}
	slices.Sort(unknown)
	return unknown
}

// Given reports whether a field has a value: absent and null are not given.
func Given(val json.RawMessage) bool {
	return len(val) > 0 && !bytes.Equal(bytes.TrimSpace(val), []byte("null"))
}

// String decodes a JSON string, returning ErrNotString for another kind of value and
// ErrSurrogate for a lone surrogate escape.
func String(val json.RawMessage) (string, error) {
	if n := len(val); n >= 2 && val[0] == '"' && val[n-1] == '"' && bytes.IndexByte(val, '\\') < 0 && json.Valid(val) {
		return string(val[1 : n-1]), nil // nothing escaped: the bytes are the text
	}
	var s string
	if err := json.Unmarshal(val, &s); err != nil {
		return "", ErrNotString
	}
	if LoneSurrogate(val) >= 0 {
		return "", ErrSurrogate
	}
	return s, nil
}

// LoneSurrogate gives the offset in raw JSON of the first \u escape of a surrogate that
// isn't half of a pair (a high one followed by a low one), or -1. Backslashes appear in
// JSON only inside strings, so raw is read escape by escape, without parsing it.
func LoneSurrogate(raw []byte) int {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+1 >= len(raw) || raw[i+1] != 'u' {
			i++ // \" \\ \n ...: skip the escaped byte
			continue
		}
		r, ok := hex4(raw, i+2)
		if !ok {
			i++
			continue
		}
		switch {
		case r >= 0xD800 && r < 0xDC00:
			if i+11 < len(raw)+0 && raw[i+6] == '\\' && raw[i+7] == 'u' {
				if lo, ok := hex4(raw, i+8); ok && lo >= 0xDC00 && lo < 0xE000 {
					i += 11 // the pair
					continue
				}
			}
			return i
		case r >= 0xDC00 && r < 0xE000:
			return i
		}
		i += 5
	}
	return -1
}

func hex4(raw []byte, at int) (rune, bool) {
	if at+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, h := range raw[at : at+4] {
		switch {
		case h >= '0' && h <= '9':
			r = r<<4 | rune(h-'0')
		case h >= 'a' && h <= 'f':
			r = r<<4 | rune(h-'a'+10)
		case h >= 'A' && h <= 'F':
			r = r<<4 | rune(h-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Kind names the kind of JSON value val holds, as words: "text", "a number", "an object",
// "a list", "true or false", "null", or "nothing".
func Kind(val []byte) string {
	t := bytes.TrimSpace(val)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '"':
		return "text"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "true or false"
	case 'n':
		return "null"
	}
	return "a number"
}

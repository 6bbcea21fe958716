package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// Arguments are bound into a struct whose fields are tagged with the argument's name:
//
//	Document string `arg:"document,required"`
//	Version  *int   `arg:"version"`
//
// Only string, *string and *int fields are used. The binding refuses, naming the argument:
// names the tool doesn't take, missing required ones, empty required strings, and values of
// the wrong type. It never leaves a wrong type as a silent zero.

// argError is a mistake in a call's arguments, said so the model can fix it.
type argError string

func (e argError) Error() string { return string(e) }

type field struct {
	name     string
	required bool
	index    int
}

func fieldsOf(t reflect.Type) []field {
	var fs []field
	for i := range t.NumField() {
		tag, ok := t.Field(i).Tag.Lookup("arg")
		if !ok {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fs = append(fs, field{name: name, required: opts == "required", index: i})
	}
	return fs
}

// names lists the argument names a struct takes, in order: "document, old, new".
func names(fs []field) string {
	ns := make([]string, len(fs))
	for i, f := range fs {
		ns[i] = f.name
	}
	return strings.Join(ns, ", ")
}

// rawArguments gives the call's arguments as JSON: as they came on the wire when they did
// (so large integers keep their precision), else as the in-process caller gave them.
func rawArguments(req mcp.CallToolRequest) ([]byte, error) {
	if len(req.Params.RawArguments) > 0 {
		return req.Params.RawArguments, nil
	}
	if req.Params.Arguments == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(req.Params.Arguments)
}

// bind fills dst, a pointer to an argument struct, from the call's arguments.
func bind(tool string, req mcp.CallToolRequest, dst any) error {
	v := reflect.ValueOf(dst).Elem()
	fs := fieldsOf(v.Type())
	raw, err := rawArguments(req)
	if err != nil {
		return argError(fmt.Sprintf("%s's arguments could not be read: give them as an object with %s.", tool, names(fs)))
	}
	if !utf8.Valid(raw) {
		// The JSON decoder would quietly turn the bad bytes into U+FFFD; refuse instead, so
		// that no text is saved with characters nobody wrote.
		return argError(fmt.Sprintf("%s's arguments are not valid UTF-8 (the first bad byte is at %d): send text as UTF-8.", tool, firstInvalid(raw)))
	}
	var args map[string]json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		args = map[string]json.RawMessage{}
	} else if err := json.Unmarshal(t, &args); err != nil {
		return argError(fmt.Sprintf("%s takes its arguments as an object with %s.", tool, names(fs)))
	}
	var unknown []string
	for name := range args {
		if !hasField(fs, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return argError(fmt.Sprintf("%s takes %s; it got %s. Call it again with those names.", tool, names(fs), strings.Join(unknown, ", ")))
	}
	for _, f := range fs {
		val, ok := args[f.name]
		if ok && string(bytes.TrimSpace(val)) == "null" {
			ok = false
		}
		if !ok {
			if f.required {
				return argError(fmt.Sprintf("%s needs %s (it takes %s).", tool, f.name, names(fs)))
			}
			continue
		}
		if err := setField(v.Field(f.index), val); err != nil {
			return argError(fmt.Sprintf("%s's %s %s.", tool, f.name, err))
		}
		if f.required && v.Field(f.index).Kind() == reflect.String && v.Field(f.index).String() == "" {
			return argError(fmt.Sprintf("%s needs %s, and it can't be empty.", tool, f.name))
		}
	}
	return nil
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

func hasField(fs []field, name string) bool {
	for _, f := range fs {
		if f.name == name {
			return true
		}
	}
	return false
}

// setField decodes val into fv, returning the end of a sentence ("must be text; it got a
// number") when val has the wrong type.
func setField(fv reflect.Value, val json.RawMessage) error {
	switch fv.Type() {
	case reflect.TypeFor[string](), reflect.TypeFor[*string]():
		var s string
		if err := json.Unmarshal(val, &s); err != nil {
			return fmt.Errorf("must be text (a JSON string); it got %s", jsonKind(val))
		}
		if strings.ContainsRune(s, utf8.RuneError) && strings.Count(s, "\uFFFD") > givenReplacements(val) {
			return fmt.Errorf("has an escape of half a character (an unpaired surrogate like \\ud800): send text as UTF-8")
		}
		if fv.Kind() == reflect.Pointer {
			fv.Set(reflect.ValueOf(&s))
		} else {
			fv.SetString(s)
		}
	case reflect.TypeFor[*int]():
		n, err := wholeNumber(val)
		if err != nil {
			return err
		}
		fv.Set(reflect.ValueOf(&n))
	default:
		panic(fmt.Sprintf("tools: argument field of unsupported type %s", fv.Type()))
	}
	return nil
}

// givenReplacements counts the U+FFFD characters a JSON string really holds, written out
// or escaped: the decoder makes more of them from unpaired surrogate escapes.
func givenReplacements(val json.RawMessage) int {
	return bytes.Count(val, []byte("\uFFFD")) + len(escapedReplacement.FindAll(val, -1))
}

var escapedReplacement = regexp.MustCompile(`(?i)\\ufffd`)

// wholeNumber reads a JSON integer, or a string of one (models often quote numbers).
func wholeNumber(val json.RawMessage) (int, error) {
	text := string(bytes.TrimSpace(val))
	var s string
	if json.Unmarshal(val, &s) == nil {
		text = strings.TrimSpace(s)
	}
	n, err := strconv.ParseInt(text, 10, 32)
	switch {
	case err == nil:
		return int(n), nil
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("is far too large (%s)", text)
	}
	if f, ferr := strconv.ParseFloat(text, 64); ferr == nil {
		if f == math.Trunc(f) && math.Abs(f) > math.MaxInt32 {
			return 0, fmt.Errorf("is far too large (%s)", text)
		}
		return 0, fmt.Errorf("must be a whole number; it got %s", text)
	}
	return 0, fmt.Errorf("must be a whole number; it got %s", jsonKind(val))
}

func jsonKind(val json.RawMessage) string {
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

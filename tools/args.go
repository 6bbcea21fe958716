package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/internal/jsonargs"
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
	args, err := jsonargs.Object(raw)
	switch {
	case errors.Is(err, jsonargs.ErrNotUTF8):
		// The JSON decoder would quietly turn the bad bytes into U+FFFD; refuse instead, so
		// that no text is saved with characters nobody wrote.
		return argError(fmt.Sprintf("%s's arguments are not valid UTF-8 (the first bad byte is at %d): send text as UTF-8.", tool, firstInvalid(raw)))
	case err != nil:
		return argError(fmt.Sprintf("%s takes its arguments as an object with %s.", tool, names(fs)))
	}
	if unknown := jsonargs.Unknown(args, fieldNames(fs)); len(unknown) > 0 {
		return argError(fmt.Sprintf("%s takes %s; it got %s. Call it again with those names.", tool, names(fs), strings.Join(unknown, ", ")))
	}
	for _, f := range fs {
		val := args.Get(f.name)
		if !jsonargs.Given(val) {
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

func fieldNames(fs []field) []string {
	ns := make([]string, len(fs))
	for i, f := range fs {
		ns[i] = f.name
	}
	return ns
}

// setField decodes val into fv, returning the end of a sentence ("must be text; it got a
// number") when val has the wrong type.
func setField(fv reflect.Value, val json.RawMessage) error {
	switch fv.Type() {
	case reflect.TypeFor[string](), reflect.TypeFor[*string]():
		s, err := jsonargs.String(val)
		switch {
		case errors.Is(err, jsonargs.ErrSurrogate):
			return fmt.Errorf("has %v: send text as UTF-8", err)
		case err != nil:
			return fmt.Errorf("must be text (a JSON string); it got %s", jsonargs.Kind(val))
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
	return 0, fmt.Errorf("must be a whole number; it got %s", jsonargs.Kind(val))
}

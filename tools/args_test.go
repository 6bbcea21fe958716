package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

type testArgs struct {
	Document string  `arg:"document,required"`
	New      *string `arg:"new,required"`
	Version  *int    `arg:"version"`
	Title    string  `arg:"title"`
}

func request(raw string) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.RawArguments = json.RawMessage(raw)
	return req
}

func TestBind(t *testing.T) {
	for _, tc := range []struct {
		raw, want string // want: the error's words, or "" for a bound struct
	}{
		{`{"document":"a","new":""}`, ""},
		{`{"document":"a","new":"x","version":3}`, ""},
		{`{"document":"a","new":"x","version":"3"}`, ""},
		{`{"document":"a","new":"x","version":null}`, ""},
		{`{"document":"a","new":"x","old_text":"y","zzz":1}`, "t takes document, new, version, title; it got old_text, zzz."},
		{`{"new":"x"}`, "t needs document"},
		{`{"document":"","new":"x"}`, "t needs document, and it can't be empty."},
		{`{"document":"a"}`, "t needs new"},
		{`{"document":5,"new":"x"}`, "t's document must be text (a JSON string); it got a number."},
		{`{"document":"a","new":["x"]}`, "t's new must be text (a JSON string); it got a list."},
		{`{"document":"a","new":"x","version":2.5}`, "t's version must be a whole number; it got 2.5."},
		{`{"document":"a","new":"x","version":1e30}`, "t's version is far too large"},
		{`{"document":"a","new":"x","version":"two"}`, "t's version must be a whole number; it got text."},
		{`{"document":"a","new":"x","version":true}`, "t's version must be a whole number; it got true or false."},
		{`[1,2]`, "t takes its arguments as an object"},
		{`"text"`, "t takes its arguments as an object"},
		{"{\"document\":\"a\xff\",\"new\":\"x\"}", "not valid UTF-8 (the first bad byte is at 14)"},
		{`{"document":"a\ud800b","new":"x"}`, "t's document has an escape of half a character"},
		{`{"document":"a\ud83d\ude00 \uFFFD \ufffd �","new":"x"}`, ""},
	} {
		var a testArgs
		err := bind("t", request(tc.raw), &a)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("bind(%s) = %v, want it bound", tc.raw, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("bind(%s) = %v, want an error with %q", tc.raw, err, tc.want)
		}
	}
	var a testArgs
	if err := bind("t", request(`{"document":"d","new":"","version":"7","title":"T"}`), &a); err != nil || a.Document != "d" || *a.New != "" || *a.Version != 7 || a.Title != "T" {
		t.Errorf("bound %+v, %v", a, err)
	}
}

// Arguments given in-process (no raw JSON) bind the same way.
func TestBindInProcess(t *testing.T) {
	var req mcp.CallToolRequest
	req.Params.Arguments = map[string]any{"document": "d", "new": "n", "version": 2}
	var a testArgs
	if err := bind("t", req, &a); err != nil || *a.Version != 2 {
		t.Errorf("bound %+v, %v", a, err)
	}
}

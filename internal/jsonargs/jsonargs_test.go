package jsonargs

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

func TestLoneSurrogate(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want int
	}{
		{`"a\ud800b"`, 2},
		{`"\udc00"`, 1},
		{`"\ud83d\ude00"`, -1},
		{`"\uD83D\uDE00 \uD800"`, 14},
		{`"\\ud800"`, -1},
		{`"\\\ud800"`, 3},
		{`"\ud800\u0041"`, 1},
		{`"\ud800`, 1},
		{`"\ufffd \u00e9"`, -1},
		{`{"a":"x","b":"\ud800"}`, 14},
	} {
		if got := LoneSurrogate([]byte(tc.raw)); got != tc.want {
			t.Errorf("LoneSurrogate(%s) = %d, want %d", tc.raw, got, tc.want)
		}
	}
}

func TestString(t *testing.T) {
	if s, err := String([]byte(`"\ud83d\ude00 ok"`)); err != nil || s != "😀 ok" {
		t.Errorf("a pair: %q, %v", s, err)
	}
	if _, err := String([]byte(`"a\ud800"`)); !errors.Is(err, ErrSurrogate) {
		t.Errorf("a lone surrogate: %v, want ErrSurrogate", err)
	}
	if _, err := String([]byte(`5`)); !errors.Is(err, ErrNotString) {
		t.Errorf("a number: %v, want ErrNotString", err)
	}
	if _, err := Object([]byte("{\"a\":\"\xff\"}")); !errors.Is(err, ErrNotUTF8) {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if _, err := Object([]byte(`[1]`)); !errors.Is(err, ErrNotObject) {
		t.Errorf("a list: %v", err)
	}
}

func TestObjectSplitsLikeTheDecoder(t *testing.T) {
	raw := ` { "a" : "x\"}" , "b":[1,{"c":"]"}], "d\u0041": {"e":[]}, "n": -1.5e3, "t":true, "a":null } `
	fs, err := Object([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "null", "b": `[1,{"c":"]"}]`, "dA": `{"e":[]}`, "n": "-1.5e3", "t": "true"}
	for name, v := range want {
		if got := string(fs.Get(name)); got != v {
			t.Errorf("%s = %s, want %s", name, got, v)
		}
	}
	if u := Unknown(fs, []string{"b", "n"}); len(u) != 3 || u[0] != "a" {
		t.Errorf("Unknown = %v", u)
	}
	for _, bad := range []string{`{"a":}`, `{"a":1`, `[1]`, `"x"`, `5`} {
		if _, err := Object([]byte(bad)); err == nil {
			t.Errorf("Object(%s) = no error", bad)
		}
	}
	if fs, err := Object([]byte(" null ")); err != nil || len(fs) != 0 {
		t.Errorf("null: %v %v", fs, err)
	}
	if s, err := String([]byte(`"plain é"`)); err != nil || s != "plain é" {
		t.Errorf("String = %q %v", s, err)
	}
}

// FieldOf answers as decoding the message into a struct with that one field would, for
// the messages mcp-go lets through (valid JSON): the last of a repeated name, a name
// escaped, and not a field of the same name deeper down.
func TestFieldOfIsTheDecodersField(t *testing.T) {
	for _, raw := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`,
		`{"params":{"method":"tools/call","text":"\"method\":\"x\""},"method":"resources/list"}`,
		`{"method":"tools/call","method":"resources/list"}`,
		`{"me\u0074hod":"resources\/list"}`,
		` {"method" : "tools/call" } `,
		`{"params":{"method":"resources/list"}}`,
		`{"method":5}`,
		`{"Method":"resources/list"}`,
		`{"method":"resources/list","METHOD":"tools/call"}`,
		`{}`,
		`[{"method":"resources/list"}]`,
		`"method"`,
		`null`,
	} {
		var want struct {
			Method any `json:"method"`
		}
		_ = json.Unmarshal([]byte(raw), &want)
		var got any
		if v := FieldOf([]byte(raw), "method"); v != nil {
			if err := json.Unmarshal(v, &got); err != nil {
				t.Fatalf("%s: the field %s is not JSON: %v", raw, v, err)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want.Method) {
			t.Errorf("FieldOf(%s) = %v, want %v", raw, got, want.Method)
		}
	}
}

package reliability

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/mark3labs/mcp-go/client"
)

// Bad input, everywhere: every case gets a clear error (a tool result with isError, a
// JSON-RPC error, an HTTP status, an import that names the place), nothing is saved, and the
// server answers the next call.
//
//	go test -run 'TestBad|TestRaw|TestImport' -v ./e2e/reliability

// seeded makes a data file with "Launch plan" (2 versions) and the conversations of
// testdata/import/pricing.jsonl, through the person's commands.
func seeded(t *testing.T) (data, planID string) {
	t.Helper()
	data = newData(t)
	run(t, data, "", "import", "../../testdata/import/pricing.jsonl")
	out := run(t, data, "", "call", "write_document", "title=Launch plan", "text=Record the trailer.\n")
	planID = regexp.MustCompile(`/document/([0-9A-Z]{26})`).FindStringSubmatch(out)[1]
	run(t, data, "", "call", "append_document", "document=Launch plan", "text=Book the studio.")
	return data, planID
}

// run runs the testbin.Path with args and stdin, failing the test on a non-zero exit.
func run(t *testing.T, data, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(testbin.Path, args...)
	cmd.Env = append(os.Environ(), serverEnv(data)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("compass-mcp %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// badCall is a tool call that must be refused with an error result that has want in it.
type badCall struct {
	what string
	tool string
	args any
	want string
}

// huge reports whether the call has a string argument over 64 KiB.
func (bc badCall) huge() bool {
	args, _ := bc.args.(map[string]any)
	for _, v := range args {
		if s, ok := v.(string); ok && len(s) > 64<<10 {
			return true
		}
	}
	return false
}

func badCalls() []badCall {
	long := strings.Repeat("x", docstore.MaxText+1)
	return []badCall{
		// wrong types
		{"title a boolean", "write_document", map[string]any{"title": true, "text": "x"}, "title must be text"},
		{"text a number", "write_document", map[string]any{"title": "T", "text": 5}, "text must be text"},
		{"document an object", "read_document", map[string]any{"document": map[string]any{"id": "x"}}, "document must be text"},
		{"document a list", "append_document", map[string]any{"document": []any{"Launch plan"}, "text": "x"}, "document must be text"},
		{"new null", "edit_document", map[string]any{"document": "Launch plan", "old": "studio", "new": nil}, "needs new"},
		{"arguments a list", "list_documents", []any{1, 2}, "as an object"},
		{"arguments a string", "read_document", "Launch plan", "as an object"},
		{"arguments a number", "list_conversations", 5, "as an object"},
		// missing and unknown arguments
		{"no arguments", "read_document", map[string]any{}, "needs document"},
		{"no text", "append_document", map[string]any{"document": "Launch plan"}, "needs text"},
		{"no new", "edit_document", map[string]any{"document": "Launch plan", "old": "studio"}, "needs new"},
		{"no title, no document", "write_document", map[string]any{"text": "x"}, "needs a title"},
		{"no conversation", "read_conversation", map[string]any{}, "needs conversation"},
		{"old_text for old", "edit_document", map[string]any{"document": "Launch plan", "old_text": "studio", "new": "room"}, "edit_document takes document, old, new; it got old_text"},
		{"a misspelt limit", "list_documents", map[string]any{"limt": 5}, "links; it got limt"},
		// empty and huge strings, NUL
		{"empty document", "read_document", map[string]any{"document": ""}, "can't be empty"},
		{"empty text to append", "append_document", map[string]any{"document": "Launch plan", "text": ""}, "can't be empty"},
		{"only white space to append", "append_document", map[string]any{"document": "Launch plan", "text": " \n\t "}, "only white space"},
		{"empty old", "edit_document", map[string]any{"document": "Launch plan", "old": "", "new": "x"}, "can't be empty"},
		{"a text over 8 MiB", "write_document", map[string]any{"title": "Big", "text": long}, "at most 8 MiB"},
		{"an append over 8 MiB", "append_document", map[string]any{"document": "Launch plan", "text": long}, "at most 8 MiB"},
		{"an edit to over 8 MiB", "edit_document", map[string]any{"document": "Launch plan", "old": "studio", "new": long}, "at most 8 MiB"},
		{"old over 8 MiB", "edit_document", map[string]any{"document": "Launch plan", "old": long, "new": "x"}, "isn't in"},
		{"a document name of 1 MiB", "read_document", map[string]any{"document": strings.Repeat("nothing ", 131_072)}, "No document"},
		{"NUL in a text", "write_document", map[string]any{"title": "Nul", "text": "a\x00b"}, "NUL"},
		{"NUL in an append", "append_document", map[string]any{"document": "Launch plan", "text": "a\x00b"}, "NUL"},
		{"NUL in new", "edit_document", map[string]any{"document": "Launch plan", "old": "studio", "new": "a\x00b"}, "NUL"},
		{"NUL in a title", "write_document", map[string]any{"title": "A\x00B", "text": "x"}, "title won't do"},
		{"NUL in a name", "read_document", map[string]any{"document": "Launch\x00plan"}, "No document"},
		// titles
		{"a title of two lines", "write_document", map[string]any{"title": "Two\nlines", "text": "x"}, "one line"},
		{"a new title of two lines", "write_document", map[string]any{"document": "Launch plan", "title": "Two\r\nlines", "text": "x"}, "one line"},
		{"a title of only spaces", "write_document", map[string]any{"title": "   ", "text": "x"}, "needs a title"},
		{"a title of a tab", "write_document", map[string]any{"title": "\t", "text": "x"}, "needs a title"},
		{"a title of 201 characters", "write_document", map[string]any{"title": strings.Repeat("é", 201), "text": "x"}, "at most 200"},
		{"a title taken", "write_document", map[string]any{"title": "LAUNCH PLAN", "text": "x"}, "already titled"},
		// versions
		{"version 0", "read_document", map[string]any{"document": "Launch plan", "version": 0}, "1 or more"},
		{"version -1", "read_document", map[string]any{"document": "Launch plan", "version": -1}, "1 or more"},
		{"version 7", "read_document", map[string]any{"document": "Launch plan", "version": 7}, "versions 1 to 2: there's no version 7"},
		{"version 1e30", "read_document", map[string]any{"document": "Launch plan", "version": 1e30}, "far too large"},
		{"version 2^40", "read_document", map[string]any{"document": "Launch plan", "version": json.Number("1099511627776")}, "far too large"},
		{"version 2.5", "read_document", map[string]any{"document": "Launch plan", "version": 2.5}, "whole number"},
		{`version "two"`, "read_document", map[string]any{"document": "Launch plan", "version": "two"}, "whole number"},
		{"version true", "read_document", map[string]any{"document": "Launch plan", "version": true}, "whole number"},
		{"since 0", "read_document", map[string]any{"document": "Launch plan", "since": 0}, "1 or more"},
		{"since 9", "read_document", map[string]any{"document": "Launch plan", "since": 9}, "no version 9"},
		{"version and since", "read_document", map[string]any{"document": "Launch plan", "version": 1, "since": 1}, "not both"},
		{"write from version 0", "write_document", map[string]any{"document": "Launch plan", "text": "x", "version": 0}, "1 or more"},
		{"write from version -3", "write_document", map[string]any{"document": "Launch plan", "text": "x", "version": -3}, "1 or more"},
		{"write from version 9", "write_document", map[string]any{"document": "Launch plan", "text": "x", "version": 9}, "no version 9"},
		{"a new document from a version", "write_document", map[string]any{"title": "New", "text": "x", "version": 1}, "goes with document"},
		// limits
		{"limit 0", "list_documents", map[string]any{"limit": 0}, "1 to 500"},
		{"limit -5", "list_documents", map[string]any{"limit": -5}, "1 to 500"},
		{"limit 501", "list_documents", map[string]any{"limit": 501}, "1 to 500"},
		{"limit 1e12", "list_documents", map[string]any{"limit": 1e12}, "far too large"},
		{`limit "many"`, "list_documents", map[string]any{"limit": "many"}, "whole number"},
		{"conversations limit 0", "list_conversations", map[string]any{"limit": 0}, "1 to 500"},
		{"conversations limit 501", "list_conversations", map[string]any{"limit": 501}, "1 to 500"},
		{"messages limit 0", "read_conversation", map[string]any{"conversation": "pricing", "limit": 0}, "1 to 500"},
		{"messages limit 2.5", "read_conversation", map[string]any{"conversation": "pricing", "limit": 2.5}, "whole number"},
		// conversations
		{"before not an id", "read_conversation", map[string]any{"conversation": "pricing", "before": "yesterday"}, "before must be the id of a message"},
		{"before an id of nothing", "read_conversation", map[string]any{"conversation": "pricing", "before": "01JDX0000000000000000000000"}, "before must be the id of a message"},
		{"before a number", "read_conversation", map[string]any{"conversation": "pricing", "before": 5}, "before must be text"},
		{"a conversation that isn't", "read_conversation", map[string]any{"conversation": "nope"}, `No conversation "nope"`},
		{"a conversation id with NUL", "read_conversation", map[string]any{"conversation": "pri\x00cing"}, "No conversation"},
		{"a conversation id of 1 MiB", "read_conversation", map[string]any{"conversation": strings.Repeat("p", 1<<20)}, "No conversation"},
		// edits
		{"old not there", "edit_document", map[string]any{"document": "Launch plan", "old": "rehearse", "new": "x"}, "isn't in"},
		{"old there twice", "edit_document", map[string]any{"document": "Launch plan", "old": "the", "new": "a"}, "occurs 2 times"},
	}
}

// leak finds what an answer must never show: Go errors, stack traces, file paths.
var leak = regexp.MustCompile(`json: |goroutine \d|\.go:\d|panic|/tmp/|/home/|runtime\.`)

// TestBadToolInput sends every bad call over stdio and over HTTP (the huge ones but one over
// stdio only: they take the time, and the transport is not what they try). Each must be refused with
// an error result that says what is wrong, and the server must answer the next call; at the
// end, "Launch plan" is as it was and no other document was made.
func TestBadToolInput(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			data, planID := seeded(t)
			var c *client.Client
			var srv *server
			if transport == "stdio" {
				c = stdioClient(t, data, "--agent", "north")
			} else {
				srv = startHTTP(t, data, "--agent", "north")
				c = httpClient(t, srv.url, "bad")
			}
			for _, bc := range badCalls() {
				if bc.huge() && transport == "http" && bc.what != "a text over 8 MiB" {
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				a, err := call(ctx, c, bc.tool, bc.args)
				cancel()
				switch {
				case err != nil:
					t.Errorf("%s (%s): the call failed, where an error result was wanted: %v", bc.what, bc.tool, err)
				case !a.isError || !strings.Contains(a.text, bc.want):
					t.Errorf("%s (%s): %.300q (isError %v), want an error result with %q", bc.what, bc.tool, a.text, a.isError, bc.want)
				case leak.MatchString(a.text):
					t.Errorf("%s (%s): the answer shows the server's insides: %.300q", bc.what, bc.tool, a.text)
				}
				if transport == "stdio" && len(a.text) > 4096 {
					t.Logf("%s (%s): a %d-byte answer", bc.what, bc.tool, len(a.text))
				}
				if a := mustCall(t, c, "list_documents", nil); a.isError || !strings.Contains(a.text, "Launch plan") {
					t.Fatalf("after %s the server answers %q", bc.what, a.text)
				}
			}
			// A title of only spaces with document: not refused, but no title is made of it
			// (the text is the same, so no version either).
			a := mustCall(t, c, "write_document", map[string]any{"document": "Launch plan", "title": "  ", "text": "Record the trailer.\n\nBook the studio.\n"})
			if a.isError || !strings.Contains(a.text, "[Launch plan]") {
				t.Errorf("write_document with a title of only spaces: %q (isError %v); want it taken as no new title", a.text, a.isError)
			}
			if srv != nil {
				srv.stop(t)
			} else {
				c.Close()
			}
			db := openChecked(t, data)
			d, v, err := read(t, docstore.New(db, "personal"), planID, 0)
			if err != nil {
				t.Fatal(err)
			}
			if d.Title != "Launch plan" || d.Version != 2 || v.Text != "Record the trailer.\n\nBook the studio.\n" {
				t.Errorf("after the bad calls, Launch plan is %q at version %d: %q", d.Title, d.Version, v.Text)
			}
			total, _ := view(t, docstore.New(db, "personal"), func(r *docstore.Reader) (int, error) {
				_, total, err := r.List(10)
				return total, err
			})
			if total != 1 {
				t.Errorf("after the bad calls there are %d documents, want 1", total)
			}
		})
	}
}

// A text of exactly 8 MiB is taken, one byte more is not.
func TestTextLimitIsExact(t *testing.T) {
	t.Parallel()
	c := stdioClient(t, newData(t))
	a := mustCall(t, c, "write_document", map[string]any{"title": "Big", "text": strings.Repeat("x", docstore.MaxText)})
	if _, n, ok := saved(a); !ok || n != 1 {
		t.Errorf("a text of exactly 8 MiB: %.200q", a.text)
	}
	a = mustCall(t, c, "append_document", map[string]any{"document": "Big", "text": "y"})
	if !a.isError || !strings.Contains(a.text, "at most 8 MiB") {
		t.Errorf("an append past 8 MiB: %.200q", a.text)
	}
}

package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

var fuzzTools = []string{"list_documents", "read_document", "write_document", "append_document", "edit_document", "comment_document", "list_conversations", "read_conversation"}

// fuzzServer is a server on a data file with "Launch plan" (2 versions) and a conversation
// "pricing", and an in-process client of it.
type fuzzServer struct {
	c     *client.Client
	calls int
}

func newFuzzServer(tb testing.TB) *fuzzServer {
	tb.Helper()
	db := kvtest.Open(tb)
	ctx := tb.Context()
	ana := docstore.Author{By: "person:ana"}
	docs := docstore.New(db, "personal")
	if _, err := docs.Create(ctx, "Launch plan", "Record the trailer.\n", docstore.KindWrite, ana); err != nil {
		tb.Fatal(err)
	}
	if _, err := docs.Append(ctx, "Launch plan", "Book the studio.", ana); err != nil {
		tb.Fatal(err)
	}
	if _, err := threads.New(db, "personal").Say(ctx, "pricing", "Pricing", threads.Message{From: "person:ana", Text: "12 a month."}); err != nil {
		tb.Fatal(err)
	}
	srv, err := tools.New(db, tools.Config{Space: "personal", Agent: "a", For: "ana", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		tb.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "fuzz", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		tb.Fatal(err)
	}
	return &fuzzServer{c: c}
}

func (s *fuzzServer) close() {
	s.c.Close()
}

// FuzzToolArguments calls the tools with any JSON as arguments: never a panic, never a
// JSON-RPC error (arguments that are no object are refused as a result too), always an
// answer or an error result with words in it.
//
// go test -fuzz=FuzzToolArguments ./tools
// lasting is a fuzz iteration's t for a store that outlives the iteration making it (the
// server made afresh every 2,000 calls serves the iterations after): its cleanups (closing
// the store, removing its folder or schema) run when the fuzz run ends, not when the
// iteration does, which would leave the next calls a closed store.
type lasting struct {
	testing.TB
	cleanups *[]func()
}

func (l lasting) Cleanup(fn func()) { *l.cleanups = append(*l.cleanups, fn) }

func (l lasting) TempDir() string {
	dir, err := os.MkdirTemp("", "compass-fuzz-")
	if err != nil {
		l.Fatal(err)
	}
	l.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func FuzzToolArguments(f *testing.F) {
	for _, seed := range []struct {
		tool int
		args string
	}{
		{0, `{}`}, {0, `{"limit":3}`}, {0, `{"limit":"3"}`}, {0, `{"limit":0}`}, {0, `{"limit":1e30}`}, {0, `{"limt":5}`},
		{1, `{"document":"Launch plan"}`}, {1, `{"document":"launch","version":1}`}, {1, `{"document":"plan","since":1}`},
		{1, `{"document":"Launch plan","version":2.5}`}, {1, `{"document":"Launch plan","version":"two"}`}, {1, `{"document":"Launch plan","version":-1}`},
		{2, `{"title":"New","text":"# New\n"}`}, {2, `{"document":"Launch plan","text":"x\n","version":1}`}, {2, `{"title":"A\nB","text":"x"}`},
		{2, `{"title":true,"text":"x"}`}, {2, `{"title":"Nul","text":"a\u0000b"}`}, {2, `{"title":"   ","text":"x"}`},
		{3, `{"document":"Launch plan","text":"More."}`}, {3, `{"document":["x"],"text":"x"}`}, {3, `{"document":"Launch plan","text":"  "}`},
		{4, `{"document":"Launch plan","old":"trailer","new":"teaser"}`}, {4, `{"document":"Launch plan","old":"Record  the","new":"x"}`},
		{4, `{"document":"Launch plan","old_text":"x","new":"y"}`}, {4, `{"document":"Launch plan","old":"","new":null}`},
		{5, `{}`}, {5, `{"limit":501}`},
		{6, `{"conversation":"pricing"}`}, {6, `{"conversation":"pricing","limit":1,"before":"01JDX0000000000000000000000"}`}, {6, `{"conversation":"pricing","before":"x"}`},
		{0, `[1,2]`}, {1, `"Launch plan"`}, {2, `null`}, {3, `5`}, {4, `{"document":"Launch plan","old":"tr\ud800ailer","new":"x"}`},
		{1, "{\"document\":\"Launch \xff plan\"}"},
	} {
		f.Add(uint8(seed.tool), []byte(seed.args))
	}
	s := newFuzzServer(f)
	defer func() { s.close() }()
	var cleanups []func()
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}()
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		if !json.Valid(args) {
			t.Skip("not JSON: a client can't send it as arguments")
		}
		// A fresh data file now and then, so that the documents made don't slow every call.
		if s.calls++; s.calls%2000 == 0 {
			s.close()
			s = newFuzzServer(lasting{t, &cleanups})
		}
		tool := fuzzTools[int(which)%len(fuzzTools)]
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = json.RawMessage(args)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := s.c.CallTool(ctx, req)
		object := bytes.HasPrefix(bytes.TrimSpace(args), []byte("{"))
		if err != nil && overflows(args) {
			// mcp-go decodes arguments into float64s before any tool sees them, and refuses
			// the whole call (-32600) for a number beyond float64, such as 1e400: known, in
			// docs/RELIABILITY.md's findings.
			t.Skip("a number beyond float64: refused by mcp-go")
		}
		switch {
		case err != nil && (object || strings.Contains(err.Error(), "inside the server")):
			t.Fatalf("%s %s: a JSON-RPC error: %v", tool, args, err)
		case err != nil:
			return // arguments that are no object may be refused by the protocol
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		if strings.TrimSpace(text.String()) == "" {
			t.Fatalf("%s %s: an answer with no words (isError %v)", tool, args, res.IsError)
		}
	})
}

// overflows reports whether the JSON value raw holds a number beyond float64's range.
func overflows(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n, ok := tok.(json.Number); ok {
			if _, err := strconv.ParseFloat(string(n), 64); errors.Is(err, strconv.ErrRange) {
				return true
			}
		}
	}
}

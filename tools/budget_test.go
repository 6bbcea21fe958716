package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/charter"
	"github.com/compass-mcp/compass-mcp/internal/testkit/toolcalls"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// What the model reads costs its context, in both protocol eras (SPEC "What the model
// reads"). These budgets are bytes of JSON-RPC on the wire (a stdio line without its line
// break; over HTTP the same message in an SSE event or a JSON body):
const (
	// A tools/call response is at most its text's bytes × 1.5 (JSON escaping: quotes,
	// newlines, <, >, & as \u003c) plus callOverhead for the envelope: icons never ride along.
	callOverhead = 300
	// The server instructions, which every session pays for before any tool is loaded.
	mostInstructions = 1536
	// tools/list: every tool's name, title, description and input schema.
	mostToolsList = 6 << 10
	// write_document's answer (its text), the most frequent answer of a working session.
	mostWriteAnswer = 240
	// read_document with since = the latest version: the model has the document already.
	mostUnchanged = 100
)

// budgetLinkBase is the link base of a stdio server whose page is on this machine, as
// compass-mcp serve gives it: the links the answers hold are this long.
const budgetLinkBase = "http://127.0.0.1:7411"

// era is a protocol era: how a request says which (2026-07-28 in each request's _meta;
// 2025-11-25 after initialize).
type era struct {
	name string
	meta string // put first in params
}

var eras = []era{
	{"2025-11-25", ""},
	{"2026-07-28", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"budget","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}},`},
}

// budgetServer is a server on a space with a document of three versions and a
// conversation, answering raw JSON-RPC as a client of either era sends it.
type budgetServer struct {
	srv  *server.MCPServer
	plan docstore.Document
	n    int
}

func newBudgetServer(t *testing.T) *budgetServer {
	t.Helper()
	db := kvtest.Open(t)
	ctx := t.Context()
	docs := docstore.New(db, "personal")
	ana := docstore.Author{By: "person:ana"}
	north := docstore.Author{By: "agent:north", For: "person:ana"}
	saved, err := docs.Create(ctx, "Launch plan", "# Launch plan\n\nRecord the trailer on Tuesday.\nReview the course page.\nBook the studio for the voice-over.\n", docstore.KindWrite, ana)
	if err != nil {
		t.Fatal(err)
	}
	id := saved.Document.ID
	if _, err := docs.Append(ctx, id, "Ask Ben for the music.", north); err != nil {
		t.Fatal(err)
	}
	last, err := docs.Edit(ctx, id, "on Tuesday", "on Wednesday", north)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 8, 10, 42, 0, 0, time.UTC)
	conv := threads.New(db, "personal")
	for i, m := range []threads.Message{
		{From: "person:ana", To: "agent:north", Text: "Pricing: we settled on 12 a month."},
		{From: "agent:north", Text: "Noted: 12 a month, in the launch plan."},
		{From: "person:ana", Text: "And a yearly plan at 120."},
	} {
		m.At = at.Add(time.Duration(i) * time.Minute)
		if _, err := conv.Say(ctx, "pricing", "Pricing", m); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := New(db, Config{Space: "personal", For: "ana", Agent: "north", LinkBase: budgetLinkBase})
	if err != nil {
		t.Fatal(err)
	}
	return &budgetServer{srv: srv, plan: last.Document}
}

// send answers one request of the era, and returns the response as it goes on the wire.
func (b *budgetServer) send(t *testing.T, e era, method, params string) []byte {
	t.Helper()
	b.n++
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s%s}}`, b.n, method, e.meta, params)
	if params == "" {
		msg = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s}}`, b.n, method, strings.TrimSuffix(e.meta, ","))
	}
	raw, err := json.Marshal(b.srv.HandleMessage(context.Background(), json.RawMessage(msg)))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// call calls a tool and returns the response on the wire and the text of its answer.
func (b *budgetServer) call(t *testing.T, e era, tool string, args map[string]any) (raw []byte, text string, isError bool) {
	t.Helper()
	a, _ := json.Marshal(args)
	raw = b.send(t, e, "tools/call", fmt.Sprintf(`"name":%q,"arguments":%s`, tool, a))
	var res struct {
		Result struct {
			Content []struct{ Text string }
			IsError bool
		}
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Result.Content) == 0 {
		t.Fatalf("%s: %s: %.300s", e.name, tool, raw)
	}
	for _, c := range res.Result.Content {
		text += c.Text
	}
	return raw, text, res.Result.IsError
}

// Every tools/call response, an answer or a refusal of each tool, is at most its text × 1.5
// + callOverhead bytes in both eras: the icons travel in initialize and server/discover,
// which keep them, not in every result. write_document's answer is at most
// mostWriteAnswer bytes; read_document with since = the latest version at most
// mostUnchanged, a title of 200 four-byte characters included. Run with -v for the figures
// (docs/PERFORMANCE.md).
func TestCallBudgets(t *testing.T) {
	for _, e := range eras {
		b := newBudgetServer(t)
		for _, c := range toolcalls.Each {
			raw, text, isError := b.call(t, e, c.Tool, c.Args)
			if isError != c.Refuse {
				t.Errorf("%s: %s %v: isError %v: %s", e.name, c.Tool, c.Args, isError, text)
			}
			limit := len(text)*3/2 + callOverhead
			t.Logf("%s %s (refusal %v): %d bytes on the wire for %d of text (budget %d)", e.name, c.Tool, c.Refuse, len(raw), len(text), limit)
			if len(raw) > limit {
				t.Errorf("%s: %s %v: %d bytes for %d of text, over %d: %s", e.name, c.Tool, c.Args, len(raw), len(text), limit, raw)
			}
			if strings.Contains(string(raw), `"icons"`) {
				t.Errorf("%s: %s's response carries icons: %.400s", e.name, c.Tool, raw)
			}
			if c.Tool == "write_document" && !c.Refuse && len(text) > mostWriteAnswer {
				t.Errorf("%s: write_document's answer is %d bytes, over %d: %s", e.name, len(text), mostWriteAnswer, text)
			}
		}
		long := strings.Repeat("𝄞", 200)
		if _, text, isError := b.call(t, e, "write_document", map[string]any{"title": long, "text": "x"}); isError {
			t.Fatalf("%s: %s", e.name, text)
		}
		for _, name := range []string{"Launch plan", long} {
			_, latest, _ := b.call(t, e, "read_document", map[string]any{"document": name, "version": 1})
			var v int
			fmt.Sscanf(latest[strings.Index(latest, " of ")+4:], "%d", &v)
			_, text, isError := b.call(t, e, "read_document", map[string]any{"document": name, "since": v})
			want := fmt.Sprintf("unchanged since version %d.", v)
			if isError || len(text) > mostUnchanged || !strings.HasSuffix(text, want) {
				t.Errorf("%s: read_document since the latest (%d): %d bytes, want at most %d ending %q: %s", e.name, v, len(text), mostUnchanged, want, text)
			}
		}
	}
}

// The icons are where a client looks for them: serverInfo in initialize (2025-11-25) and
// server/discover (2026-07-28).
func TestIconsOnceASession(t *testing.T) {
	b := newBudgetServer(t)
	init := b.send(t, eras[0], "initialize", `"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"budget","version":"1"}`)
	discover := b.send(t, eras[1], "server/discover", "")
	for what, raw := range map[string][]byte{"initialize": init, "server/discover": discover} {
		if n := strings.Count(string(raw), `"src":"data:image/`); n != len(serverIcons) {
			t.Errorf("%s carries %d icons, want %d: %.300s", what, n, len(serverIcons), raw)
		}
	}
}

// The server instructions are at most 1.5 KB, and name every tool: a client that defers
// the tools (Claude Code) shows the model only these words and the tools' names.
// tools/list is at most 6 KB in both eras, with the tools' icons (an https link base) and
// without.
func TestInstructionsAndToolsListBudgets(t *testing.T) {
	if n := len(charter.Instructions); n > mostInstructions {
		t.Errorf("the instructions are %d bytes, over %d", n, mostInstructions)
	} else {
		t.Logf("instructions: %d bytes", n)
	}
	for _, name := range Names() {
		if !strings.Contains(charter.Instructions, name) {
			t.Errorf("the instructions don't name %s", name)
		}
	}
	for _, base := range []string{budgetLinkBase, "https://compass.example.com"} {
		srv, err := New(kvtest.Open(t), Config{Space: "personal", For: "ana", LinkBase: base})
		if err != nil {
			t.Fatal(err)
		}
		b := &budgetServer{srv: srv}
		for _, e := range eras {
			raw := b.send(t, e, "tools/list", "")
			var list struct{ Result struct{ Tools []mcp.Tool } }
			if err := json.Unmarshal(raw, &list); err != nil || len(list.Result.Tools) != len(Names()) {
				t.Fatalf("%s: tools/list: %.300s", e.name, raw)
			}
			t.Logf("%s tools/list, link base %s: %d bytes", e.name, base, len(raw))
			if len(raw) > mostToolsList {
				t.Errorf("%s: tools/list with link base %s is %d bytes, over %d", e.name, base, len(raw), mostToolsList)
			}
		}
	}
}

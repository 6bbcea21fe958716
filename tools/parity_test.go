package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/compass-mcp/compass-mcp/tools"
)

// The same data gives the same answers on bbolt and on PostgreSQL, byte for byte: the
// store is below kv and every rule (search included) above it, so they must; this checks
// it. Two ways:
//
//   - the same calls on both stores, writes and reads in turn: the transcripts are equal
//     once ids (made of random bits) are named by first appearance and times masked;
//   - the bbolt file copied into an empty schema (kv.Copy): then the very same bytes, ids
//     and times included, answer every read identically, unmasked.
//
// It needs a PostgreSQL database (COMPASS_TEST_POSTGRES or COMPASS_TEST_DATA).
//
//	COMPASS_TEST_POSTGRES=postgres://… go test -run TestSameAnswersOnBothStores -v ./tools
func TestSameAnswersOnBothStores(t *testing.T) {
	pgURL := kvtest.URL(t) // skips without a database (fails with CI=true)
	bolt, pg := kvtest.OpenFile(t), kvtest.OpenURL(t, pgURL)

	var transcripts [2]string
	for i, db := range []kv.DB{bolt, pg} {
		fill(t, db)
		c := parityClient(t, db)
		var b strings.Builder
		for _, s := range paritySteps {
			b.WriteString(callStep(t, c, s))
			if s.write {
				// Ids sort by their millisecond first: two documents made in one would be
				// ordered by their random bits, differently on each store.
				time.Sleep(2 * time.Millisecond)
			}
		}
		for _, s := range parityReads {
			b.WriteString(callStep(t, c, s))
		}
		transcripts[i] = mask(b.String())
	}
	if d := lineDiff(transcripts[0], transcripts[1]); d != "" {
		t.Errorf("the same calls answer differently on bbolt (-) and PostgreSQL (+):\n%s", d)
	}
	if !strings.Contains(transcripts[0], "Documents with \"trailer\" (3), best first") || !strings.Contains(transcripts[0], "Conversations with") {
		t.Fatalf("the transcript has no search answer or no conversation: the test checks nothing\n%s", transcripts[0])
	}

	copied := kvtest.OpenURL(t, kvtest.URL(t))
	if _, err := kv.Copy(bolt, copied); err != nil {
		t.Fatal(err)
	}
	var reads [2]string
	for i, db := range []kv.DB{bolt, copied} {
		c := parityClient(t, db)
		var b strings.Builder
		for _, s := range parityReads {
			b.WriteString(callStep(t, c, s))
		}
		reads[i] = b.String()
	}
	if d := lineDiff(reads[0], reads[1]); d != "" {
		t.Errorf("the same bytes answer differently on bbolt (-) and copied into PostgreSQL (+):\n%s", d)
	}
	t.Logf("%d calls, %d bytes of answers, the same on both stores; %d reads of the copied bytes, the same unmasked",
		len(paritySteps)+len(parityReads), len(transcripts[0]), len(parityReads))
}

// fill puts what the tools cannot make in db: conversations (imported from testdata, as
// compass-mcp import does) and a conversation said to in place.
func fill(t *testing.T, db kv.DB) {
	t.Helper()
	f, err := os.Open("../testdata/import/pricing.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	th := threads.New(db, "personal")
	if _, err := th.Import(f, "ana", nil); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"Shall we film in 東京 on Friday?", "Yes: book the café for the crew.", "And the **course page** goes live Monday."} {
		if _, err := th.Say("trailer-chat", "Trailer chat", threads.Message{From: "person:ana", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
}

func parityClient(t *testing.T, db kv.DB) *client.Client {
	t.Helper()
	srv, err := tools.New(db, tools.Config{Space: "personal", Agent: "north", For: "ana", LinkBase: "https://compass.example", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "parity", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

type parityStep struct {
	tool  string
	args  map[string]any
	write bool
}

// callStep calls s's tool and returns the call and its answer, as a txtar section.
func callStep(t *testing.T, c *client.Client, s parityStep) string {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = s.tool, s.args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s %v: %v", s.tool, s.args, err)
	}
	args, _ := json.Marshal(s.args)
	var b strings.Builder
	fmt.Fprintf(&b, "-- %s %s (isError %v) --\n", s.tool, args, res.IsError)
	for _, content := range res.Content {
		if tc, ok := content.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	b.WriteString("\n")
	return b.String()
}

var (
	ulidRE = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)
	timeRE = regexp.MustCompile(`\b\d{4}-\d\d-\d\d \d\d:\d\d\b`)
)

// mask names ids <id1>, <id2>... in the order they first appear, and masks times.
func mask(s string) string {
	ids := map[string]string{}
	s = ulidRE.ReplaceAllStringFunc(s, func(id string) string {
		if _, ok := ids[id]; !ok {
			ids[id] = fmt.Sprintf("<id%d>", len(ids)+1)
		}
		return ids[id]
	})
	return timeRE.ReplaceAllString(s, "<time>")
}

// lineDiff shows the lines of a and b that differ.
func lineDiff(a, b string) string {
	if a == b {
		return ""
	}
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var d strings.Builder
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y || i >= len(al) || i >= len(bl) {
			fmt.Fprintf(&d, "line %d:\n-%s\n+%s\n", i+1, x, y)
		}
	}
	return d.String()
}

func write(tool string, args map[string]any) parityStep {
	return parityStep{tool: tool, args: args, write: true}
}

func read(tool string, args map[string]any) parityStep { return parityStep{tool: tool, args: args} }

// paritySteps make documents of many kinds (accents, CJK, Markdown, long, many versions,
// renamed, clashing) and read them between the writes.
var paritySteps = func() []parityStep {
	notes := ""
	for i := 1; i <= 120; i++ {
		notes += fmt.Sprintf("Note %d about the %s.\n", i, []string{"trailer", "studio", "course page", "pricing", "café"}[i%5])
	}
	steps := []parityStep{
		write("write_document", map[string]any{"title": "Launch plan", "text": "# Launch\n\nRecord the trailer on Tuesday.\nReview the **course page** at the Café.\n"}),
		write("write_document", map[string]any{"title": "Trailer", "text": "Shoot it in 東京 on Friday.\n"}),
		write("write_document", map[string]any{"title": "Long notes", "text": notes}),
		write("write_document", map[string]any{"title": "Pricing", "text": "- 12 a month\n- 120 a year\n- e-mail the list about the price\n"}),
		write("write_document", map[string]any{"title": "Empty-ish", "text": "\n"}),
		write("write_document", map[string]any{"title": "Résumé naïve", "text": "Ñandú, façade, Æsir, straße, İstanbul, ǅ.\n"}),
		read("list_documents", map[string]any{}),
		write("edit_document", map[string]any{"document": "Launch plan", "old": "Tuesday", "new": "Wednesday"}),
		write("append_document", map[string]any{"document": "Launch plan", "text": "Book the studio for the trailer."}),
		write("edit_document", map[string]any{"document": "Launch plan", "old": "not there", "new": "x"}),
		write("write_document", map[string]any{"document": "Trailer", "title": "Trailer in Tokyo", "text": "Shoot it in 東京 on Friday.\nEdit on Monday.\n"}),
		write("write_document", map[string]any{"title": "Trailer in Tokyo", "text": "a clash of titles\n"}),
		write("append_document", map[string]any{"document": "Pricing", "text": "- a discount for teams"}),
		write("edit_document", map[string]any{"document": "Pricing", "old": "12 a month", "new": "15 a month"}),
		write("write_document", map[string]any{"document": "Pricing", "version": 1, "text": "- 12 a month\n- 120 a year\n- e-mail the list about the price\n- and a free week\n"}),
		read("read_document", map[string]any{"document": "Pricing"}),
		read("read_document", map[string]any{"document": "Pricing", "since": 1}),
	}
	for i := range 12 {
		steps = append(steps, write("append_document", map[string]any{"document": "Long notes", "text": fmt.Sprintf("Later note %d: the trailer again.", i)}))
	}
	return steps
}()

// parityReads read everything there is, in every way the tools read.
var parityReads = []parityStep{
	read("list_documents", map[string]any{}),
	read("list_documents", map[string]any{"limit": 2}),
	read("list_documents", map[string]any{"query": "trailer"}),
	read("list_documents", map[string]any{"query": "cafe \"course page\""}),
	read("list_documents", map[string]any{"query": "京"}),
	read("list_documents", map[string]any{"query": "東京"}),
	read("list_documents", map[string]any{"query": "email"}),
	read("list_documents", map[string]any{"query": "e-mail"}),
	read("list_documents", map[string]any{"query": "note studio", "limit": 1}),
	read("list_documents", map[string]any{"query": "\"later note\" trailer"}),
	read("list_documents", map[string]any{"query": "resume naive"}),
	read("list_documents", map[string]any{"query": "STRASSE istanbul"}),
	read("list_documents", map[string]any{"query": "tuesday"}),
	read("list_documents", map[string]any{"query": "podcast"}),
	read("list_documents", map[string]any{"query": "** --"}),
	read("read_document", map[string]any{"document": "Launch plan"}),
	read("read_document", map[string]any{"document": "Launch plan", "version": 1}),
	read("read_document", map[string]any{"document": "Launch plan", "since": 1}),
	read("read_document", map[string]any{"document": "Trailer in Tokyo", "since": 1}),
	read("read_document", map[string]any{"document": "Long notes", "lines": "95-110"}),
	read("read_document", map[string]any{"document": "Long notes", "since": 5}),
	read("read_document", map[string]any{"document": "launch"}),
	read("read_document", map[string]any{"document": "no such thing"}),
	read("read_document", map[string]any{"document": "Résumé naïve"}),
	read("list_conversations", map[string]any{}),
	read("list_conversations", map[string]any{"query": "price"}),
	read("list_conversations", map[string]any{"query": "東京 café"}),
	read("read_conversation", map[string]any{"conversation": "trailer-chat"}),
	read("list_conversations", map[string]any{"query": "settled 12"}),
	read("read_conversation", map[string]any{"conversation": "pricing"}),
	read("read_conversation", map[string]any{"conversation": "trailer", "limit": 1}),
	read("read_conversation", map[string]any{"conversation": "Pricing"}),
}

package command

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// The same data gives the same answers on bbolt and on PostgreSQL, byte for byte: the
// store is below kv and every rule (search included) above it, so they must; this checks
// it, end to end: servers on a bbolt file and on a PostgreSQL schema, over stdio.
//
//   - The same conversations imported and the same calls made on both, writes and reads in
//     turn: the transcripts are equal once ids (made of random bits) are named by first
//     appearance and times masked (masker).
//   - The bbolt file copied into an empty schema (compass-mcp copy): then the very same
//     bytes, ids and times included, answer every read identically, unmasked.
//
// It needs a PostgreSQL database (COMPASS_TEST_POSTGRES or COMPASS_TEST_DATA).
//
//	COMPASS_TEST_POSTGRES=postgres://… go test -run TestSameAnswersOnBothStores -v ./cmd/compass-mcp/command
func TestSameAnswersOnBothStores(t *testing.T) {
	t.Parallel()
	pg := kvtest.URL(t) // skips without a database (fails with CI=true)
	file := filepath.Join(t.TempDir(), "compass.db")
	fixtures := filepath.Join("..", "..", "..", "testdata", "import")
	var transcripts [2]string
	for i, data := range []string{file, pg} {
		for _, f := range []string{"pricing.jsonl", "claude-conversations.json"} {
			cli(t, data, "import", filepath.Join(fixtures, f))
		}
		c := stdioClient(t, data, "--agent", "north")
		m := masker{}
		var b strings.Builder
		// Ids sort by their millisecond first, and two documents one server makes in the
		// same millisecond in the order it made them (docstore's ids are monotonic in a
		// process): the writes need not wait for the clock to be told apart.
		for _, s := range paritySteps {
			b.WriteString(m.mask(transcribe(t, c, s)))
		}
		for _, s := range parityReads {
			b.WriteString(m.mask(transcribe(t, c, s)))
		}
		c.Close()
		transcripts[i] = b.String()
	}
	if d := lineDiff(transcripts[0], transcripts[1]); d != "" {
		t.Errorf("the same calls answer differently on bbolt (-want) and PostgreSQL (+got):\n%s", d)
	}
	if !strings.Contains(transcripts[0], `Documents for "trailer" (3), best first`) || !strings.Contains(transcripts[0], `Conversations for "sourdough" (1)`) {
		t.Fatalf("the transcript has no search answer: the test checks nothing\n%s", transcripts[0])
	}

	copied := kvtest.URL(t)
	cli(t, file, "copy", "--from", file, "--to", copied)
	var reads [2]string
	for i, data := range []string{file, copied} {
		c := stdioClient(t, data, "--agent", "north")
		var b strings.Builder
		for _, s := range parityReads {
			b.WriteString(transcribe(t, c, s))
		}
		c.Close()
		reads[i] = b.String()
	}
	if d := lineDiff(reads[0], reads[1]); d != "" {
		t.Errorf("the same bytes answer differently on bbolt (-want) and copied into PostgreSQL (+got):\n%s", d)
	}
	t.Logf("%d calls, %d bytes of answers, the same on both stores; %d reads of the copied bytes, the same unmasked",
		len(paritySteps)+len(parityReads), len(transcripts[0]), len(parityReads))
}

// transcribe calls s on c and returns the call and its answer, as a txtar file.
func transcribe(t *testing.T, c *client.Client, s step) string {
	t.Helper()
	args, _ := json.Marshal(s.args)
	a := callTool(t, c, s.tool, s.args)
	return fmt.Sprintf("-- %s %s (isError %v) --\n%s\n", s.tool, args, a.isError, a.text)
}

// paritySteps make documents of many kinds (accents, CJK, Markdown, long, many versions,
// renamed, clashing) and read them between the writes.
var paritySteps = func() []step {
	notes := ""
	for i := 1; i <= 120; i++ {
		notes += fmt.Sprintf("Note %d about the %s.\n", i, []string{"trailer", "studio", "course page", "pricing", "café"}[i%5])
	}
	steps := []step{
		{"write_document", map[string]any{"title": "Launch plan", "text": "# Launch\n\nRecord the trailer on Tuesday.\nReview the **course page** at the Café.\n"}},
		{"write_document", map[string]any{"title": "Trailer", "text": "Shoot it in 東京 on Friday.\n"}},
		{"write_document", map[string]any{"title": "Long notes", "text": notes}},
		{"write_document", map[string]any{"title": "Pricing", "text": "- 12 a month\n- 120 a year\n- e-mail the list about the price\n"}},
		{"write_document", map[string]any{"title": "Empty-ish", "text": "\n"}},
		{"write_document", map[string]any{"title": "Résumé naïve", "text": "Ñandú, façade, Æsir, straße, İstanbul, ǅ.\n"}},
		{"list_documents", map[string]any{}},
		{"edit_document", map[string]any{"document": "Launch plan", "old": "Tuesday", "new": "Wednesday"}},
		{"append_document", map[string]any{"document": "Launch plan", "text": "Book the studio for the trailer."}},
		{"edit_document", map[string]any{"document": "Launch plan", "old": "not there", "new": "x"}},
		{"write_document", map[string]any{"document": "Trailer", "title": "Trailer in Tokyo", "text": "Shoot it in 東京 on Friday.\nEdit on Monday.\n"}},
		{"write_document", map[string]any{"title": "Trailer in Tokyo", "text": "a clash of titles\n"}},
		{"append_document", map[string]any{"document": "Pricing", "text": "- a discount for teams"}},
		{"edit_document", map[string]any{"document": "Pricing", "old": "12 a month", "new": "15 a month"}},
		{"write_document", map[string]any{"document": "Pricing", "version": 1, "text": "- 12 a month\n- 120 a year\n- e-mail the list about the price\n- and a free week\n"}},
		{"read_document", map[string]any{"document": "Pricing"}},
		{"read_document", map[string]any{"document": "Pricing", "since": 1}},
	}
	for i := range 12 {
		steps = append(steps, step{"append_document", map[string]any{"document": "Long notes", "text": fmt.Sprintf("Later note %d: the trailer again.", i)}})
	}
	return steps
}()

// parityReads read everything there is, in every way the tools read.
var parityReads = []step{
	{"list_documents", map[string]any{}},
	{"list_documents", map[string]any{"limit": 2}},
	{"list_documents", map[string]any{"query": "trailer"}},
	{"list_documents", map[string]any{"query": "cafe \"course page\""}},
	{"list_documents", map[string]any{"query": "京"}},
	{"list_documents", map[string]any{"query": "東京"}},
	{"list_documents", map[string]any{"query": "email"}},
	{"list_documents", map[string]any{"query": "e-mail"}},
	{"list_documents", map[string]any{"query": "note studio", "limit": 1}},
	{"list_documents", map[string]any{"query": "\"later note\" trailer"}},
	{"list_documents", map[string]any{"query": "resume naive"}},
	{"list_documents", map[string]any{"query": "STRASSE istanbul"}},
	{"list_documents", map[string]any{"query": "tuesday"}},
	{"list_documents", map[string]any{"query": "podcast"}},
	{"list_documents", map[string]any{"query": "** --"}},
	{"read_document", map[string]any{"document": "Launch plan"}},
	{"read_document", map[string]any{"document": "Launch plan", "version": 1}},
	{"read_document", map[string]any{"document": "Launch plan", "since": 1}},
	{"read_document", map[string]any{"document": "Trailer in Tokyo", "since": 1}},
	{"read_document", map[string]any{"document": "Long notes", "lines": "95-110"}},
	{"read_document", map[string]any{"document": "Long notes", "since": 5}},
	{"read_document", map[string]any{"document": "launch"}},
	{"read_document", map[string]any{"document": "no such thing"}},
	{"read_document", map[string]any{"document": "Résumé naïve"}},
	{"list_conversations", map[string]any{}},
	{"list_conversations", map[string]any{"limit": 2}},
	{"list_conversations", map[string]any{"query": "price"}},
	{"list_conversations", map[string]any{"query": "trailer monday"}},
	{"list_conversations", map[string]any{"query": "\"extra day\" water"}},
	{"list_conversations", map[string]any{"query": "sourdough"}},
	{"read_conversation", map[string]any{"conversation": "0b6f4c1e-7d2a-4e8b-9c61-3f5a2d8e1a01"}},
	{"read_conversation", map[string]any{"conversation": "no-such-conversation"}},
	{"list_conversations", map[string]any{"query": "settled 12"}},
	{"read_conversation", map[string]any{"conversation": "pricing"}},
	{"read_conversation", map[string]any{"conversation": "trailer", "limit": 1}},
	{"read_conversation", map[string]any{"conversation": "Pricing"}},
}

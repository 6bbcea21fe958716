package tools_test

import (
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// An answer never echoes a hostile query whole (issue 36, item 15): a word of 1 MiB comes
// back cut at 100 characters, and a query that is one phrase is not quoted twice.
func TestSearchEchoIsBounded(t *testing.T) {
	is := newIsolation(t)
	huge := strings.Repeat("a", 1<<20)
	for _, tc := range []struct {
		tool, query, want string
	}{
		{"list_documents", huge, `No document here has "` + strings.Repeat("a", 100) + `…" in its title or text.`},
		{"list_documents", `"` + huge + `"`, `No document here has "` + strings.Repeat("a", 100) + `…" as quoted`},
		{"list_documents", huge + " nothing", `Documents for "` + strings.Repeat("a", 100) + `… nothing" (0 with every word, 1 with some)`},
		{"list_conversations", huge, `No other conversation here has "` + strings.Repeat("a", 100) + `…" in what was said.`},
		{"list_documents", `"nothing secret"`, "Documents for “nothing secret” (1), best first:"},
		{"list_documents", `“nothing secret”`, "Documents for “nothing secret” (1), best first:"},
		{"list_conversations", `"hello from"`, "Conversations for “hello from” (1), best first:"},
		{"list_documents", `nothing "secret"`, "Documents for \"nothing “secret”\" (1 with every word, 0 with some)"},
	} {
		text, isError := is.call(t, tc.tool, map[string]any{"query": tc.query})
		if isError || !strings.Contains(text, tc.want) {
			t.Errorf("%s query=%.40q… = %.300q (isError %v), want %q in it", tc.tool, tc.query, text, isError, tc.want)
		}
		if len(text) > 2000 {
			t.Errorf("%s query=%.40q…: the answer is %d bytes", tc.tool, tc.query, len(text))
		}
	}
}

// A mistyped word is searched for as the nearest word the documents have, and the answer
// says so in one line (issue 36, item 12); a word spelled as the documents have it is
// never changed.
func TestSearchForgivesTypos(t *testing.T) {
	is := newIsolation(t)
	if _, err := docstore.New(is.db, "personal").Create(t.Context(), "Refunds", "Our policy: refunds within 14 days.\n", docstore.KindWrite, docstore.Author{By: "person:ana"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool, query, want string
	}{
		{"list_documents", "pubilc secert", `No document here has "pubilc" nor "secert": searched for the nearest words "public", "secret" instead`},
		{"list_documents", "pubilc secert", `Documents for "public secret" (1 with every word, 0 with some)`},
		{"list_documents", "polciy", `No document here has "polciy": searched for the nearest words "policy" instead`},
		{"list_conversations", "helo", `No other conversation here has "helo": searched for the nearest words "hello" instead`},
		{"list_documents", "nothing secret", "Documents for \"nothing secret\""},
	} {
		text, isError := is.call(t, tc.tool, map[string]any{"query": tc.query})
		if isError || !strings.Contains(text, tc.want) {
			t.Errorf("%s query=%q = %q (isError %v), want %q in it", tc.tool, tc.query, text, isError, tc.want)
		}
		if tc.query == "nothing secret" && strings.Contains(text, "nearest") {
			t.Errorf("a query spelled right was changed: %q", text)
		}
		if s := is.shows(text, tc.query); s != "" {
			t.Errorf("%s query=%q shows %q of the other space", tc.tool, tc.query, s)
		}
	}
}

// A look-alike title is refused naming the document that has the look (issue 36, item 16).
func TestWriteRefusesLookAlikeTitle(t *testing.T) {
	is := newIsolation(t)
	text, isError := is.call(t, "write_document", map[string]any{"title": "Public\u00a0notes", "text": "x"})
	if !isError || !strings.Contains(text, `looks the same as another document's here, "Public notes": [Public notes](`) {
		t.Errorf("write_document of a look-alike title = %q (isError %v)", text, isError)
	}
	text, isError = is.call(t, "write_document", map[string]any{"title": "Public\u200bnotes", "text": "x"})
	if !isError || !strings.Contains(text, "invisible character (U+200B)") {
		t.Errorf("write_document of a title with a zero-width space = %q (isError %v)", text, isError)
	}
}

package threads

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/search"
)

// scanConversations is the brute-force answer: the conversations (but except) whose title
// or readable messages have every quoted phrase and at least one term (the terms not
// quoted by their stems).
func scanConversations(t *testing.T, s *Store, query, except string) []string {
	t.Helper()
	q, err := search.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	convs, err := readRecent(t, s, 1<<20, except)
	if err != nil {
		t.Fatal(err)
	}
	joined := func(toks []string, stem bool) string {
		if stem {
			for i, tok := range toks {
				toks[i] = search.Stem(tok)
			}
		}
		return " " + strings.Join(toks, " ") + " "
	}
	var ids []string
	for _, c := range convs {
		msgs, _, err := readPage(t, s, c.ID, 1<<20, "")
		if err != nil {
			t.Fatal(err)
		}
		texts := []string{c.Title}
		for _, m := range msgs {
			texts = append(texts, m.Text)
		}
		var in uint64
		for i, term := range q.Terms {
			for _, text := range texts {
				if strings.Contains(joined(search.Tokens(text), !term.Quoted), joined(slices.Clone(term.Tokens), !term.Quoted)) {
					in |= 1 << i
				}
			}
		}
		if in&q.Required() != 0 && in&q.Quoted() == q.Quoted() {
			ids = append(ids, c.ID)
		}
	}
	slices.Sort(ids)
	if unquoted := search.Unquoted(query); len(ids) == 0 && unquoted != query {
		return scanConversations(t, s, unquoted, except)
	}
	return ids
}

func searchConversations(t *testing.T, s *Store, query, except string) []string {
	t.Helper()
	res, err := readSearch(t, s, query, 0, except)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range res.Found {
		ids = append(ids, f.Conversation.ID)
		for _, l := range f.Lines {
			if l.Message.Private {
				t.Errorf("%q shows a private message: %+v", query, l)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

func TestSearchConversationsAgreesWithAScan(t *testing.T) {
	ctx := t.Context()
	db := openDB(t)
	s := New(db, "personal").WithClock(clock(t0))
	other := New(db, "launch").WithClock(clock(t0))
	words := []string{"pricing", "Pricing:", "12", "month", "café", "cafe", "東京", "e-mail", "decision", "list_documents"}
	r := rand.New(rand.NewPCG(3, 3))
	text := func() string {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(words[r.IntN(len(words))] + " ")
		}
		return b.String()
	}
	queries := []string{"pricing", "12 month", `"pricing 12"`, "cafe", "東京", "e-mail", "decision pricing", "list_documents", "secret"}
	check := func(step string) {
		t.Helper()
		for _, q := range queries {
			for _, except := range []string{"", "c1"} {
				if got, want := searchConversations(t, s, q, except), scanConversations(t, s, q, except); !slices.Equal(got, want) {
					t.Errorf("after %s, %q (but %q) found %v; a scan finds %v", step, q, except, got, want)
				}
			}
		}
		if err := s.CheckIndex(ctx); err != nil {
			t.Errorf("after %s: %v", step, err)
		}
	}
	for i := range 20 {
		say(t, s, fmt.Sprintf("c%d", i%6), "", Message{From: "person:ana", Text: text()})
	}
	check("the first messages (the index built on the first search)")
	for round := range 60 {
		conv := fmt.Sprintf("c%d", r.IntN(8))
		title := ""
		if r.IntN(4) == 0 {
			title = text()
		}
		say(t, s, conv, title, Message{From: "agent:north", Text: text(), Private: r.IntN(3) == 0})
		say(t, other, conv, "", Message{From: "person:ana", Text: "secret " + text()})
		if round%10 == 9 {
			check(fmt.Sprintf("round %d", round))
		}
	}
	lines := `{"conversation":"imported","title":"Pricing talk","from":"person:ana","text":"We settled on 12 a month."}
{"conversation":"imported","from":"agent:north","text":"list_documents secret step","private":true}
`
	if _, err := s.Import(ctx, strings.NewReader(lines), "ana", nil); err != nil {
		t.Fatal(err)
	}
	check("an import")
	if _, err := readSearch(t, s, "** --", 10, ""); !errors.Is(err, ErrQuery) {
		t.Errorf("a query of punctuation: %v, want ErrQuery", err)
	}
}

func TestSearchConversationsAnswer(t *testing.T) {
	s := New(openDB(t), "personal").WithClock(clock(t0))
	say(t, s, "pricing", "Pricing", Message{From: "person:ana", Text: "Hello.\nWe settled on 12 a month."})
	say(t, s, "pricing", "", Message{From: "agent:north", Text: "list_documents → 12 a month", Private: true})
	say(t, s, "pricing", "", Message{From: "agent:north", Text: "Noted: 12 a month."})
	say(t, s, "other", "Other", Message{From: "person:ana", Text: "Nothing about it."})
	res, err := readSearch(t, s, "month 12", 10, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 1 || len(res.Found[0].Lines) != 2 {
		t.Fatalf("%+v", res)
	}
	l := res.Found[0].Lines[0]
	if l.Line.Number != 2 || l.Line.Text != "We settled on 12 a month." || l.Message.From != "person:ana" {
		t.Errorf("first line %+v", l)
	}
	if res.Found[0].Lines[1].Message.From != "agent:north" || res.Found[0].Lines[1].Line.Text != "Noted: 12 a month." {
		t.Errorf("second line %+v", res.Found[0].Lines[1])
	}
	if res, _ := readSearch(t, s, "pricing", 10, "pricing"); res.Total != 0 {
		t.Errorf("the conversation left out was found: %+v", res)
	}
	if res, _ := readSearch(t, s, "pricing", 10, ""); res.Total != 1 || len(res.Found[0].Lines) != 0 {
		t.Errorf("a title-only match: %+v", res)
	}
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/search"
	"github.com/compass-mcp/compass-mcp/semantic"
	"github.com/compass-mcp/compass-mcp/threads"
)

// queryRefusal says why a query can't be searched for.
func queryRefusal(tool string) error {
	return refusef("%s's query has no word to look for: give words, or \"a phrase\" in double quotes.", tool)
}

// maxShownQuery is about the most bytes of a query an answer repeats.
const maxShownQuery = 160

// shown is the query as answers show it, in quotes: its terms, each cut at 100 characters
// (short), a quoted phrase in curly quotes, the whole cut when long. A query that is one
// phrase is shown in its own curly quotes alone, not quoted twice.
func shown(q search.Query) string {
	ts := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		if t.Quoted {
			ts[i] = "“" + short(strings.Trim(t.Text, `"`)) + "”"
		} else {
			ts[i] = short(t.Text)
		}
	}
	out := strings.Join(ts, " ")
	if len(out) > maxShownQuery {
		cut := maxShownQuery
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = strings.TrimRight(out[:cut], " ") + "…"
	}
	if len(q.Terms) == 1 && q.Terms[0].Quoted {
		return out
	}
	return `"` + out + `"`
}

// terms names the terms a document must have for none to be found: the quoted phrases
// (all of them), else any of the words; each cut at 100 characters (short), as names are.
func terms(q search.Query) string {
	var ts []string
	join := " or "
	for i, t := range q.Terms {
		if q.Quoted()&(1<<i) != 0 {
			ts = append(ts, strconv.Quote(short(strings.Trim(t.Text, `"`))))
		}
	}
	if len(ts) > 0 {
		join = " and "
	} else {
		for _, t := range q.Terms {
			ts = append(ts, strconv.Quote(short(t.Text)))
		}
	}
	if len(ts) > 6 {
		ts = append(ts[:5], fmt.Sprintf("%d more", len(ts)-5))
	}
	if len(ts) == 1 {
		return ts[0]
	}
	if join == " or " && len(ts) > 1 {
		return "any of " + strings.Join(ts[:len(ts)-1], ", ") + " or " + ts[len(ts)-1]
	}
	return strings.Join(ts[:len(ts)-1], ", ") + join + ts[len(ts)-1]
}

// counted is how many were found, as a search's header says it: with every word, with
// some (for a query of more than one term).
func counted(q search.Query, every, some int) string {
	if len(q.Terms) == 1 {
		return strconv.Itoa(every + some)
	}
	return fmt.Sprintf("%d with every word, %d with some", every, some)
}

// fixes is the line that says which words of the query no item had and what was searched
// for instead (search.Fix), each shown as a word of the texts found (texts) when one has
// it; "" when none was.
func fixes(q search.Query, none string, texts []string) string {
	if len(q.Fixes) == 0 {
		return ""
	}
	was := make([]string, len(q.Fixes))
	now := make([]string, len(q.Fixes))
	for i, f := range q.Fixes {
		was[i] = strconv.Quote(short(f.Word))
		now[i] = strconv.Quote(search.Word(f.Key, texts...))
	}
	return fmt.Sprintf("%s %s: searched for the nearest words %s instead (put a word in double quotes to search for it as written).\n", none, strings.Join(was, " nor "), strings.Join(now, ", "))
}

// fixedWords is q with the terms that fixed a typo shown as a word of texts, not as the
// index's key (a stem) they are.
func fixedWords(q search.Query, texts []string) search.Query {
	if len(q.Fixes) == 0 {
		return q
	}
	q.Terms = slices.Clone(q.Terms)
	for _, f := range q.Fixes {
		for i, t := range q.Terms {
			if !t.Quoted && t.Text == f.Key {
				q.Terms[i].Text = search.Word(f.Key, texts...)
			}
		}
	}
	return q
}

// searchNotes are the last lines of a search's answer: what was left out of the query, or
// of the reading.
func searchNotes(b *strings.Builder, q search.Query, unread int) {
	if q.Partial {
		fmt.Fprintf(b, "Only %d words and phrases of the query, %d words in all, were looked for: its quoted phrases and its rarest words in the index.\n", search.MaxTerms, search.MaxTokens)
	}
	if unread > 0 {
		fmt.Fprintf(b, "%d more may have the phrase but were not read (too much text): give more words, or a longer phrase.\n", unread)
	}
}

// meaning is each document's similarity to query, from the semantic tier (before any
// transaction: the endpoint is asked here); nil without the tier, or when its endpoint
// fails (said on stderr once, by the tier): the search is then lexical.
func (s *Server) meaning(ctx context.Context, query string) map[string]float32 {
	if s.cfg.Semantic == nil {
		return nil
	}
	ix := s.cfg.Semantic.Space(s.cfg.Space)
	ix.Nudge() // a search catches the index up with changes made elsewhere
	sim, _ := ix.Similar(ctx, query)
	return sim
}

// nudgeMeaning tells the semantic tier (if any) that the space may have changed.
func (s *Server) nudgeMeaning() {
	if s.cfg.Semantic != nil {
		s.cfg.Semantic.Space(s.cfg.Space).Nudge()
	}
}

// searched is what a search's answer says, whatever the store found (F): the tool that
// searched, how it says none had the words, and how it shows what was found.
type searched[F any] struct {
	tool     string                        // list_documents
	errQuery error                         // the store's error for a query without words
	none     string                        // "No document here has"
	where    string                        // what none had the words in, and what to try instead
	heading  string                        // "Documents", before " for" the query
	more     string                        // said after the counts in the heading: ", 2 by meaning"
	texts    func(f F) []string            // the words of f the answer shows: its title and lines
	item     func(b *strings.Builder, f F) // f's lines in the list
	last     string                        // the answer's last line, if any
}

// answer is a search's answer, res (err its error), as the model reads it: what was
// searched for instead, the results best first as a.item shows each, and what was left out.
func answer[F any](res search.Results[F], err error, a searched[F]) (string, error) {
	if errors.Is(err, a.errQuery) {
		return "", queryRefusal(a.tool)
	} else if err != nil {
		return "", err
	}
	var b strings.Builder
	if res.Unquoted {
		fmt.Fprintf(&b, "%s %s as quoted; its words, unquoted:\n", a.none, terms(res.Quoted))
	}
	var texts []string
	for _, f := range res.Found {
		texts = append(texts, a.texts(f)...)
	}
	b.WriteString(fixes(res.Query, a.none, texts))
	res.Query = fixedWords(res.Query, texts)
	if res.Total == 0 {
		fmt.Fprintf(&b, "%s %s %s\n", a.none, terms(res.Query), a.where)
		searchNotes(&b, res.Query, res.Unread)
		return strings.TrimSuffix(b.String(), "\n"), nil
	}
	fmt.Fprintf(&b, "%s for %s (%s%s), best first:\n", a.heading, shown(res.Query), counted(res.Query, res.Every, res.Some), a.more)
	for _, f := range res.Found {
		a.item(&b, f)
	}
	if len(res.Found) < res.Total {
		fmt.Fprintf(&b, "%d more: call %s with a larger limit (at most %d), or more words.\n", res.Total-len(res.Found), a.tool, MaxListLimit)
	}
	searchNotes(&b, res.Query, res.Unread)
	b.WriteString(a.last)
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func (s *Server) searchDocuments(r *docstore.Reader, query string, limit int, sim map[string]float32) (string, error) {
	res, byMeaning, err := semantic.Fused.Search(r, query, limit, sim)
	more := ""
	if len(byMeaning) > 0 {
		more = fmt.Sprintf(", %d by meaning", len(byMeaning))
	}
	return answer(res, err, searched[docstore.Found]{
		tool: "list_documents", errQuery: docstore.ErrQuery,
		none:    "No document here has",
		where:   "in its title or text. Try other words, or list_documents without query to see them all.",
		heading: "Documents", more: more,
		texts: func(f docstore.Found) []string {
			texts := []string{f.Document.Title}
			for _, l := range f.Hit.Lines {
				texts = append(texts, l.Text)
			}
			return texts
		},
		item: func(b *strings.Builder, f docstore.Found) {
			d := f.Document
			fmt.Fprintf(b, "- %s · id %s · version %d · %d bytes · saved by %s %s\n", s.link(d), d.ID, d.Version, d.Bytes, by(r.Names(), d.Author), when(d.Saved))
			for _, l := range f.Hit.Lines {
				fmt.Fprintf(b, "  line %d: %s\n", l.Number, l.Text)
			}
			switch {
			case byMeaning[d.ID]:
				b.WriteString("  (found by meaning, not by the query's words)\n")
			case len(f.Hit.Lines) == 0:
				b.WriteString("  (found in the title)\n")
			}
		},
	})
}

// someLines answers read_document with lines: those lines of a version, numbered.
func (s *Server) someLines(rd *docstore.Reader, name string, version int, lines string) (string, error) {
	r, err := docstore.ParseLineRange(lines)
	if err != nil {
		return "", refusef("read_document's lines %q won't do: %s. Give 120-180, 120- (to the end), -40 (the first 40) or 7.", short(lines), strings.TrimPrefix(err.Error(), docstore.ErrBadRange.Error()+": "))
	}
	d, v, part, err := rd.ReadLines(name, version, r)
	var none *docstore.NoLinesError
	if errors.As(err, &none) {
		if none.Total == 0 {
			return "", refusef("%s is empty at version %d: there are no lines to read.", d.Title, v.Number)
		}
		return "", refusef("%s has %d lines at version %d: there's no line %d.", d.Title, none.Total, v.Number, none.Asked)
	} else if err != nil {
		return "", s.explain(err, name)
	}
	head := s.versionHead(rd.Names(), d, v)
	var b strings.Builder
	if part.First == part.Last {
		fmt.Fprintf(&b, "%s · line %d of %d\n\n", head, part.First, part.Total)
	} else {
		fmt.Fprintf(&b, "%s · lines %d-%d of %d\n\n", head, part.First, part.Last, part.Total)
	}
	numbered(&b, part)
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func (s *Server) searchConversations(r *threads.Reader, query string, limit int) (string, error) {
	res, err := r.Search(query, limit, s.cfg.Thread)
	return answer(res, err, searched[threads.Found]{
		tool: "list_conversations", errQuery: threads.ErrQuery,
		none:    "No other conversation here has",
		where:   "in what was said. Try other words, or list_conversations without query.",
		heading: "Conversations",
		texts: func(f threads.Found) []string {
			texts := []string{f.Conversation.Title}
			for _, l := range f.Lines {
				texts = append(texts, l.Line.Text)
			}
			return texts
		},
		item: func(b *strings.Builder, f threads.Found) {
			c := f.Conversation
			last := c.Last
			if last.IsZero() {
				last = c.Created // nothing said yet but private steps
			}
			fmt.Fprintf(b, "- %s%s · %s · last %s\n", c.ID, quotedTitle(c.Title), count(c.Count, "message"), when(last))
			for _, l := range f.Lines {
				fmt.Fprintf(b, "  [%s] %s: %s\n", when(l.Message.At), r.Names().ShowString(l.Message.From), l.Line.Text)
			}
			if len(f.Lines) == 0 {
				b.WriteString("  (found in the title)\n")
			}
		},
		last: "Read one with read_conversation (its id).\n",
	})
}

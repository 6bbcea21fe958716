package search

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on a query.
const (
	// MaxQuery is the longest query, in bytes.
	MaxQuery = 1000
	// MaxTerms is the most words and phrases a query may have.
	MaxTerms = 16
)

var (
	// ErrEmptyQuery is returned by Parse for a query without a word to look for.
	ErrEmptyQuery = errors.New("the query has no word to look for")
	// ErrLongQuery is returned by Parse for a query over MaxQuery bytes or MaxTerms terms.
	ErrLongQuery = errors.New("the query is too long")
)

// Term is one word or "quoted phrase" of a query: its tokens must occur one after another.
type Term struct {
	Text   string   // as the query gave it
	Tokens []string // folded
}

// Query is what Parse makes of a query: terms that must all occur.
type Query struct {
	Text  string // the query, with white space folded
	Terms []Term
	m     *matcher
}

// matcher is the query made ready to scan texts with, made once by Parse.
func (q Query) matcher() *matcher {
	if q.m != nil {
		return q.m
	}
	return newMatcher(q)
}

// Parse reads a query: words, and phrases in double quotes (straight or curly; an unclosed
// quote runs to the end). A word or phrase without a letter or digit is left out; the
// same term twice counts once. It returns ErrEmptyQuery or ErrLongQuery (wrapped).
func Parse(q string) (Query, error) {
	if len(q) > MaxQuery {
		return Query{}, fmt.Errorf("%w: at most %d bytes, it has %d", ErrLongQuery, MaxQuery, len(q))
	}
	if !utf8.ValidString(q) {
		q = strings.ToValidUTF8(q, " ")
	}
	var (
		out  Query
		seen = map[string]bool{}
	)
	add := func(text string, quoted bool) {
		toks := Tokens(text)
		if len(toks) == 0 {
			return
		}
		key := strings.Join(toks, " ")
		if seen[key] {
			return
		}
		seen[key] = true
		if quoted {
			text = `"` + strings.Join(strings.Fields(text), " ") + `"`
		}
		out.Terms = append(out.Terms, Term{Text: text, Tokens: toks})
	}
	rest := q
	for rest != "" {
		i := strings.IndexFunc(rest, isQuote)
		words := rest
		if i >= 0 {
			words = rest[:i]
		}
		for _, w := range strings.FieldsFunc(words, unicode.IsSpace) {
			add(w, false)
		}
		if i < 0 {
			break
		}
		_, n := utf8.DecodeRuneInString(rest[i:])
		rest = rest[i+n:]
		j := strings.IndexFunc(rest, isQuote)
		if j < 0 {
			add(rest, true)
			break
		}
		add(rest[:j], true)
		_, n = utf8.DecodeRuneInString(rest[j:])
		rest = rest[j+n:]
	}
	if len(out.Terms) == 0 {
		return Query{}, ErrEmptyQuery
	}
	if len(out.Terms) > MaxTerms {
		return Query{}, fmt.Errorf("%w: at most %d words and phrases, it has %d", ErrLongQuery, MaxTerms, len(out.Terms))
	}
	texts := make([]string, len(out.Terms))
	for i, t := range out.Terms {
		texts[i] = t.Text
	}
	out.Text = strings.Join(texts, " ")
	out.m = newMatcher(out)
	return out, nil
}

func isQuote(r rune) bool { return r == '"' || r == '“' || r == '”' || r == '„' }

// Distinct returns the query's tokens, each once: what an index must find together.
func (q Query) Distinct() []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range q.Terms {
		for _, tok := range t.Tokens {
			if !seen[tok] {
				seen[tok] = true
				out = append(out, tok)
			}
		}
	}
	return out
}

// Exact reports whether an index's candidates for q are exactly the texts that match:
// so when every term is one token, kept whole (MaxKey). Otherwise the candidates must be
// read to know which match (a phrase's tokens may be there apart).
func (q Query) Exact() bool {
	for _, t := range q.Terms {
		if len(t.Tokens) > 1 || len(t.Tokens[0]) > MaxKey {
			return false
		}
	}
	return true
}

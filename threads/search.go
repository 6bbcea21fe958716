package threads

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/search"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// The search index (package search) of a space's conversations is kept in
// conversations/search: for each conversation, the tokens of its title and of its messages
// that people may read (never a private step's). Every write brings it up to date in its
// own transaction (flush); a file written before it has none until EnsureIndex or the
// first Search builds it, and until then writes leave it alone.
var searchName = []byte("search")

// MatchLines is the most matching lines Search gives for each conversation.
const MatchLines = 3

// ErrQuery is returned (wrapped, with the reason) by Search for a query without words, or
// one too long.
var ErrQuery = errors.New("bad query")

// found is what the index must learn of a conversation written to: the tokens said in
// it, and its title before and after, when that changed.
type found struct {
	words      map[string]int
	retitled   bool
	was, title string
}

func (f *found) said(text string) {
	if f.words == nil {
		f.words = map[string]int{}
	}
	search.Count(text, 1, f.words)
}

func (f *found) retitle(was, now string) {
	if !f.retitled {
		f.retitled, f.was = true, was
	}
	f.title = now
}

// index applies what t's writes changed to the index, if it is built.
func (w *writer) index(t *thread) error {
	f := t.found
	t.found = found{}
	if f.words == nil && !f.retitled {
		return nil
	}
	parent, err := w.root.CreateBucketIfNotExists(searchName)
	if err != nil {
		return err
	}
	x, err := search.WriteIndex(parent)
	if err != nil || !x.Built() {
		return err
	}
	return x.Apply(t.id, search.Change{Text: f.words, Retitled: f.retitled && f.was != f.title, Was: f.was, Now: f.title})
}

// EnsureIndex builds the search index of the space's conversations if it isn't built yet.
// progress, if not nil, is called inside the transaction with how many conversations were
// indexed of how many, every 100 and at the end; it must not use the database.
func (s *Store) EnsureIndex(progress func(done, total int)) error {
	built := false
	_ = s.db.View(func(tx kv.Tx) error {
		if root := spaces.Sub(tx, s.space, rootName); root != nil {
			built = search.ReadIndex(root.Bucket(searchName)).Built()
		} else {
			built = true // nothing here yet: the first write makes the index
		}
		return nil
	})
	if built {
		return nil
	}
	return s.db.Update(func(tx kv.Tx) error {
		w, err := newWriter(tx, s.space)
		if err != nil {
			return err
		}
		parent, err := w.root.CreateBucketIfNotExists(searchName)
		if err != nil {
			return err
		}
		x, err := search.WriteIndex(parent)
		if err != nil || x.Built() {
			return err
		}
		return x.Rebuild(func(add func(search.Item) error) error { return w.v.eachText(add, progress) })
	})
}

// eachText calls add with every conversation's title and what was said in it, one
// message a line.
func (v view) eachText(add func(search.Item) error, progress func(done, total int)) error {
	total, done := v.summaries.KeyN(), 0
	return v.summaries.ForEach(func(k, raw []byte) error {
		var sum summary
		if err := json.Unmarshal(raw, &sum); err != nil {
			return fmt.Errorf("reading the summary of conversation %q: %w", k, err)
		}
		var text strings.Builder
		if b := v.messages.Bucket(k); b != nil {
			if err := b.ForEach(func(mk, mv []byte) error {
				m, err := decodeMessage(mk, mv)
				text.WriteString(m.Text)
				text.WriteByte('\n')
				return err
			}); err != nil {
				return err
			}
		}
		done++
		if progress != nil && (done%100 == 0 || done == total) {
			progress(done, total)
		}
		return add(search.Item{Key: string(k), Title: sum.Title, Text: text.String()})
	})
}

// Found is a conversation that a search found, with its matching lines.
type Found struct {
	Conversation Conversation
	Lines        []FoundLine // the best MatchLines, oldest first
	hit          search.Hit
}

// FoundLine is a line of a message that has some of the query's words.
type FoundLine struct {
	Message Message // its Text is the whole message
	Line    search.Line
}

// Results are a search's answer: at most limit conversations, best first, of Total.
type Results struct {
	Query search.Query
	Found []Found
	Total int
}

// Search finds the space's conversations (but the one whose id is except) whose title and
// messages, private steps left out, have every word and "quoted phrase" of query, best
// first (see package search; then latest activity first), at most limit (< 1: all). It
// returns ErrQuery (wrapped) for a query without words, or one too long.
func (s *Store) Search(query string, limit int, except string) (Results, error) {
	q, err := search.Parse(query)
	if err != nil {
		return Results{}, fmt.Errorf("%w: %w", ErrQuery, err)
	}
	if err := s.EnsureIndex(nil); err != nil {
		return Results{}, err
	}
	res := Results{Query: q}
	err = s.db.View(func(tx kv.Tx) error {
		root := spaces.Sub(tx, s.space, rootName)
		if root == nil {
			return nil
		}
		v := readView(tx, s.space)
		x := search.ReadIndex(root.Bucket(searchName))
		nums, _, err := x.Candidates(q.Distinct())
		if err != nil {
			return err
		}
		v.prefetchItems(x, nums)
		for _, num := range nums {
			id := x.Key(num)
			if id == except {
				continue
			}
			f, ok, err := v.match(q, id)
			if err != nil {
				return err
			}
			if ok {
				res.Found = append(res.Found, f)
			}
		}
		return nil
	})
	if err != nil {
		return Results{}, err
	}
	slices.SortFunc(res.Found, func(a, b Found) int {
		if c := search.Compare(a.hit, b.hit); c != 0 {
			return c
		}
		if c := b.Conversation.Last.Compare(a.Conversation.Last); c != 0 {
			return c
		}
		return strings.Compare(a.Conversation.ID, b.Conversation.ID)
	})
	res.Total = len(res.Found)
	if limit > 0 && len(res.Found) > limit {
		res.Found = res.Found[:limit]
	}
	return res, nil
}

// match looks for q in conversation id: its title and every message people may read.
func (v view) match(q search.Query, id string) (Found, bool, error) {
	conv, err := v.conversation(id)
	if err != nil {
		return Found{}, false, err
	}
	var (
		hits  []search.Hit
		lines []FoundLine
	)
	if b := v.messages.Bucket([]byte(id)); b != nil {
		err = b.ForEach(func(k, val []byte) error {
			m, err := decodeMessage(k, val)
			if err != nil {
				return fmt.Errorf("reading a message of conversation %q: %w", id, err)
			}
			h := search.Match(q, "", m.Text, MatchLines)
			if h.In == 0 {
				return nil
			}
			hits = append(hits, h)
			for _, l := range h.Lines {
				lines = append(lines, FoundLine{Message: m, Line: l})
			}
			return nil
		})
		if err != nil {
			return Found{}, false, err
		}
	}
	title := search.Match(q, conv.Title, "", 0)
	hit := search.Combine(append(hits, title))
	if !hit.Found {
		return Found{}, false, nil
	}
	// The lines with the most terms, the earliest first among equals, shown oldest first.
	best := slices.Clone(lines)
	slices.SortStableFunc(best, func(a, b FoundLine) int { return b.Line.Terms - a.Line.Terms })
	best = best[:min(MatchLines, len(best))]
	slices.SortStableFunc(best, func(a, b FoundLine) int { return strings.Compare(a.Message.ID, b.Message.ID) })
	return Found{Conversation: conv, Lines: best, hit: hit}, true, nil
}

// errCheckDone rolls back CheckIndex's transaction once it has compared.
var errCheckDone = errors.New("check done")

// CheckIndex compares the search index with one built afresh from the conversations, and
// returns an error naming the first difference (nil when they are the same, or when there
// is no index yet). It writes nothing: for tests and checks of a file.
func (s *Store) CheckIndex() error {
	var diff error
	err := s.db.Update(func(tx kv.Tx) error {
		root := spaces.Sub(tx, s.space, rootName)
		if root == nil || root.Bucket(searchName) == nil {
			return nil
		}
		x, err := search.WriteIndex(root.Bucket(searchName))
		if err != nil || !x.Built() {
			return err
		}
		v := readView(tx, s.space)
		if diff, err = x.Compare(func(add func(search.Item) error) error { return v.eachText(add, nil) }); err != nil {
			return err
		}
		return errCheckDone
	})
	if err != nil && !errors.Is(err, errCheckDone) {
		return err
	}
	return diff
}

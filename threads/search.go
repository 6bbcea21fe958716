package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// ErrQuery is returned (wrapped, with the reason) by Search for a query without words.
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
func (s *Store) EnsureIndex(ctx context.Context, progress func(done, total int)) error {
	built := false
	_ = s.db.View(ctx, func(tx kv.Tx) error {
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
	return s.db.Update(ctx, func(tx kv.Tx) error {
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

// Found is a conversation that a search found, with its best lines.
type Found struct {
	Conversation Conversation
	Lines        []FoundLine // the best MatchLines, oldest first
	Every        bool        // it has every word and phrase (search.Hit.Every)
	Score        float64
}

// FoundLine is a line of a message that has some of the query's words.
type FoundLine struct {
	Message Message // the message the line is in (its Text left out)
	Line    search.Line
}

// Results are a search's answer: at most limit conversations, best first
// (search.Results).
type Results = search.Results[Found]

// Search ranks the space's conversations (but the one whose id is except) whose title or
// messages, private steps left out, have any word or "quoted phrase" of query, as
// docstore's Search ranks documents (see package search; then latest activity first), at
// most limit (< 1: all); when none has the quoted phrases, those of their words
// (Results.Unquoted). What it reads is bounded by search.MaxRead, whatever the space's
// size. It returns ErrQuery (wrapped) for a query without words.
func (r *Reader) Search(query string, limit int, except string) (Results, error) {
	return search.Search(query, func(query string, budget int) (Results, error) { return r.search(query, limit, except, budget) })
}

// search is one pass of Search with a reading budget: it plans the query from the index,
// ranks what the plan finds, reading conversations as the ranking asks, and makes the
// ranked ones Found.
func (r *Reader) search(query string, limit int, except string, budget int) (Results, error) {
	q, err := search.Parse(query)
	if err != nil {
		return Results{}, fmt.Errorf("%w: %w", ErrQuery, err)
	}
	res := Results{Query: q}
	root := spaces.Sub(r.tx, r.space, rootName)
	if root == nil {
		return res, nil // no conversations yet
	}
	x := search.ReadIndex(root.Bucket(searchName))
	if !x.Built() {
		r.unbuilt = true
		return res, errUnbuilt
	}
	plan, err := x.Plan(q, search.Ranking)
	if err != nil {
		return res, err
	}
	read := searchRead{v: r.v, x: x, except: except, convs: map[uint32]Conversation{}, said: map[uint32][]Message{}}
	rk, err := plan.Rank(limit, MatchLines, budget, read.fetch)
	if err != nil {
		return Results{}, err
	}
	res = search.FromRank[Found](plan.Query, rk) // its query narrowed to its rarest words, when long
	for _, ranked := range rk.Ranked {
		f, ok, err := read.found(ranked)
		if err != nil {
			return Results{}, err
		}
		if ok {
			res.Found = append(res.Found, f)
		}
	}
	return res, nil
}

// searchRead is what one search pass has read: the conversations (by index number) and
// their messages (Text left out), part by part as the ranking saw them.
type searchRead struct {
	v      view
	x      search.Index
	except string
	convs  map[uint32]Conversation
	said   map[uint32][]Message
}

// fetch is the ranking's search.Fetch: it reads the conversations numbered nums, as many
// as fit budget (and, past the first, search.MaxBatch), and returns them with the bytes it
// used.
func (r *searchRead) fetch(nums []uint32, budget int) ([]search.Fetched, int, error) {
	var out []search.Fetched
	used := 0
	ids, sums := r.v.items(r.x, nums)
	for i, num := range nums {
		id := ids[i]
		sum, err := decodeSummary(id, sums[i])
		if id == r.except || errors.Is(err, ErrNotFound) {
			out = append(out, search.Fetched{Gone: true})
			continue
		} else if err != nil {
			return nil, 0, err
		}
		size := len(sum.Title)
		parts, msgs, size, full, err := readMessages(r.v, id, size, used, budget, len(out) > 0)
		if full {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		// Its first and latest messages are among those read.
		conv, err := sum.conversation(id, func(conv, msg string) (Message, error) { return readOne(parts, msgs, conv, msg) })
		if err != nil {
			return nil, 0, err
		}
		used += size
		r.convs[num], r.said[num] = conv, msgs
		last := conv.Last
		if last.IsZero() {
			last = conv.Created
		}
		out = append(out, search.Fetched{Doc: search.Doc{Title: conv.Title, Parts: parts}, Time: last.UnixNano()})
	}
	return out, used, nil
}

// readMessages reads conversation id's messages in v, their texts as parts and the
// messages without them, adding each text's length to size; full when a text takes
// used+size past budget or, when more is read in the batch, past search.MaxBatch.
func readMessages(v view, id string, size, used, budget int, more bool) (parts []string, msgs []Message, _ int, full bool, _ error) {
	b := v.messages.Bucket([]byte(id))
	if b == nil {
		return nil, nil, size, false, nil
	}
	err := b.ForEach(func(k, val []byte) error {
		m, err := decodeMessage(k, val)
		if err != nil {
			return fmt.Errorf("reading a message of conversation %q: %w", id, err)
		}
		size += len(m.Text)
		if used+size > budget || more && used+size > search.MaxBatch {
			full = true
			return errFull
		}
		parts = append(parts, m.Text)
		m.Text = ""
		msgs = append(msgs, m)
		return nil
	})
	return parts, msgs, size, full, err
}

// readOne is, as view.message gives it, the message of conversation conv whose id is msg
// ("" gives the zero Message), found among msgs (without their texts) and parts (the
// texts), as readMessages read them.
func readOne(parts []string, msgs []Message, conv, msg string) (Message, error) {
	if msg == "" {
		return Message{}, nil
	}
	key, err := parseKey(msg)
	if err != nil {
		return Message{}, fmt.Errorf("conversation %q names message %q: %w", conv, msg, err)
	}
	want := key.String()
	for i, m := range msgs {
		if m.ID == want {
			m.Text = parts[i]
			return m, nil
		}
	}
	return Message{}, errMissing(conv, msg)
}

// found makes a ranked conversation Found, with its lines; one ranked without being read
// (past MaxRead) is read afresh, without lines. Not ok when it is gone or is except.
func (r *searchRead) found(rk search.Ranked) (Found, bool, error) {
	conv, ok := r.convs[rk.Num]
	if !ok {
		var err error
		if conv, ok, err = r.unread(rk.Num); err != nil || !ok {
			return Found{}, false, err
		}
	}
	f := Found{Conversation: conv, Every: rk.Every, Score: rk.Score}
	for _, l := range rk.Hit.Lines {
		f.Lines = append(f.Lines, FoundLine{Message: r.said[rk.Num][l.Part], Line: l})
	}
	return f, true, nil
}

// unread reads the summary of the conversation numbered num in the index; not ok when it
// is gone or is except.
func (r *searchRead) unread(num uint32) (Conversation, bool, error) {
	id := r.x.Key(num)
	if id == r.except {
		return Conversation{}, false, nil
	}
	conv, err := r.v.conversation(id)
	if errors.Is(err, ErrNotFound) {
		return Conversation{}, false, nil
	}
	return conv, err == nil, err
}

// errFull stops reading a conversation's messages when they are past a search's budget.
var errFull = errors.New("past the budget")

// errCheckDone rolls back CheckIndex's transaction once it has compared.
var errCheckDone = errors.New("check done")

// CheckIndex compares the search index with one built afresh from the conversations, and
// returns an error naming the first difference (nil when they are the same, or when there
// is no index yet). It writes nothing: for tests and checks of a file.
func (s *Store) CheckIndex(ctx context.Context) error {
	var diff error
	err := s.db.Update(ctx, func(tx kv.Tx) error {
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

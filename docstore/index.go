package docstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/search"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// The search index (package search) of a space's documents is kept in doc_search. It is
// changed in the same transaction as the text: put (every version), Delete, Undelete and
// Purge bring it up to date, so a search never misses a saved version nor finds a deleted
// document. A file written before the index has none until EnsureIndex (or the first
// Search) builds it; until then, writes leave it alone.
const bucketSearch = "doc_search"

// MatchLines is how many matching lines Search gives for each document.
const MatchLines = 3

// Found is a document that a search found, with what was found in it.
type Found struct {
	Document Document
	Hit      search.Hit // its lines: the best MatchLines
	Every    bool       // it has every word and phrase (search.Hit.Every)
	Score    float64
}

// Results are a search's answer: at most limit documents, best first (search.Results).
type Results = search.Results[Found]

// ErrQuery is returned (wrapped, with the reason) by Search for a query without words,
// or one too long.
var ErrQuery = errors.New("bad query")

// index is the space's document index in this transaction (empty in a read transaction on
// a space without one).
func (b *buckets) index() (search.Index, error) {
	if !b.tx.Writable() {
		return search.ReadIndex(spaces.Sub(b.tx, b.space, bucketSearch)), nil
	}
	parent, err := spaces.CreateSub(b.tx, b.space, bucketSearch)
	if err != nil {
		return search.Index{}, err
	}
	return search.WriteIndex(parent)
}

// indexPut brings the index up to date with version v of d; prev is the version before
// (nil for a new document) and c the change from it.
func (b *buckets) indexPut(id string, v Version, prev *Version, c change) error {
	x, err := b.index()
	if err != nil || !x.Built() {
		return err
	}
	if prev == nil {
		return x.AddNew(search.Item{Key: id, Title: v.Title, Text: v.Text}) // a new id (Create)
	}
	counts := map[string]int{}
	if c.ops == nil && prev.Text != v.Text {
		search.Count(prev.Text, -1, counts)
		search.Count(v.Text, 1, counts)
	}
	// Tokens never span lines: the changed lines alone say how the counts change.
	for _, op := range c.ops {
		switch {
		case op.Kind == linediff.Delete:
			for _, line := range c.old[op.A0:op.A1] {
				search.Count(line, -1, counts)
			}
		case op.Kind == linediff.Insert:
			for _, line := range c.new[op.B0:op.B1] {
				search.Count(line, 1, counts)
			}
		}
	}
	return x.Apply(id, search.Change{Text: counts, Retitled: prev.Title != v.Title, Was: prev.Title, Now: v.Title})
}

// indexDrop takes d (deleted) out of the index.
func (b *buckets) indexDrop(d Document) error {
	x, err := b.index()
	if err != nil || !x.Built() {
		return err
	}
	v, err := b.version(d.ID, d.Version)
	if err != nil {
		return err
	}
	return x.Remove(d.ID, v.Title, v.Text)
}

// forget drops the index's number for document id (purged).
func (b *buckets) forget(id string) error {
	x, err := b.index()
	if err != nil || !x.Built() {
		return err
	}
	return x.Forget(id)
}

// indexAdd puts d (undeleted) back into the index.
func (b *buckets) indexAdd(d Document) error {
	x, err := b.index()
	if err != nil || !x.Built() {
		return err
	}
	v, err := b.version(d.ID, d.Version)
	if err != nil {
		return err
	}
	return x.Add(search.Item{Key: d.ID, Title: v.Title, Text: v.Text})
}

// EnsureIndex builds the search index of the space's documents if it isn't built yet (a
// file written before search, or by an older index format). progress, if not nil, is
// called inside the transaction with how many documents were indexed of how many, every
// 100 and at the end; it must not use the database.
func (s *Store) EnsureIndex(ctx context.Context, progress func(done, total int)) error {
	return ensureBuilt(ctx, s, (*buckets).index, search.Index.Built, func(b *buckets, x search.Index) error {
		err := x.Rebuild(func(add func(search.Item) error) error { return b.eachLive(add, progress) })
		if err != nil {
			return fmt.Errorf("building the search index of space %s: %w", s.space, err)
		}
		return nil
	})
}

// ensureBuilt runs build on the index open gives in a write transaction, unless built says
// there is nothing to build: first in a read transaction (a store that has it answers so,
// taking no write lock), then again in the write transaction (another process may have
// built it in between).
func ensureBuilt[X any](ctx context.Context, s *Store, open func(*buckets) (X, error), built func(X) bool, build func(*buckets, X) error) error {
	done := false
	if err := s.view(ctx, func(b *buckets) error {
		x, _ := open(b) // not made yet: the write transaction makes it
		done = built(x)
		return nil
	}); err != nil || done {
		return err
	}
	return s.db.Update(ctx, func(tx kv.Tx) error {
		b, err := writeBuckets(tx, s.space)
		if err != nil {
			return err
		}
		x, err := open(b)
		if err != nil || built(x) {
			return err
		}
		return build(b, x)
	})
}

// eachLive calls add with the latest title and text of every document not deleted, and
// progress (if not nil) every 100 and at the end.
func (b *buckets) eachLive(add func(search.Item) error, progress func(done, total int)) error {
	total, done := b.count(), 0
	return b.eachDoc(func(d Document) error {
		if d.Deleted != nil {
			return nil
		}
		v, err := b.version(d.ID, d.Version)
		if err != nil {
			return err
		}
		done++
		if progress != nil && (done%100 == 0 || done == total) {
			progress(done, total)
		}
		return add(search.Item{Key: d.ID, Title: v.Title, Text: v.Text})
	})
}

// Search ranks the space's documents that have any word or "quoted phrase" of query in
// their title or text, best first (see package search: those with every word and phrase
// first, then by relevance, then latest saved first), at most limit of them (limit < 1:
// all), each with up to MatchLines of its best lines. When no document has the quoted
// phrases, it gives the results of their words (Results.Unquoted). What it reads (the
// index, then the texts the ranking asks for) is bounded by search.MaxRead, whatever the
// space's size. It returns ErrQuery (wrapped) for a query without words.
func (r *Reader) Search(query string, limit int) (Results, error) {
	return search.Search(query, func(query string, budget int) (Results, error) { return r.search(query, limit, budget) })
}

// search is one pass of Search with a reading budget: it plans the query from the index,
// ranks what the plan finds, reading documents as the ranking asks, reads the records of
// those ranked without being read, and makes the ranked ones that are not deleted Found.
func (r *Reader) search(query string, limit, budget int) (Results, error) {
	q, err := search.Parse(query)
	if err != nil {
		return Results{}, fmt.Errorf("%w: %w", ErrQuery, err)
	}
	b := r.b
	x, _ := b.index()
	if !x.Built() { // once a space: its index is then kept by every save
		r.unbuilt.add(indexSearch, r.b.space)
		return Results{}, errUnbuilt
	}
	plan, err := x.Plan(q, search.Ranking)
	if err != nil {
		return Results{}, err
	}
	docs := map[uint32]Document{}
	fetch := func(nums []uint32, budget int) ([]search.Fetched, int, error) {
		return b.fetch(docs, nums, budget)
	}
	rk, err := plan.Rank(limit, MatchLines, budget, fetch)
	if err != nil {
		return Results{}, err
	}
	res := search.FromRank[Found](plan.Query, rk)
	if err := b.readUnread(docs, rk.Ranked); err != nil {
		return Results{}, err
	}
	for _, ranked := range rk.Ranked {
		d, ok := docs[ranked.Num]
		if !ok || d.Deleted != nil {
			continue // deleted since
		}
		res.Found = append(res.Found, Found{Document: d, Hit: ranked.Hit, Every: ranked.Every, Score: ranked.Score})
	}
	return res, nil
}

// fetch is the ranking's search.Fetch: it reads the records of the documents numbered
// nums, as many as fit budget (and, past the first, search.MaxBatch), into docs, then their
// latest texts, and returns them with the bytes it used.
func (b *buckets) fetch(docs map[uint32]Document, nums []uint32, budget int) ([]search.Fetched, int, error) {
	var out []search.Fetched
	used := 0
	x, _ := b.index()
	ids := x.Keys(nums)
	raws := b.docsRaw(ids)
	var live []Document
	for i, num := range nums {
		d, ok, err := docOf(ids[i], raws[i])
		if err != nil {
			return nil, 0, err
		}
		if !ok || d.Deleted != nil {
			out = append(out, search.Fetched{Gone: true})
			continue
		}
		size := d.Bytes + len(d.Title)
		if used+size > budget || len(out) > 0 && used+size > search.MaxBatch {
			break
		}
		used += size
		docs[num] = d
		live = append(live, d)
		out = append(out, search.Fetched{Time: d.Saved.UnixNano()})
	}
	vs, err := b.latest(live)
	if err != nil {
		return nil, 0, err
	}
	for i := range out {
		if out[i].Gone {
			continue
		}
		v := vs[0]
		vs = vs[1:]
		out[i].Doc = search.Doc{Title: v.Title, Parts: []string{v.Text}}
	}
	return out, used, nil
}

// readUnread reads into docs the records of those ranked without being read (past
// MaxRead); it reads nothing when there are none.
func (b *buckets) readUnread(docs map[uint32]Document, ranked []search.Ranked) error {
	var missing []uint32
	for _, rk := range ranked {
		if _, ok := docs[rk.Num]; !ok {
			missing = append(missing, rk.Num)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	x, _ := b.index()
	ids := x.Keys(missing)
	for i, raw := range b.docsRaw(ids) {
		d, ok, err := docOf(ids[i], raw)
		if err != nil {
			return err
		}
		if ok {
			docs[missing[i]] = d
		}
	}
	return nil
}

// errCheckDone rolls back CheckIndex's transaction once it has compared.
var errCheckDone = errors.New("check done")

// CheckIndex compares the search index with one built afresh from the documents, and
// returns an error naming the first difference (nil when they are the same, or when there
// is no index yet). It takes the write lock for as long as a rebuild takes, and writes
// nothing: for tests and checks of a file.
func (s *Store) CheckIndex(ctx context.Context) error {
	var diff error
	err := s.db.Update(ctx, func(tx kv.Tx) error {
		b, err := writeBuckets(tx, s.space)
		if err != nil {
			return err
		}
		x, err := b.index()
		if err != nil || !x.Built() {
			return err
		}
		diff, err = x.Compare(func(add func(search.Item) error) error { return b.eachLive(add, nil) })
		if err != nil {
			return err
		}
		return errCheckDone
	})
	if err != nil && !errors.Is(err, errCheckDone) {
		return err
	}
	return diff
}

package docstore

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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
	Hit      search.Hit
}

// Results are a search's answer: at most limit documents, best first, of Total.
type Results struct {
	Query search.Query
	Found []Found
	Total int
}

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
		return x.Add(search.Item{Key: id, Title: v.Title, Text: v.Text})
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
func (s *Store) EnsureIndex(progress func(done, total int)) error {
	built := false
	if err := s.view(func(b *buckets) error {
		x, _ := b.index()
		built = x.Built()
		return nil
	}); err != nil || built {
		return err
	}
	return s.db.Update(func(tx kv.Tx) error {
		b, err := writeBuckets(tx, s.space)
		if err != nil {
			return err
		}
		x, err := b.index()
		if err != nil || x.Built() {
			return err
		}
		err = x.Rebuild(func(add func(search.Item) error) error { return b.eachLive(add, progress) })
		if err != nil {
			return fmt.Errorf("building the search index of space %s: %w", s.space, err)
		}
		return nil
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

// Search finds the space's documents whose title or text has every word and "quoted
// phrase" of query (see package search for what matches and how they are ranked), best
// first, at most limit of them (limit < 1: all), each with up to MatchLines matching lines.
// It returns ErrQuery (wrapped) for a query without words or one too long.
func (s *Store) Search(query string, limit int) (Results, error) {
	q, err := search.Parse(query)
	if err != nil {
		return Results{}, fmt.Errorf("%w: %w", ErrQuery, err)
	}
	if err := s.EnsureIndex(nil); err != nil {
		return Results{}, err
	}
	res := Results{Query: q}
	err = s.view(func(b *buckets) error {
		x, _ := b.index()
		nums, rows, err := x.Candidates(q.Distinct())
		if err != nil {
			return err
		}
		top, err := b.rank(x, q, nums, rows)
		if err != nil {
			return err
		}
		res.Total = len(top)
		lead, err := b.lead(x, q, top, limit)
		if err != nil {
			return err
		}
		b.prefetchRanked(x, lead, true)
		docs := make([]Document, len(lead))
		for i, r := range lead {
			d, ok, err := b.doc(x.Key(r.num))
			if err != nil {
				return err
			}
			if !ok || d.Deleted != nil {
				return fmt.Errorf("the search index names document %q, which the space doesn't have (or has deleted)", x.Key(r.num))
			}
			docs[i] = d
		}
		b.prefetchLatest(docs)
		for _, d := range docs {
			v, err := b.version(d.ID, d.Version)
			if err != nil {
				return err
			}
			res.Found = append(res.Found, Found{Document: d, Hit: search.Match(q, v.Title, v.Text, MatchLines)})
		}
		return nil
	})
	if err != nil {
		return Results{}, err
	}
	sortFound(res.Found)
	if limit > 0 && len(res.Found) > limit {
		res.Found = res.Found[:limit]
	}
	return res, nil
}

// rank gives the candidates that match q, with what ranks them. search.Compare ranks by
// the terms in the title and the occurrences, then by the span: for a query of words kept
// whole (q.Exact) the postings tell the first two and every candidate matches; otherwise
// each candidate is folded once (search.Rough) to know whether it matches, and how well.
func (b *buckets) rank(x search.Index, q search.Query, nums []uint32, rows [][]search.Posting) ([]ranked, error) {
	if q.Exact() {
		top := make([]ranked, len(nums))
		for i, row := range rows {
			top[i].num = nums[i]
			for _, p := range row {
				if p.InTitle {
					top[i].title++
				}
				top[i].hits += min(p.Count, search.MaxCount)
			}
		}
		return top, nil
	}
	var top []ranked
	b.prefetchItems(x, nums, false)
	for _, num := range nums {
		title, text, err := b.latest(x.Key(num))
		if err != nil {
			return nil, err
		}
		if h := search.RoughBytes(q, title, text); h.Found {
			top = append(top, ranked{num: num, title: h.TitleTerms, hits: h.Hits, span: h.Span, spanKnown: true})
		}
	}
	return top, nil
}

// lead gives the first limit of top (all when limit < 1), in no order, learning only what
// it takes to tell them: the spans of those that tie on the postings, then the times
// saved of those that still tie. Only those are read whole (Match, for the lines).
func (b *buckets) lead(x search.Index, q search.Query, top []ranked, limit int) ([]ranked, error) {
	lead := mayLead(top, limit)
	if limit < 1 || len(lead) <= limit {
		return lead, nil
	}
	if !lead[0].spanKnown {
		b.prefetchRanked(x, lead, false)
		for i := range lead {
			title, text, err := b.latest(x.Key(lead[i].num))
			if err != nil {
				return nil, err
			}
			lead[i].span, lead[i].spanKnown = search.RoughBytes(q, title, text).Span, true
		}
		if lead = mayLead(lead, limit); len(lead) <= limit {
			return lead, nil
		}
	}
	b.prefetchRanked(x, lead, true)
	for i := range lead {
		id := x.Key(lead[i].num)
		d, _, err := b.doc(id)
		if err != nil {
			return nil, err
		}
		lead[i].saved, lead[i].id = d.Saved, id
	}
	slices.SortStableFunc(lead, func(a, b ranked) int {
		if c := compareRanked(a, b); c != 0 {
			return c
		}
		if c := b.saved.Compare(a.saved); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return lead[:limit], nil
}

// ranked is a document that matches (by its index number), with what ranks it: the span
// only when known (a phrase query's, from search.Rough).
type ranked struct {
	num         uint32
	title, hits int
	span        int
	spanKnown   bool
	saved       time.Time // read for those that tie
	id          string
}

// compareRanked is search.Compare on what is known.
func compareRanked(a, b ranked) int {
	if a.title != b.title {
		return b.title - a.title
	}
	if a.hits != b.hits {
		return b.hits - a.hits
	}
	if a.spanKnown && b.spanKnown {
		return search.Compare(search.Hit{Span: a.span}, search.Hit{Span: b.span})
	}
	return 0
}

// mayLead returns those of rs that may rank among the first limit (all when limit < 1):
// the first limit by what is known of their ranking, and every other that ties with the
// limit-th, since what isn't known (the span, the time saved) may put it ahead.
func mayLead(rs []ranked, limit int) []ranked {
	if limit < 1 || len(rs) <= limit {
		return rs
	}
	slices.SortFunc(rs, compareRanked)
	cut := limit
	for cut < len(rs) && compareRanked(rs[cut], rs[limit-1]) == 0 {
		cut++
	}
	return rs[:cut]
}

// sortFound orders found best first (search.Compare), then latest saved first.
func sortFound(found []Found) {
	slices.SortFunc(found, func(a, b Found) int {
		if c := search.Compare(a.Hit, b.Hit); c != 0 {
			return c
		}
		if c := b.Document.Saved.Compare(a.Document.Saved); c != 0 {
			return c
		}
		return strings.Compare(a.Document.ID, b.Document.ID)
	})
}

// errCheckDone rolls back CheckIndex's transaction once it has compared.
var errCheckDone = errors.New("check done")

// CheckIndex compares the search index with one built afresh from the documents, and
// returns an error naming the first difference (nil when they are the same, or when there
// is no index yet). It takes the write lock for as long as a rebuild takes, and writes
// nothing: for tests and checks of a file.
func (s *Store) CheckIndex() error {
	var diff error
	err := s.db.Update(func(tx kv.Tx) error {
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

// latest reads document id's latest version by its versions' last key, without its
// record: its title, and its text as it is in the data file (valid in this transaction
// only). A search reads every candidate of a phrase so.
func (b *buckets) latest(id string) (string, []byte, error) {
	vb, err := b.versionBucket(id)
	if err != nil {
		return "", nil, err
	}
	c := vb.b.Cursor()
	var k, raw []byte
	if vb.prefix == nil {
		if k, raw = c.Last(); k == nil {
			return "", nil, fmt.Errorf("document %s has no versions", id)
		}
	} else {
		end := append(slices.Clone(vb.prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
		if k, _ = c.Seek(end); k == nil {
			k, raw = c.Last()
		} else {
			k, raw = c.Prev()
		}
		if k == nil || len(k) != len(vb.prefix)+8 || !bytes.HasPrefix(k, vb.prefix) {
			return "", nil, fmt.Errorf("document %s has no versions", id)
		}
	}
	if len(raw) > 0 && raw[0] == recordMark {
		r, text, err := decodeHeader(raw)
		if err == nil && !r.Delta {
			return r.Title, text, nil
		}
	}
	r, err := decodeRecord(raw) // a file written before the layout of recordMark
	if err != nil || r.Delta {
		return "", nil, fmt.Errorf("reading the latest version of document %s: %v (a delta: %v)", id, err, r.Delta)
	}
	return r.Title, []byte(r.Text), nil
}

package docstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/oklog/ulid/v2"
)

const (
	bucketDocs     = "docs"
	bucketTitles   = "doc_titles"
	bucketRecent   = "doc_recent"
	bucketVersions = "doc_versions"
	bucketMeta     = "doc_meta"
)

var keyCount = []byte("count")

// ids is shared by every Store of the process: ulid.Make is not monotonic across goroutines.
var ids = struct {
	sync.Mutex
	entropy *ulid.MonotonicEntropy
}{entropy: ulid.Monotonic(rand.Reader, 0)}

func newID(at time.Time) string {
	ids.Lock()
	defer ids.Unlock()
	return ulid.MustNew(ulid.Timestamp(at), ids.entropy).String()
}

// Store is one space's documents in a store (package kv). It holds no state of its own
// beyond its configuration, and is safe for concurrent use: a call reads through the
// Reader View gives it, and writes with the methods below, each its own transaction.
type Store struct {
	db        kv.DB
	space     string
	now       func() time.Time
	proposing bool // agents' changes are kept as proposals (see Proposing)
}

// New returns the documents of space in db.
func New(db kv.DB, space string) *Store {
	return &Store{db: db, space: space, now: time.Now}
}

// WithClock returns a copy of s that reads the time from now (for tests and imports).
func (s *Store) WithClock(now func() time.Time) *Store {
	c := *s
	c.now = now
	return &c
}

// Space is the space s is scoped to.
func (s *Store) Space() string { return s.space }

// Reader reads one snapshot of a space's documents: everything one call shows (documents,
// versions, links, proposals, comments and people's names) read together, as of one state
// of the store. It lives for the function Store.View gives it, and is that function's
// alone. A read that needs an index the space has not built yet (a store written before
// it) fails with errUnbuilt, and View builds the index and runs the function again.
//
// The reads of long histories (Store.Walk, Store.Blame) are not the Reader's: they read in
// snapshots of a few dozen versions each, so that no transaction lasts as long as a history.
type Reader struct {
	b       *buckets
	names   spaces.Names
	named   bool     // names read
	unbuilt *unbuilt // indexes the snapshot's reads found missing, in every space read (In)
}

// errUnbuilt is a Reader's read that needs an index not built yet: View builds it and
// runs its function again.
var errUnbuilt = errors.New("the space's index is not built yet")

// View runs fn with a Reader of one snapshot of the space's documents (kv.DB.View: fn may
// run more than once, each time with a new Reader, and must set its results afresh). When
// a read of fn found an index not built (a store written before it had one: see indexes),
// View builds it, in a write transaction of its own, and runs fn again.
func (s *Store) View(ctx context.Context, fn func(r *Reader) error) error {
	var missing *unbuilt
	err := s.db.View(ctx, func(tx kv.Tx) error {
		missing = &unbuilt{}
		return fn(&Reader{b: readBuckets(tx, s.space), unbuilt: missing})
	})
	if missing == nil || missing.none() {
		return err
	}
	if err := missing.build(ctx, s); err != nil {
		return err
	}
	return s.db.View(ctx, func(tx kv.Tx) error {
		return fn(&Reader{b: readBuckets(tx, s.space), unbuilt: &unbuilt{}})
	})
}

// ReadIn runs fn on one snapshot of s's documents (Store.View) and returns what its last
// run returned: for a read of one value, without a variable to set in the View.
func ReadIn[T any](ctx context.Context, s *Store, fn func(r *Reader) (T, error)) (T, error) {
	var out T
	err := s.View(ctx, func(r *Reader) (err error) {
		out, err = fn(r)
		return err
	})
	return out, err
}

// Space is the space r reads.
func (r *Reader) Space() string { return r.b.space }

// In returns a Reader of another space's documents in the same snapshot: a page that looks
// a document up space by space reads them all in one.
func (r *Reader) In(space string) *Reader {
	return &Reader{b: readBuckets(r.b.tx, space), names: r.names, named: r.named, unbuilt: r.unbuilt}
}

// Names are people's display names as the snapshot has them, read once a Reader, so that
// every row of an answer shows the same names as the documents it lists.
func (r *Reader) Names() spaces.Names {
	if !r.named {
		// AllNames fails only as a transaction does (a kv.Failure, which View returns).
		r.names, _ = spaces.AllNames(r.b.tx)
		r.named = true
	}
	return r.names
}

// view runs fn in a read transaction on the space's documents, for the Store's own
// reads around its writes (EnsureIndex, Walk).
func (s *Store) view(ctx context.Context, fn func(b *buckets) error) error {
	return s.db.View(ctx, func(tx kv.Tx) error { return fn(readBuckets(tx, s.space)) })
}

// prepared runs prepare on the space's documents in a read transaction and then, if it
// asks, apply in a write transaction (kv.Change): apply must check what prepare worked on
// (the document still at the version prepare read), since prepare may have read a store a
// commit or two old and another write may come between.
func (s *Store) prepared(ctx context.Context, prepare func(b *buckets) (write bool, err error), apply func(b *buckets) error) error {
	return kv.Change(ctx, s.db, func(tx kv.Tx) (bool, error) {
		return prepare(readBuckets(tx, s.space))
	}, func(tx kv.Tx) error {
		b, err := writeBuckets(tx, s.space)
		if err != nil {
			return err
		}
		return apply(b)
	})
}

// update runs fn in one write transaction on the space's documents, which may be
// committed with other writers' (kv.DB's Batch): fn may run more than once and must
// set its results afresh each time.
func (s *Store) update(ctx context.Context, fn func(b *buckets) error) error {
	return s.db.Batch(ctx, func(tx kv.Tx) error {
		b, err := writeBuckets(tx, s.space)
		if err != nil {
			return err
		}
		return fn(b)
	})
}

// buckets are the space's document buckets in one transaction; in a read transaction
// on a space that has none yet, all are nil and every lookup finds nothing.
type buckets struct {
	tx                                   kv.Tx
	space                                string
	docs, titles, recent, versions, meta kv.Bucket
	// where are the documents whose versions the transaction has found (versionBucket):
	// looked for once, not at every read.
	where map[string]versionKeys
}

func readBuckets(tx kv.Tx, space string) *buckets {
	return &buckets{
		tx:       tx,
		space:    space,
		docs:     spaces.Sub(tx, space, bucketDocs),
		titles:   spaces.Sub(tx, space, bucketTitles),
		recent:   spaces.Sub(tx, space, bucketRecent),
		versions: spaces.Sub(tx, space, bucketVersions),
		meta:     spaces.Sub(tx, space, bucketMeta),
	}
}

func writeBuckets(tx kv.Tx, space string) (*buckets, error) {
	b := &buckets{tx: tx, space: space}
	for _, x := range []struct {
		name string
		to   *kv.Bucket
	}{{bucketDocs, &b.docs}, {bucketTitles, &b.titles}, {bucketRecent, &b.recent}, {bucketVersions, &b.versions}, {bucketMeta, &b.meta}} {
		bk, err := spaces.CreateSub(tx, space, x.name)
		if err != nil {
			return nil, err
		}
		*x.to = bk
	}
	// Ids are ULIDs, saves are timed and versions numbered: keys mostly go at the end of
	// these buckets, where bbolt's default of splitting pages half full wastes half.
	for _, bk := range []kv.Bucket{b.docs, b.recent, b.versions} {
		bk.Tune(0.9)
	}
	return b, nil
}

func (b *buckets) doc(id string) (Document, bool, error) {
	if b.docs == nil {
		return Document{}, false, nil
	}
	return docOf(id, b.docs.Get([]byte(id)))
}

// docsRaw reads the records of documents ids at once, in their order, as stored: nil for
// an id without one. docOf reads each.
func (b *buckets) docsRaw(ids []string) [][]byte {
	ks := make([][]byte, len(ids))
	for i, id := range ids {
		ks[i] = []byte(id)
	}
	return kv.GetAll(b.docs, ks)
}

// docOf is document id's record from raw, as stored (nil: it has none).
func docOf(id string, raw []byte) (Document, bool, error) {
	if raw == nil {
		return Document{}, false, nil
	}
	var d Document
	if err := json.Unmarshal(raw, &d); err != nil {
		return Document{}, false, fmt.Errorf("reading the record of document %s: %w", id, err)
	}
	return d, true, nil
}

// listed reads the records of the documents a listing index names, at once, in their
// order; a name without a record is an error.
func (b *buckets) listed(ids []string) ([]Document, error) {
	docs := make([]Document, 0, len(ids))
	for i, raw := range b.docsRaw(ids) {
		d, ok, err := docOf(ids[i], raw)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("listing index names document %s, which has no record", ids[i])
		}
		docs = append(docs, d)
	}
	return docs, nil
}

func (b *buckets) count() int {
	if b.meta == nil {
		return 0
	}
	raw := b.meta.Get(keyCount)
	if len(raw) != 8 {
		return 0
	}
	return int(binary.BigEndian.Uint64(raw))
}

func (b *buckets) addCount(delta int) error {
	return b.meta.Put(keyCount, binary.BigEndian.AppendUint64(nil, uint64(b.count()+delta)))
}

// named finds a document by id, by exact title (case-insensitive), else by the one title
// that has every word of name in it.
func (b *buckets) named(name string) (Document, error) {
	name = strings.TrimSpace(name)
	// No id or title is longer than a title may be: a longer name names nothing, and is
	// not matched word by word against every title (which would cost name × titles).
	if name == "" || b.docs == nil || len(name) > 4*MaxTitle || utf8.RuneCountInString(name) > MaxTitle {
		return Document{}, &NotFoundError{Name: name}
	}
	if d, ok, err := b.doc(name); err != nil || (ok && d.Deleted == nil) {
		return d, err
	}
	if id := b.titles.Get(titleKey(name)); id != nil {
		d, ok, err := b.doc(string(id))
		if err != nil {
			return d, err
		}
		if !ok {
			return d, fmt.Errorf("title index names document %s, which has no record", id)
		}
		return d, nil
	}
	words := strings.Fields(strings.ToLower(name))
	slices.Sort(words)
	words = slices.Compact(words)
	var matches []string
	near := newCloseFinder(name) // in the same scan: what to suggest if nothing matches
	c := b.titles.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if hasWords(string(k), words) {
			matches = append(matches, string(v))
		} else if len(matches) == 0 {
			near.consider(k, v)
		}
	}
	switch len(matches) {
	case 0:
		return Document{}, b.notFound(name, near)
	case 1:
		d, _, err := b.doc(matches[0])
		return d, err
	}
	amb := &AmbiguousError{Name: name}
	for i, id := range matches {
		if i == 10 {
			amb.More = len(matches) - 10
			break
		}
		d, _, err := b.doc(id)
		if err != nil {
			return Document{}, err
		}
		amb.Matches = append(amb.Matches, d)
	}
	return Document{}, amb
}

// notFound is the refusal of name, with the documents of the titles near found close.
func (b *buckets) notFound(name string, near *closeFinder) error {
	e := &NotFoundError{Name: name}
	for _, t := range near.best {
		d, ok, err := b.doc(t.id)
		if err != nil {
			return err
		}
		if ok {
			e.Close = append(e.Close, d)
		}
	}
	return e
}

func hasWords(title string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(title, w) {
			return false
		}
	}
	return len(words) > 0
}

func titleKey(title string) []byte {
	return []byte(strings.ToLower(strings.TrimSpace(title)))
}

func versionKey(n int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

func recentKey(d Document) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(d.Saved.UnixNano()))
	return append(k, d.ID...)
}

// Find names a document: by id, by its exact title (case-insensitive), else by the one
// title that contains the given words. It returns ErrNotFound or an *AmbiguousError.
func (r *Reader) Find(name string) (Document, error) {
	return r.b.named(name)
}

// ByID returns the record of document id, deleted or not, without reading a version.
// Unlike Find it matches no title: it returns ErrNotFound unless the space has a document
// with exactly that id.
func (r *Reader) ByID(id string) (Document, error) {
	d, ok, err := r.b.doc(id)
	if err == nil && !ok {
		err = ErrNotFound
	}
	return d, err
}

// List returns at most limit documents, latest saved first, and how many there are in all.
func (r *Reader) List(limit int) ([]Document, int, error) {
	b := r.b
	if b.recent == nil {
		return nil, 0, nil
	}
	c := b.recent.Cursor()
	var ids []string
	for k, _ := c.Last(); k != nil && len(ids) < limit; k, _ = c.Prev() {
		ids = append(ids, string(k[8:]))
	}
	docs, err := b.listed(ids)
	return docs, b.count(), err
}

// namedVersion finds a named document and the number of its version (0: the latest),
// or a *NoVersionError when it has no such version.
func (b *buckets) namedVersion(name string, version int) (Document, int, error) {
	d, err := b.named(name)
	if err != nil {
		return d, 0, err
	}
	if version == 0 {
		version = d.Version
	}
	if version < 1 || version > d.Version {
		return d, 0, &NoVersionError{Document: d, Asked: version}
	}
	return d, version, nil
}

// Read returns a named document and one of its versions: the latest when version is 0.
// It returns ErrNotFound, an *AmbiguousError, or a *NoVersionError.
func (r *Reader) Read(name string, version int) (Document, Version, error) {
	d, n, err := r.b.namedVersion(name, version)
	if err != nil {
		return d, Version{}, err
	}
	v, err := r.b.version(d.ID, n)
	return d, v, err
}

// Create makes a new document whose version 1 has title and text. It returns a
// *TitleTakenError when another document of the space has the title.
func (s *Store) Create(ctx context.Context, title, text string, kind Kind, by Author) (Saved, error) {
	title, err := CleanTitle(title)
	if err != nil {
		return Saved{}, err
	}
	if err := checkVisible(title); err != nil {
		return Saved{}, err
	}
	if err := CheckText(text); err != nil {
		return Saved{}, err
	}
	links := scanLinks(text) // before the commit, which other writers wait for
	var saved Saved
	err = s.update(ctx, func(b *buckets) error {
		if other := b.titles.Get(titleKey(title)); other != nil {
			d, _, err := b.doc(string(other))
			if err != nil {
				return err
			}
			return &TitleTakenError{Title: title, Other: d}
		}
		if err := b.takenAlike(title, ""); err != nil {
			return err
		}
		now := s.now()
		d := Document{ID: newID(now)}
		added, _ := diffTexts("", text).counts()
		v := Version{Number: 1, Title: title, Text: text, Kind: kind, Author: by, At: now, Added: added}
		if err := b.put(&d, v, nil, change{links: links}); err != nil {
			return fmt.Errorf("creating document %q: %w", title, err)
		}
		if err := b.addCount(1); err != nil {
			return err
		}
		saved = Saved{Document: d, Added: added, Kind: kind}
		return nil
	})
	return saved, err
}

// Next is what a change makes of a document: its new title and text, and, when the change
// turned out to be of another kind than asked (a save that merged), that kind.
type Next struct {
	Title string
	Text  string
	Kind  Kind
}

// Change reads the named document's latest version and saves what how makes of it as a
// new version of the given kind (or of Next.Kind, when set). how may read older versions
// with at, and may refuse by returning an error, which Change returns as it is. The new
// title, when it changes, must be free.
//
// how, and the diff of its text against the latest, run in a read transaction before the
// write: the shared commit (see kv.DB's Batch) only checks that the document is still
// at the version how saw and puts the new one, so an edit's search or a merge doesn't hold
// up other writers, and a refusal seen then never enters the commit. When another write
// got there first (two appends to one document in one batch, say), how runs again inside
// the commit on the version the new one must follow: so how may run more than once.
//
// On a Store made by Proposing, a change of kind write, append or edit is not saved: it
// is kept as a proposal (Saved.Proposal) against the latest version, for the person to
// accept or decline.
func (s *Store) Change(ctx context.Context, name string, kind Kind, by Author, how func(d Document, latest Version, at func(n int) (Version, error)) (Next, error)) (Saved, error) {
	return s.change(ctx, name, kind, by, func(_ *buckets, d Document, latest Version, at func(int) (Version, error)) (Next, error) {
		return how(d, latest, at)
	}, nil)
}

// howFunc is Change's how, with the transaction's buckets for what else it must read.
type howFunc func(b *buckets, d Document, latest Version, at func(n int) (Version, error)) (Next, error)

// change is Change. then, if set, runs in the commit after the version is put (or, when
// the change turned out to change nothing, instead of it), and may write more in the same
// transaction or refuse the whole change.
func (s *Store) change(ctx context.Context, name string, kind Kind, by Author, how howFunc, then func(b *buckets, d *Document, saved *Saved) error) (Saved, error) {
	var p prepared
	propose := s.proposing && proposable(kind)
	var saved Saved
	// A change of title rewrites the [[links]] to the document (retitle.go): those of the
	// first relinkBatch documents worked out before the commit, and put in it; the rest
	// after it.
	var (
		edits map[string]relinkEdit
		rest  []string
		was   string // the title before
	)
	err := s.prepared(ctx, func(b *buckets) (write bool, err error) {
		p, err = b.prepare(name, kind, how)
		if err == nil && !propose && p.retitles() {
			x, _ := b.linkIndex()
			ids := b.relinkCandidates(x, p.d.ID, p.latest.Title)
			edits, err = b.relinkEdits(x, p.d.ID, p.latest.Title, p.next.Title, ids[:min(relinkBatch, len(ids))])
		}
		return err == nil && !(p.unchanged && then == nil), err
	}, func(b *buckets) error {
		saved, rest = Saved{}, nil
		d, err := b.named(name)
		if err != nil {
			return err
		}
		p := p // this may run again after a rolled-back batch: don't keep a run's choice
		if d.ID != p.d.ID || d.Version != p.d.Version {
			// Another write came between (often one committed in this same batch): work
			// the change out again here, on the version it must follow.
			if p, err = b.prepare(name, kind, how); err != nil {
				return err
			}
			d = p.d
		} else {
			p.d = d // the record as it is now: what else it counts may have changed
		}
		if p.unchanged {
			saved = Saved{Document: d, Unchanged: true}
			if then != nil {
				return then(b, &d, &saved)
			}
			return nil
		}
		// titleKey, not strings.EqualFold: the index's notion of "the same title" decides.
		if !bytes.Equal(titleKey(p.next.Title), titleKey(p.latest.Title)) {
			if other := b.titles.Get(titleKey(p.next.Title)); other != nil && string(other) != d.ID {
				od, _, err := b.doc(string(other))
				if err != nil {
					return err
				}
				return &TitleTakenError{Title: p.next.Title, Other: od}
			}
			if err := b.takenAlike(p.next.Title, d.ID); err != nil {
				return err
			}
		}
		if propose {
			if saved, err = b.putProposal(&d, p, by, s.now()); err != nil {
				return err
			}
			saved.Names = spaces.NamesOf(b.tx, by.For)
			saved.Diff = p.change.diff()
			return nil
		}
		latest := p.latest
		v := Version{Number: d.Version + 1, Title: p.next.Title, Text: p.next.Text, Kind: p.kind, Author: by, At: s.now(), Added: p.added, Removed: p.removed}
		if err := b.put(&d, v, &latest, p.change); err != nil {
			return fmt.Errorf("saving version %d of %s: %w", v.Number, d.ID, err)
		}
		saved = Saved{Document: d, Added: p.added, Removed: p.removed, Kind: p.kind, Diff: p.change.diff()}
		if then != nil {
			if err := then(b, &d, &saved); err != nil {
				return err
			}
		}
		if p.retitles() {
			x, _, err := b.builtLinks()
			if err != nil {
				return err
			}
			was = p.latest.Title
			ids := b.relinkCandidates(x, d.ID, was)
			first := ids[:min(relinkBatch, len(ids))]
			if saved.Relinked, err = b.relinkApply(d.ID, was, first, edits, by, s.now()); err != nil {
				return fmt.Errorf("rewriting the links to %s: %w", d.ID, err)
			}
			rest = ids[len(first):]
		}
		return nil
	})
	switch {
	case err != nil:
		return Saved{}, err
	case p.unchanged && then == nil:
		return Saved{Document: p.d, Unchanged: true}, nil
	}
	if len(rest) > 0 {
		more, left := s.relinkRest(ctx, saved.Document.ID, was, rest, by)
		saved.Relinked += more
		saved.RelinkLeft = left
	}
	return saved, nil
}

// retitles tells whether the change gives the document another title, as the titles
// index tells titles apart (a change of case alone is none).
func (p prepared) retitles() bool {
	return !p.unchanged && !bytes.Equal(titleKey(p.next.Title), titleKey(p.latest.Title))
}

// prepared is a change worked out in a read transaction, to be put by Change's commit if
// the document is still at the version it was made from.
type prepared struct {
	d              Document
	latest         Version
	next           Next
	kind           Kind
	change         change
	added, removed int
	unchanged      bool
	note           string // a proposal's Note
}

// prepare runs how on the named document's latest version and diffs its text against it.
func (b *buckets) prepare(name string, kind Kind, how howFunc) (prepared, error) {
	d, err := b.named(name)
	if err != nil {
		return prepared{}, err
	}
	latest, err := b.version(d.ID, d.Version)
	if err != nil {
		return prepared{}, err
	}
	at := func(n int) (Version, error) {
		if n < 1 || n > d.Version {
			return Version{}, &NoVersionError{Document: d, Asked: n}
		}
		return b.version(d.ID, n)
	}
	next, err := how(b, d, latest, at)
	if err != nil {
		return prepared{}, err
	}
	if next.Kind != "" {
		kind = next.Kind
	}
	if next.Title, err = CleanTitle(next.Title); err != nil {
		return prepared{}, err
	}
	if next.Title != latest.Title {
		if err := checkVisible(next.Title); err != nil {
			return prepared{}, err // a title stored before with one keeps saving
		}
	}
	if err := CheckText(next.Text); err != nil {
		return prepared{}, err
	}
	p := prepared{d: d, latest: latest, next: next, kind: kind}
	if next.Title == latest.Title && next.Text == latest.Text {
		p.unchanged = true
		return p, nil
	}
	p.change = diffTexts(latest.Text, next.Text)
	p.added, p.removed = p.change.counts()
	if next.Text != latest.Text {
		p.change.links = b.prepareLinks(d.ID, latest.Text, next.Text, p.change)
	}
	return p, nil
}

// opens is the first non-empty line of text, kept short enough to list without the text.
func opens(text string) string {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(line) > 400 {
			cut := 400
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			line = line[:cut]
		}
		return line
	}
	return ""
}

// CleanTitle trims white space around title and returns it, or ErrBadTitle (wrapped with
// the reason) when it is empty, longer than MaxTitle characters, or has line breaks or
// other control characters.
func CleanTitle(title string) (string, error) {
	title = strings.TrimSpace(title)
	switch {
	case title == "":
		return "", fmt.Errorf("%w: a title can't be empty", ErrBadTitle)
	case !utf8.ValidString(title):
		return "", fmt.Errorf("%w: a title must be valid UTF-8", ErrBadTitle)
	case utf8.RuneCountInString(title) > MaxTitle:
		return "", fmt.Errorf("%w: a title is at most %d characters", ErrBadTitle, MaxTitle)
	case strings.ContainsFunc(title, unicode.IsControl):
		return "", fmt.Errorf("%w: a title is one line, with no line breaks, tabs or control characters", ErrBadTitle)
	}
	return title, nil
}

// CheckText returns ErrBadText (wrapped with the reason) for a text over MaxText bytes, one
// that is not valid UTF-8, or one with NUL bytes; nil otherwise.
func CheckText(text string) error {
	switch {
	case len(text) > MaxText:
		return fmt.Errorf("%w: a text is at most %d MiB, this one is %.1f MiB", ErrBadText, MaxText>>20, float64(len(text))/(1<<20))
	case !utf8.ValidString(text):
		return fmt.Errorf("%w: a text must be valid UTF-8", ErrBadText)
	case strings.IndexByte(text, 0) >= 0:
		return fmt.Errorf("%w: a text can't have NUL bytes", ErrBadText)
	}
	return nil
}

package docstore

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/linediff"
)

// ClashError is returned when a text made from an older version changed lines that were
// changed differently since (or next to them). Nothing was saved.
type ClashError struct {
	Document  Document // as it is now: Document.Version is the latest
	Base      int      // the version the text was made from
	Conflicts []linediff.Conflict
}

func (e *ClashError) Error() string {
	return fmt.Sprintf("%d clashing regions between version %d of %s and a text made from version %d", len(e.Conflicts), e.Document.Version, e.Document.ID, e.Base)
}

// Save is a person's save of a named document's whole text, made from version base (0: the
// latest). From the latest it is a new version of kind save; from an older one, text is
// merged line by line with the versions since (kind merge). Where both changed the same
// lines, prefer chooses whose lines stay; with linediff.Clash nothing is saved and a
// *ClashError says where.
func (s *Store) Save(name string, base int, text string, by Author, prefer linediff.Prefer) (Saved, error) {
	return s.fromBase(name, KindSave, "", text, base, by, prefer)
}

func (s *Store) fromBase(name string, kind Kind, title, text string, base int, by Author, prefer linediff.Prefer) (Saved, error) {
	return s.Change(name, kind, by, func(d Document, latest Version, at func(int) (Version, error)) (Next, error) {
		// A local, not the captured title: this may run again after a rolled-back batch.
		title := title
		if strings.TrimSpace(title) == "" {
			title = latest.Title
		}
		if base == 0 || base == latest.Number {
			return Next{Title: title, Text: text}, nil
		}
		from, err := at(base)
		if err != nil {
			return Next{}, err
		}
		if prefer != linediff.Clash {
			return Next{Title: title, Text: linediff.MergePrefer(from.Text, latest.Text, text, prefer), Kind: KindMerge}, nil
		}
		merged, conflicts := linediff.Merge3(from.Text, latest.Text, text)
		if len(conflicts) > 0 {
			return Next{}, &ClashError{Document: d, Base: base, Conflicts: conflicts}
		}
		return Next{Title: title, Text: merged, Kind: KindMerge}, nil
	})
}

// Restore makes a new version (kind restore) whose text is that of version n.
func (s *Store) Restore(name string, n int, by Author) (Saved, error) {
	return s.Change(name, KindRestore, by, func(d Document, latest Version, at func(int) (Version, error)) (Next, error) {
		old, err := at(n)
		if err != nil {
			return Next{}, err
		}
		return Next{Title: latest.Title, Text: old.Text}, nil
	})
}

// Rename makes a new version (kind rename) with the same text and a new title, which must
// not be another document's in the space (*TitleTakenError).
func (s *Store) Rename(name, title string, by Author) (Saved, error) {
	return s.Change(name, KindRename, by, func(d Document, latest Version, _ func(int) (Version, error)) (Next, error) {
		return Next{Title: title, Text: latest.Text}, nil
	})
}

// Diff renders the unified diff from version a to version b of a named document (b 0: the
// latest), or "" when their texts are the same.
func (s *Store) Diff(name string, a, b int) (Document, string, error) {
	var (
		d    Document
		diff string
	)
	err := s.view(func(bk *buckets) (err error) {
		if d, err = bk.named(name); err != nil {
			return err
		}
		if b == 0 {
			b = d.Version
		}
		va, vb, err := bk.pair(d, a, b)
		if err != nil {
			return err
		}
		diff = linediff.Unified(fmt.Sprintf("%s v%d", va.Title, a), fmt.Sprintf("%s v%d", vb.Title, b), va.Text, vb.Text, 3)
		return nil
	})
	return d, diff, err
}

func (b *buckets) pair(d Document, x, y int) (Version, Version, error) {
	for _, n := range []int{x, y} {
		if n < 1 || n > d.Version {
			return Version{}, Version{}, &NoVersionError{Document: d, Asked: n}
		}
	}
	vx, err := b.version(d.ID, x)
	if err != nil {
		return Version{}, Version{}, err
	}
	vy, err := b.version(d.ID, y)
	return vx, vy, err
}

// Since returns what changed in a named document after version n: the versions since,
// newest first (texts left out), and the unified diff from version n to the latest.
func (s *Store) Since(name string, n int) (Document, []Version, string, error) {
	var (
		d    Document
		vs   []Version
		diff string
	)
	err := s.view(func(b *buckets) (err error) {
		if d, err = b.named(name); err != nil {
			return err
		}
		from, latest, err := b.pair(d, n, d.Version)
		if err != nil {
			return err
		}
		err = b.headers(d.ID, n+1, d.Version, func(v Version) error {
			vs = append(vs, v)
			return nil
		})
		if err != nil {
			return err
		}
		diff = linediff.Unified(fmt.Sprintf("%s v%d", from.Title, n), fmt.Sprintf("%s v%d", latest.Title, d.Version), from.Text, latest.Text, 3)
		return nil
	})
	return d, vs, diff, err
}

// Deletion says when a document was deleted, and by whom.
type Deletion struct {
	At time.Time `json:"at"`
	By Author    `json:"by"`
}

// Delete takes a named document out of listings and lookups. Its versions are kept: it can
// be listed (Deleted), brought back (Undelete), or purged for good (Purge).
func (s *Store) Delete(name string, by Author) (Document, error) {
	var d Document
	err := s.update(func(b *buckets) (err error) {
		if d, err = b.named(name); err != nil {
			return err
		}
		if err := b.recent.Delete(recentKey(d)); err != nil {
			return err
		}
		if err := b.titles.Delete(titleKey(d.Title)); err != nil {
			return err
		}
		d.Deleted = &Deletion{At: s.now(), By: by}
		if err := b.putDoc(d); err != nil {
			return err
		}
		if err := b.indexDrop(d); err != nil {
			return err
		}
		return b.addCount(-1)
	})
	return d, err
}

// deleted finds a deleted document by id or exact title (case-insensitive); the latest
// deleted one when several had the title.
func (b *buckets) deleted(name string) (Document, error) {
	name = strings.TrimSpace(name)
	var found Document
	err := b.eachDoc(func(d Document) error {
		if d.Deleted != nil && (d.ID == name || strings.EqualFold(d.Title, name)) && (found.ID == "" || d.Deleted.At.After(found.Deleted.At)) {
			found = d
		}
		return nil
	})
	if err == nil && found.ID == "" {
		err = ErrNotFound
	}
	return found, err
}

func (b *buckets) eachDoc(fn func(Document) error) error {
	if b.docs == nil {
		return nil
	}
	return b.docs.ForEach(func(k, v []byte) error {
		var d Document
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("reading the record of document %s: %w", k, err)
		}
		return fn(d)
	})
}

func (b *buckets) putDoc(d Document) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return b.docs.Put([]byte(d.ID), raw)
}

// Undelete brings a deleted document (named by id or exact title) back into listings and
// lookups, as it was. Its title must still be free (*TitleTakenError).
func (s *Store) Undelete(name string) (Document, error) {
	var d Document
	err := s.update(func(b *buckets) (err error) {
		if d, err = b.deleted(name); err != nil {
			return err
		}
		if other := b.titles.Get(titleKey(d.Title)); other != nil {
			od, _, err := b.doc(string(other))
			if err != nil {
				return err
			}
			return &TitleTakenError{Title: d.Title, Other: od}
		}
		d.Deleted = nil
		if err := b.putDoc(d); err != nil {
			return err
		}
		if err := b.titles.Put(titleKey(d.Title), []byte(d.ID)); err != nil {
			return err
		}
		if err := b.recent.Put(recentKey(d), nil); err != nil {
			return err
		}
		if err := b.indexAdd(d); err != nil {
			return err
		}
		return b.addCount(1)
	})
	return d, err
}

// Purge removes a deleted document (named by id or exact title) and all its versions for good.
func (s *Store) Purge(name string) (Document, error) {
	var d Document
	err := s.update(func(b *buckets) (err error) {
		if d, err = b.deleted(name); err != nil {
			return err
		}
		if err := b.forget(d.ID); err != nil {
			return err
		}
		vb, err := b.versionBucket(d.ID)
		if err != nil {
			return err
		}
		if vb.prefix == nil {
			err = b.versions.DeleteBucket([]byte(d.ID))
		} else {
			err = vb.purge()
		}
		if err != nil {
			return fmt.Errorf("purging the versions of %s: %w", d.ID, err)
		}
		return b.docs.Delete([]byte(d.ID))
	})
	return d, err
}

// Deleted lists the space's deleted documents, most recently deleted first.
func (s *Store) Deleted() ([]Document, error) {
	var docs []Document
	err := s.view(func(b *buckets) error {
		return b.eachDoc(func(d Document) error {
			if d.Deleted != nil {
				docs = append(docs, d)
			}
			return nil
		})
	})
	for i := 1; i < len(docs); i++ {
		for j := i; j > 0 && docs[j].Deleted.At.After(docs[j-1].Deleted.At); j-- {
			docs[j], docs[j-1] = docs[j-1], docs[j]
		}
	}
	return docs, err
}

// Documents returns every document of the space, deleted ones too, without their texts.
func (s *Store) Documents() ([]Document, error) {
	var docs []Document
	err := s.view(func(b *buckets) error {
		return b.eachDoc(func(d Document) error {
			docs = append(docs, d)
			return nil
		})
	})
	return docs, err
}

// Walk calls fn with every version of document id, newest first: with its text when text
// is true, else with Text empty (and then without rebuilding any text at all). It reads
// them in read transactions of one snapshot's worth of versions (starting a chunk afresh
// costs at most one chain of deltas), so that memory holds about two
// versions' texts whatever the history's length (History holds all of them), and the file
// is never held for the whole walk: another process gets its turn between chunks. fn runs
// inside a transaction; it should not wait on anything slow.
func (s *Store) Walk(id string, text bool, fn func(Version) error) error {
	var d Document
	err := s.view(func(b *buckets) error {
		var ok bool
		var err error
		if d, ok, err = b.doc(id); err == nil && !ok {
			err = ErrNotFound
		}
		return err
	})
	if err != nil {
		return err
	}
	chunk := snapshotEvery
	for hi := d.Version; hi >= 1; hi -= chunk {
		lo := max(1, hi-chunk+1)
		err := s.view(func(b *buckets) error {
			if !text {
				return b.headers(d.ID, lo, hi, fn)
			}
			return b.span(d.ID, lo, hi, fn)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Log returns a named document and every version of it, newest first, without texts.
func (s *Store) Log(name string) (Document, []Version, error) {
	d, err := s.Find(name)
	if err != nil {
		return Document{}, nil, err
	}
	vs := make([]Version, 0, d.Version)
	err = s.Walk(d.ID, false, func(v Version) error {
		vs = append(vs, v)
		return nil
	})
	return d, vs, err
}

// headers calls fn with versions hi down to lo of document id, their texts left out.
func (b *buckets) headers(id string, lo, hi int, fn func(Version) error) error {
	vb, err := b.versionBucket(id)
	if err != nil {
		return err
	}
	b.prefetchRecords(vb, lo, hi)
	for k := hi; k >= lo; k-- {
		r, err := b.recordOf(vb, id, k, false)
		if err != nil {
			return err
		}
		r.Version.Text = "" // a record of the layout before is JSON whole, its text in it
		if err := fn(r.Version); err != nil {
			return err
		}
	}
	return nil
}

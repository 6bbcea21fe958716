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
		err = b.span(d.ID, n+1, d.Version, func(v Version) error {
			v.Text = ""
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

// Each calls fn with every document of the space, deleted ones too, and all its versions,
// oldest first, in one read transaction: a consistent picture to export.
func (s *Store) Each(fn func(Document, []Version) error) error {
	return s.view(func(b *buckets) error {
		return b.eachDoc(func(d Document) error {
			vs := make([]Version, d.Version)
			err := b.span(d.ID, 1, d.Version, func(v Version) error {
				vs[v.Number-1] = v
				return nil
			})
			if err != nil {
				return err
			}
			return fn(d, vs)
		})
	})
}

package docstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Deletion says when a document was deleted, and by whom.
type Deletion struct {
	At time.Time `json:"at"`
	By Author    `json:"by"`
}

// Delete takes a named document out of listings and lookups. Its versions are kept: it can
// be listed (Deleted), brought back (Undelete), or purged for good (Purge).
func (s *Store) Delete(ctx context.Context, name string, by Author) (Document, error) {
	var d Document
	err := s.update(ctx, func(b *buckets) (err error) {
		if d, err = b.named(name); err != nil {
			return err
		}
		if err := b.recent.Delete(recentKey(d)); err != nil {
			return err
		}
		if err := b.titles.Delete(titleKey(d.Title)); err != nil {
			return err
		}
		if err := b.dropAlike(d.Title, d.ID); err != nil {
			return err
		}
		d.Deleted = &Deletion{At: s.now(), By: by}
		if err := b.putDoc(d); err != nil {
			return err
		}
		if err := b.event(d.Deleted.At, d.ID, Event{What: EventDelete, Title: d.Title, Author: by}); err != nil {
			return err
		}
		if err := b.inboxDoc(d, false); err != nil {
			return err
		}
		if err := b.indexDrop(d); err != nil {
			return err
		}
		if err := b.linksDrop(d.ID); err != nil {
			return err
		}
		return b.addCount(-1)
	})
	return d, err
}

// deleted finds a deleted document by id or exact title (case-insensitive); the latest
// deleted one when several had the title. Not found, it suggests the deleted titles close
// to name.
func (b *buckets) deleted(name string) (Document, error) {
	name = strings.TrimSpace(name)
	var found Document
	near := newCloseFinder(name) // the deleted titles to suggest if none is it
	err := b.eachDoc(func(d Document) error {
		switch {
		case d.Deleted == nil:
		case d.ID == name || strings.EqualFold(d.Title, name):
			if found.ID == "" || d.Deleted.At.After(found.Deleted.At) {
				found = d
			}
		default:
			near.consider([]byte(strings.ToLower(d.Title)), []byte(d.ID))
		}
		return nil
	})
	if err == nil && found.ID == "" {
		err = b.notFound(name, near)
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
func (s *Store) Undelete(ctx context.Context, name string) (Document, error) {
	var d Document
	err := s.update(ctx, func(b *buckets) (err error) {
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
		if err := b.takenAlike(d.Title, d.ID); err != nil {
			return err
		}
		d.Deleted = nil
		if err := b.putDoc(d); err != nil {
			return err
		}
		if err := b.event(s.now(), d.ID, Event{What: EventUndelete, Title: d.Title}); err != nil {
			return err
		}
		if err := b.inboxDoc(d, true); err != nil {
			return err
		}
		if err := b.titles.Put(titleKey(d.Title), []byte(d.ID)); err != nil {
			return err
		}
		if err := b.putAlike(d.Title, d.ID); err != nil {
			return err
		}
		if err := b.recent.Put(recentKey(d), nil); err != nil {
			return err
		}
		if err := b.indexAdd(d); err != nil {
			return err
		}
		if err := b.linksAdd(d); err != nil {
			return err
		}
		return b.addCount(1)
	})
	return d, err
}

// Purge removes a deleted document (named by id or exact title) and all its versions for good.
func (s *Store) Purge(ctx context.Context, name string) (Document, error) {
	var d Document
	err := s.update(ctx, func(b *buckets) (err error) {
		if d, err = b.deleted(name); err != nil {
			return err
		}
		if err := b.forget(d.ID); err != nil {
			return err
		}
		if err := b.linksForget(d.ID); err != nil {
			return err
		}
		if err := b.purgeReview(d.ID); err != nil {
			return err
		}
		if err := b.forgetActivity(d.ID); err != nil {
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
		delete(b.where, d.ID)
		if err != nil {
			return fmt.Errorf("purging the versions of %s: %w", d.ID, err)
		}
		return b.docs.Delete([]byte(d.ID))
	})
	return d, err
}

// Deleted lists the space's deleted documents, most recently deleted first.
func (r *Reader) Deleted() ([]Document, error) {
	var docs []Document
	err := r.b.eachDoc(func(d Document) error {
		if d.Deleted != nil {
			docs = append(docs, d)
		}
		return nil
	})
	for i := 1; i < len(docs); i++ {
		for j := i; j > 0 && docs[j].Deleted.At.After(docs[j-1].Deleted.At); j-- {
			docs[j], docs[j-1] = docs[j-1], docs[j]
		}
	}
	return docs, err
}

// Documents returns every document of the space, deleted ones too, without their texts.
func (r *Reader) Documents() ([]Document, error) {
	var docs []Document
	err := r.b.eachDoc(func(d Document) error {
		docs = append(docs, d)
		return nil
	})
	return docs, err
}

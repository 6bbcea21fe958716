package docstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// An index is one of what a space keeps beside each document's versions: its record, and
// the indexes that find documents by title, time, word or link and what waits for people.
// A new version changes it in the transaction that saves the version (put); one that a
// store written before it lacks is built when a read finds it missing (build).
//
// Adding an index is adding an entry to indexes: its bucket goes in doc.go's Layout
// (TestLayoutNamesEveryBucket checks), its put runs on every version, and a Reader's read
// that finds it not built calls r.unbuilt.add with it, so that View builds it and reads
// again.
type index struct {
	// buckets are the index's buckets in the space's (doc.go's Layout).
	buckets []string
	// put brings the index up to date with version v of the document whose record was
	// was and is now d (its title, version, time and author v's); prev is the version
	// before v (nil for a new document) and c the change from it to v. Nil when a version
	// doesn't change the index (the inbox: proposals and comments do).
	put func(b *buckets, was Document, d *Document, v Version, prev *Version, c change) error
	// build builds the space's index, in a write transaction of its own, unless it is
	// built already (ensureBuilt). Nil for an index every store has had from its start.
	build func(ctx context.Context, s *Store) error
}

// The indexes, in the order put brings them up to date: the version first, and the links
// after the titles, which resolve them.
var (
	indexVersions = &index{buckets: []string{bucketVersions}, put: putVersionIndex}
	indexComments = &index{buckets: []string{bucketComments, bucketAnchors}, put: func(b *buckets, _ Document, d *Document, v Version, _ *Version, c change) error {
		if err := b.moveComments(d, v, c); err != nil {
			return fmt.Errorf("carrying the comments of %s to version %d: %w", d.ID, v.Number, err)
		}
		return nil
	}}
	indexDocs   = &index{buckets: []string{bucketDocs}, put: putRecord}
	indexTitles = &index{buckets: []string{bucketTitles}, put: putTitle}
	indexAlike  = &index{buckets: []string{bucketAlike}, put: putAlikeTitle}
	indexRecent = &index{buckets: []string{bucketRecent}, put: func(b *buckets, was Document, d *Document, _ Version, _ *Version, _ change) error {
		if was.Version > 0 {
			if err := b.recent.Delete(recentKey(was)); err != nil {
				return err
			}
		}
		return b.recent.Put(recentKey(*d), nil)
	}}
	indexSearch = &index{buckets: []string{bucketSearch},
		put: func(b *buckets, _ Document, d *Document, v Version, prev *Version, c change) error {
			return b.indexPut(d.ID, v, prev, c)
		},
		build: func(ctx context.Context, s *Store) error { return s.EnsureIndex(ctx, nil) },
	}
	indexLinks = &index{buckets: []string{bucketLinks},
		put: func(b *buckets, _ Document, d *Document, v Version, prev *Version, c change) error {
			return b.linksPut(d.ID, v, prev, c.links)
		},
		build: func(ctx context.Context, s *Store) error { return s.EnsureLinks(ctx, nil) },
	}
	indexInbox = &index{buckets: []string{bucketInbox, bucketInboxN},
		build: func(ctx context.Context, s *Store) error { return s.EnsureInbox(ctx) },
	}

	// The activity (activity.go): a version is one of its events; proposals, decisions,
	// comments and deletions put theirs where they are made.
	indexActivity = &index{buckets: []string{bucketActivity},
		put: func(b *buckets, _ Document, d *Document, v Version, _ *Version, _ change) error {
			return b.event(v.At, d.ID, versionEvent(v))
		},
		build: func(ctx context.Context, s *Store) error { return s.EnsureActivity(ctx) },
	}

	indexes = []*index{indexVersions, indexComments, indexDocs, indexTitles, indexAlike, indexRecent, indexSearch, indexLinks, indexInbox, indexActivity}
)

// put writes version v of d and brings d's record and indexes up to date with it. prev is
// the version before v (nil for a new document), and c the change from it to v.
func (b *buckets) put(d *Document, v Version, prev *Version, c change) error {
	was := *d
	// Keep save times strictly increasing per document so the listing key is never reused.
	if !v.At.After(d.Saved) && d.Version > 0 {
		v.At = d.Saved.Add(time.Nanosecond)
	}
	d.Title, d.Version, d.Saved, d.Author = v.Title, v.Number, v.At, v.Author
	d.Bytes, d.Opens = len(v.Text), opens(v.Text)
	d.Largest = max(d.Largest, d.Bytes)
	if prev != nil {
		d.Largest = max(d.Largest, len(prev.Text))
	}
	for _, x := range indexes {
		if x.put == nil {
			continue
		}
		if err := x.put(b, was, d, v, prev, c); err != nil {
			return err
		}
	}
	return nil
}

func putVersionIndex(b *buckets, _ Document, d *Document, v Version, prev *Version, c change) error {
	vb := versionKeys{b: b.versions, prefix: []byte(d.ID)} // a new document's (Create)
	if prev != nil {
		var err error
		if vb, err = b.versionBucket(d.ID); err != nil {
			return err
		}
	}
	return b.putVersion(vb, v, prev, c)
}

func putRecord(b *buckets, _ Document, d *Document, _ Version, _ *Version, _ change) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return b.docs.Put([]byte(d.ID), raw)
}

// retitled is whether version v has another title than prev, by the titles index's notion
// of the same title (a new document's is new).
func retitled(v Version, prev *Version) bool {
	return prev == nil || !bytes.Equal(titleKey(prev.Title), titleKey(v.Title))
}

func putTitle(b *buckets, _ Document, d *Document, v Version, prev *Version, _ change) error {
	if prev != nil && retitled(v, prev) {
		if err := b.titles.Delete(titleKey(prev.Title)); err != nil {
			return err
		}
	}
	return b.titles.Put(titleKey(d.Title), []byte(d.ID))
}

func putAlikeTitle(b *buckets, _ Document, d *Document, v Version, prev *Version, _ change) error {
	if !retitled(v, prev) {
		return nil
	}
	if prev != nil {
		if err := b.dropAlike(prev.Title, d.ID); err != nil {
			return err
		}
	}
	return b.putAlike(d.Title, d.ID)
}

// unbuilt are the indexes a snapshot's reads found not built, each with the spaces it was
// missing in (a Reader reads other spaces In its snapshot).
type unbuilt struct {
	missing map[*index][]string
}

// add notes that the reads found x not built in space.
func (u *unbuilt) add(x *index, space string) {
	if u.missing == nil {
		u.missing = map[*index][]string{}
	}
	u.missing[x] = append(u.missing[x], space)
}

func (u *unbuilt) none() bool { return len(u.missing) == 0 }

// build builds every index u found missing, in the order of indexes.
func (u *unbuilt) build(ctx context.Context, s *Store) error {
	for _, x := range indexes {
		for _, space := range u.missing[x] {
			if err := x.build(ctx, New(s.db, space)); err != nil {
				return err
			}
		}
	}
	return nil
}

package docstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// SetSnapshotEvery sets how often a version is stored whole, for tests; it returns a func
// that puts it back.
func SetSnapshotEvery(k int) (restore func()) {
	old := snapshotEvery
	snapshotEvery = k
	return func() { snapshotEvery = old }
}

// SameLinks is sameLinks of the change from old to new, for tests.
func SameLinks(old, new string) bool { return sameLinks(diffTexts(old, new)) }

// LinkDeltaRead tells whether a save of new over old reads the links of the lines around
// the change alone (linkDeltaOf), for tests.
func LinkDeltaRead(old, new string) bool {
	_, ok := linkDeltaOf(old, new, diffTexts(old, new))
	return ok && !sameLinks(diffTexts(old, new))
}

// LinksDump is the space's links index as it is, every key and value of out/, in/, broken/,
// gone/ and sums/ a line, for tests that compare two ways of making it. A broken target's
// text as first written is folded: a save keeps it as the target came, and a target
// written two ways ([[Budget]], [[budget]]) may have lost its first since.
func (s *Store) LinksDump() (string, error) {
	var out strings.Builder
	err := s.view(context.Background(), func(b *buckets) error {
		x, _ := b.linkIndex()
		for _, part := range []struct {
			name string
			bk   kv.Bucket
		}{{"out", x.out}, {"in", x.in}, {"broken", x.broken}, {"gone", x.gone}, {"sums", x.sums}} {
			if part.bk == nil {
				continue
			}
			if err := part.bk.ForEach(func(k, v []byte) error {
				if part.name == "out" {
					t := decodeTarget(nil, v)
					fmt.Fprintf(&out, "out %q %d %q %q\n", k, t.n, t.to, strings.ToLower(t.written))
					return nil
				}
				fmt.Fprintf(&out, "%s %q %x\n", part.name, k, v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	return out.String(), err
}

// RebuildLinks builds the space's links index again from the documents' texts, for tests.
func (s *Store) RebuildLinks() error {
	return s.updateLinks(func(b *buckets, x linkIndex) error { return b.rebuildLinks(x, nil) })
}

// updateLinks runs fn in a write transaction on the space's documents and links index.
func (s *Store) updateLinks(fn func(b *buckets, x linkIndex) error) error {
	return s.db.Update(context.Background(), func(tx kv.Tx) error {
		b, err := writeBuckets(tx, s.space)
		if err != nil {
			return err
		}
		x, err := b.linkIndex()
		if err != nil {
			return err
		}
		return fn(b, x)
	})
}

// DowngradeLinks rewrites the space's links index as format 1 had it (out/ values without
// their counts, sums/ the digest alone), for tests of a file written before format 2.
func (s *Store) DowngradeLinks() error {
	return s.updateLinks(func(_ *buckets, x linkIndex) error {
		type kvPair struct{ k, v []byte }
		var outs, sums []kvPair
		x.out.ForEach(func(k, v []byte) error {
			t := decodeTarget(k, v)
			old := []byte(t.to)
			if t.to == "" {
				old = append([]byte{brokenMark}, t.written...)
			}
			outs = append(outs, kvPair{append([]byte(nil), k...), old})
			return nil
		})
		x.sums.ForEach(func(k, v []byte) error {
			sums = append(sums, kvPair{append([]byte(nil), k...), append([]byte(nil), v[:8]...)})
			return nil
		})
		for _, p := range outs {
			if err := x.out.Put(p.k, p.v); err != nil {
				return err
			}
		}
		for _, p := range sums {
			if err := x.sums.Put(p.k, p.v); err != nil {
				return err
			}
		}
		return x.meta.Put(linksBuilt, []byte{0, 0, 0, 1})
	})
}

// CreateAsBefore makes a document as a version before look-alike titles did (alike.go):
// any title the old checks let through (CleanTitle, the exact title free), and no
// doc_alike left in the space, as in a file it wrote. For tests of files written before.
func (s *Store) CreateAsBefore(ctx context.Context, title, text string) (Document, error) {
	var d Document
	err := s.update(ctx, func(b *buckets) error {
		if b.titles.Get(titleKey(title)) != nil {
			return &TitleTakenError{Title: title}
		}
		now := s.now()
		d = Document{ID: newID(now)}
		v := Version{Number: 1, Title: title, Text: text, Kind: KindWrite, Author: Author{By: "person:old"}, At: now}
		if err := b.put(&d, v, nil, change{links: scanLinks(text)}); err != nil {
			return err
		}
		if err := b.addCount(1); err != nil {
			return err
		}
		return spaces.Bucket(b.tx, b.space).DeleteBucket([]byte(bucketAlike))
	})
	return d, err
}

// SetActivityScan makes a read of the activity look at n entries at most a space, until
// the func it returns puts it back.
func SetActivityScan(n int) func() {
	was := activityScan
	activityScan = n
	return func() { activityScan = was }
}

// RelinkBatch is how many documents a transaction rewrites the links of, for tests.
const RelinkBatch = relinkBatch

package docstore

import "fmt"

// Page lists up to limit (at least 1) of the space's documents, deleted ones left out, newest
// made first: by id, a ULID, from the one before the id after ("" starts at the newest). It
// returns the id to give as after for the next page, "" when there is none.
//
// Unlike List's order (latest saved first), this one doesn't change as documents are saved,
// so a listing made a page at a time, with saves between the pages, neither skips a document
// nor shows one twice. A document made meanwhile is newer than the first page, so it is left
// out; one deleted meanwhile is not shown again.
func (r *Reader) Page(after string, limit int) (docs []Document, next string, err error) {
	limit = max(limit, 1)
	b := r.b
	if b.docs == nil {
		return docs, next, nil
	}
	c := b.docs.Cursor()
	var k, v []byte
	switch {
	case after == "":
		k, v = c.Last()
	default:
		if k, _ = c.Seek([]byte(after)); k == nil {
			k, v = c.Last() // every id is before after
		} else {
			k, v = c.Prev() // the first id before after
		}
	}
	for ; k != nil; k, v = c.Prev() {
		if v == nil {
			continue // a bucket, not a record
		}
		d, ok, err := b.doc(string(k))
		if err != nil {
			return docs, next, err
		}
		if !ok {
			return docs, next, fmt.Errorf("paging the documents: %s has no record", k)
		}
		if d.Deleted != nil {
			continue
		}
		if len(docs) == limit {
			next = docs[len(docs)-1].ID
			return docs, next, nil
		}
		docs = append(docs, d)
	}
	return docs, next, nil
}

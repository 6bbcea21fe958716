package docstore

import (
	"encoding/hex"
	"fmt"
)

// Recent returns at most limit documents, latest saved first (as List orders them),
// starting after the one the cursor after names ("" for the first page), with the cursor
// of the next page ("" when none is left) and how many documents there are in all: the
// person's page lists documents so. Its cost is limit's, whatever the number of documents.
// A document saved while someone pages moves to the front: it is not seen again on later
// pages (Page's order, by creation, is the one that never moves).
func (r *Reader) Recent(after string, limit int) (docs []Document, next string, total int, err error) {
	var from []byte
	if after != "" {
		if from, err = hex.DecodeString(after); err != nil || len(from) <= 8 {
			return nil, "", 0, fmt.Errorf("the cursor %q is not one Recent gave", after)
		}
	}
	b := r.b
	if b.recent == nil {
		return docs, next, total, nil
	}
	total = b.count()
	c := b.recent.Cursor()
	var k []byte
	if from == nil {
		k, _ = c.Last()
	} else if k, _ = c.Seek(from); k == nil {
		k, _ = c.Last() // every key sorts before the cursor's
	} else {
		k, _ = c.Prev() // Seek found the cursor's key, or the first after it
	}
	var ids []string
	for ; k != nil && len(ids) < limit; k, _ = c.Prev() {
		ids = append(ids, string(k[8:]))
	}
	listed, err := b.listed(ids)
	if err != nil {
		return docs, next, total, err
	}
	docs = append(docs, listed...)
	if k != nil && len(docs) > 0 {
		next = hex.EncodeToString(recentKey(docs[len(docs)-1]))
	}
	return docs, next, total, nil
}

package docstore

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// Look-alike titles. Titles are unique by doc_titles' key (lower case, trimmed); two titles
// that differ there but look the same in a listing ("Launch plan" and "Launch plan" with a
// no-break space, a fullwidth "Ｌ", or a zero-width space in it) would let a person, or an
// agent, mistake one document for the other. So:
//
//   - a new title (Create, a rename, a save that changes the title) with an invisible
//     character is refused (ErrBadTitle): format characters (zero-width space, joiners
//     but the one inside an emoji sequence, marks of direction, soft hyphen, byte order
//     mark) and the blank letters (Hangul fillers, braille blank); a title already
//     stored with one keeps opening and saving as it is;
//   - doc_alike keeps each title's look-alike key (alikeKey: NFKC, lower case, every
//     run of white space one space, variation selectors and joiners dropped), and a new
//     title whose look-alike key another document has is refused (*TitleTakenError, with
//     Alike set, naming that document).
//
// doc_alike is built from doc_titles in the first write transaction that asks for it (a
// file written before it has none). Two documents stored before whose titles share a key
// both keep their titles and keep opening: the bucket names one of them (the first in
// doc_titles' order), and a third document with a title like theirs is refused, naming it.
const bucketAlike = "doc_alike"

// alikeKey is the key of titles that look alike, made from a doc_titles key (titleKey).
func alikeKey(key []byte) []byte {
	s := norm.NFKC.String(string(key))
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r) || r == 0x3164 || r == 0x115f || r == 0x1160 || r == 0xffa0 || r == 0x2800:
			space = b.Len() > 0
			continue
		case invisible(r) || r == 0x200d || unicode.Is(unicode.Variation_Selector, r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteString(strings.ToLower(string(r)))
	}
	return []byte(b.String())
}

// invisible reports whether r is a format character (Cf: zero-width space, joiners, marks
// of direction, soft hyphen, BOM) or a blank letter, that shows nothing in a title.
func invisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || r == 0x034f || r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0 || r == 0x2800
}

// checkVisible returns ErrBadTitle (wrapped) when a new title has an invisible character;
// a zero-width joiner between two symbols (an emoji sequence: 👩‍💻) is not one.
func checkVisible(title string) error {
	rs := []rune(title)
	for i, r := range rs {
		if !invisible(r) {
			continue
		}
		if r == 0x200d && i > 0 && i < len(rs)-1 && emojiPart(rs[i-1]) && emojiPart(rs[i+1]) {
			continue
		}
		return fmt.Errorf("%w: it has an invisible character (U+%04X) that would make it look like another title; type the title with visible characters only", ErrBadTitle, r)
	}
	return nil
}

// emojiPart: a symbol, or a selector or modifier that follows one in an emoji sequence.
func emojiPart(r rune) bool {
	return unicode.Is(unicode.So, r) || unicode.Is(unicode.Sk, r) || unicode.Is(unicode.Variation_Selector, r)
}

// alike returns doc_alike in a write transaction, building it from doc_titles if the file
// has none yet.
func (b *buckets) alike() (kv.Bucket, error) {
	if bk := spaces.Sub(b.tx, b.space, bucketAlike); bk != nil {
		return bk, nil
	}
	bk, err := spaces.CreateSub(b.tx, b.space, bucketAlike)
	if err != nil {
		return nil, err
	}
	err = b.titles.ForEach(func(k, id []byte) error {
		ak := alikeKey(k)
		if len(ak) == 0 || bk.Get(ak) != nil {
			return nil // the first keeps it (see above)
		}
		return bk.Put(ak, id)
	})
	if err != nil {
		return nil, fmt.Errorf("building the look-alike titles of space %s: %w", b.space, err)
	}
	return bk, nil
}

// takenAlike returns a *TitleTakenError when a document other than id (the one retitled;
// "" for a new one) has a title that looks like title.
func (b *buckets) takenAlike(title, id string) error {
	bk, err := b.alike()
	if err != nil {
		return err
	}
	other := bk.Get(alikeKey(titleKey(title)))
	if other == nil || string(other) == id {
		return nil
	}
	d, ok, err := b.doc(string(other))
	if err != nil || !ok || d.Deleted != nil {
		return err // a stale entry: its document is gone
	}
	return &TitleTakenError{Title: title, Other: d, Alike: true}
}

// putAlike keeps title's look-alike key for id; dropAlike lets it go, if id holds it.
func (b *buckets) putAlike(title, id string) error {
	bk, err := b.alike()
	if err != nil {
		return err
	}
	return bk.Put(alikeKey(titleKey(title)), []byte(id))
}

func (b *buckets) dropAlike(title, id string) error {
	bk, err := b.alike()
	if err != nil {
		return err
	}
	k := alikeKey(titleKey(title))
	if v := bk.Get(k); v != nil && string(v) == id {
		return bk.Delete(k)
	}
	return nil
}

package search

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/kv"
)

// Index is an inverted index kept in kv buckets (on either store): for each token, the
// items (documents, conversations) whose text or title has it, how often in the text, and
// whether in the title. It finds candidates only: which of them match, and how well, is
// Match's to say.
//
// # Layout
//
// Inside the bucket it is given:
//
//	terms/<token> 0x00 <n>   a chunk of the token's postings, n (4 bytes, big-endian) the
//	                         number of its first item: for each item, its number less the
//	                         one before (uvarint) and count<<1 | in-title (uvarint)
//	nums/<item key>          the item's number, 4 bytes big-endian
//	keys/<n>                 the item's key
//	meta/next, meta/built    the next number to give; the index's format, once built
//
// Items get small numbers so that postings take two or three bytes each; chunks are kept
// under chunkSize so that a change rewrites little.
type Index struct {
	terms, nums, keys, meta kv.Bucket
}

// Format is the index's format: an index built in another is built again.
const Format = 1

// MaxKey is the longest token the index keeps whole, in bytes: a longer one (a blob of
// base64, a text of one 8 MiB word) is kept by its first MaxKey bytes, so that no key
// passes the stores' limit (kv.MaxKeySize). Two such tokens that begin alike share
// postings: a query with a token that long must have its candidates read (Query.Exact).
const MaxKey = 64

// key is the key tok is kept under.
func key(tok string) string {
	if len(tok) <= MaxKey {
		return tok
	}
	n := MaxKey
	for n > 0 && !utf8.RuneStart(tok[n]) {
		n--
	}
	return tok[:n]
}

// keyed gives counts by key: the counts of tokens kept under one key add up.
func keyed(counts map[string]int) map[string]int {
	for tok := range counts {
		if len(tok) > MaxKey {
			out := make(map[string]int, len(counts))
			for tok, n := range counts {
				out[key(tok)] += n
			}
			return out
		}
	}
	return counts
}

const chunkSize = 512

var (
	termsName = []byte("terms")
	numsName  = []byte("nums")
	keysName  = []byte("keys")
	metaName  = []byte("meta")
	nextKey   = []byte("next")
	builtKey  = []byte("built")
)

// ReadIndex returns the index kept in parent (nil: none), for reading; its methods find
// nothing when there is none yet.
func ReadIndex(parent kv.Bucket) Index {
	if parent == nil {
		return Index{}
	}
	return Index{terms: parent.Bucket(termsName), nums: parent.Bucket(numsName), keys: parent.Bucket(keysName), meta: parent.Bucket(metaName)}
}

// WriteIndex returns the index kept in parent, making its buckets as needed; parent must
// be in a write transaction.
func WriteIndex(parent kv.Bucket) (Index, error) {
	var x Index
	for _, b := range []struct {
		name []byte
		to   *kv.Bucket
	}{{termsName, &x.terms}, {numsName, &x.nums}, {keysName, &x.keys}, {metaName, &x.meta}} {
		bk, err := parent.CreateBucketIfNotExists(b.name)
		if err != nil {
			return Index{}, fmt.Errorf("creating the search index's %s bucket: %w", b.name, err)
		}
		*b.to = bk
	}
	x.terms.Tune(0.9)
	return x, nil
}

// Built reports whether the index was built (Rebuild) in this Format: until then, changes
// need not be applied, and it can't be searched.
func (x Index) Built() bool {
	if x.meta == nil {
		return false
	}
	v := x.meta.Get(builtKey)
	return len(v) == 4 && binary.BigEndian.Uint32(v) == Format
}

// Item is one text to index: its key (a document's id, a conversation's), title and text.
type Item struct {
	Key, Title, Text string
}

// Rebuild empties the index and indexes every item each gives, then marks it Built.
func (x Index) Rebuild(each func(add func(Item) error) error) error {
	for _, b := range []kv.Bucket{x.terms, x.nums, x.keys} {
		if err := empty(b); err != nil {
			return err
		}
	}
	postings := map[string][]uint64{} // token → (num<<32 | value) in num order
	var num uint32
	counts := map[string]int{}
	err := each(func(it Item) error {
		num++
		if err := x.number(it.Key, num); err != nil {
			return err
		}
		clear(counts)
		Count(it.Text, 1, counts)
		counts := keyed(counts)
		titled := map[string]bool{}
		for _, tok := range keys(Tokens(it.Title)) {
			titled[tok] = true
			if _, ok := counts[tok]; !ok {
				counts[tok] = 0
			}
		}
		for tok, n := range counts {
			postings[tok] = append(postings[tok], uint64(num)<<32|value(n, titled[tok]))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := x.meta.Put(nextKey, binary.BigEndian.AppendUint32(nil, num+1)); err != nil {
		return err
	}
	toks := make([]string, 0, len(postings))
	for tok := range postings {
		toks = append(toks, tok)
	}
	sort.Strings(toks)
	for _, tok := range toks {
		ps := postings[tok]
		es := make([]entry, len(ps))
		for i, p := range ps {
			es[i] = entry{num: uint32(p >> 32), value: p & 0xffffffff}
		}
		if err := x.putChunks(tok, es); err != nil {
			return err
		}
	}
	return x.meta.Put(builtKey, binary.BigEndian.AppendUint32(nil, Format))
}

func empty(b kv.Bucket) error {
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

func value(count int, inTitle bool) uint64 {
	v := uint64(count) << 1
	if inTitle {
		v |= 1
	}
	return v
}

func (x Index) number(key string, num uint32) error {
	n := binary.BigEndian.AppendUint32(nil, num)
	if err := x.nums.Put([]byte(key), n); err != nil {
		return err
	}
	return x.keys.Put(n, []byte(key))
}

// numOf is key's number, given one if it has none and make is set (0: none).
func (x Index) numOf(key string, make bool) (uint32, error) {
	if x.nums == nil {
		return 0, nil
	}
	if v := x.nums.Get([]byte(key)); len(v) == 4 {
		return binary.BigEndian.Uint32(v), nil
	}
	if !make {
		return 0, nil
	}
	num := uint32(1)
	if v := x.meta.Get(nextKey); len(v) == 4 {
		num = binary.BigEndian.Uint32(v)
	}
	if err := x.meta.Put(nextKey, binary.BigEndian.AppendUint32(nil, num+1)); err != nil {
		return 0, err
	}
	return num, x.number(key, num)
}

// Change is how an item's tokens changed: Text adds (or, negative, takes away)
// occurrences in the text; when Retitled, the title's tokens were Was and are Now.
type Change struct {
	Text     map[string]int
	Retitled bool
	Was, Now string
}

// Apply brings the postings of the item with key up to date with ch.
func (x Index) Apply(key string, ch Change) error {
	num, err := x.numOf(key, true)
	if err != nil {
		return err
	}
	var was, now map[string]bool
	touched := map[string]bool{}
	text := keyed(ch.Text)
	for tok, d := range text {
		if d != 0 {
			touched[tok] = true
		}
	}
	if ch.Retitled {
		was, now = set(keys(Tokens(ch.Was))), set(keys(Tokens(ch.Now)))
		for tok := range was {
			touched[tok] = true
		}
		for tok := range now {
			touched[tok] = true
		}
	}
	toks := make([]string, 0, len(touched))
	for tok := range touched {
		toks = append(toks, tok)
	}
	sort.Strings(toks) // neighbours in the tree: fewer pages to seek and to write
	for _, tok := range toks {
		if err := x.update(tok, num, func(old uint64, had bool) uint64 {
			count, inTitle := int(old>>1)+text[tok], old&1 == 1
			if ch.Retitled {
				inTitle = now[tok]
			}
			// A count below 0 would mean the index was out of step with the text; it is
			// kept at 0 rather than failing the person's write (CheckIndex finds such).
			return value(max(count, 0), inTitle)
		}); err != nil {
			return fmt.Errorf("indexing %q for %s: %w", tok, key, err)
		}
	}
	return nil
}

// Remove takes the item with key out of the postings; its title and text were as given.
// Its number is kept, for when it comes back.
func (x Index) Remove(key, title, text string) error {
	counts := map[string]int{}
	Count(text, -1, counts)
	return x.Apply(key, Change{Text: counts, Retitled: true, Was: title})
}

// Forget drops the number of the item with key, which has no postings left (Remove).
func (x Index) Forget(key string) error {
	n := x.nums.Get([]byte(key))
	if n == nil {
		return nil
	}
	if err := x.keys.Delete(slices.Clone(n)); err != nil {
		return err
	}
	return x.nums.Delete([]byte(key))
}

// Add puts an item into the index whole.
func (x Index) Add(it Item) error {
	counts := map[string]int{}
	Count(it.Text, 1, counts)
	return x.Apply(it.Key, Change{Text: counts, Retitled: true, Now: it.Title})
}

// keys maps toks to their keys, in place.
func keys(toks []string) []string {
	for i, tok := range toks {
		toks[i] = key(tok)
	}
	return toks
}

func set(toks []string) map[string]bool {
	m := make(map[string]bool, len(toks))
	for _, t := range toks {
		m[t] = true
	}
	return m
}

type entry struct {
	num   uint32
	value uint64
}

func chunkKey(tok string, first uint32) []byte {
	k := make([]byte, 0, len(tok)+5)
	k = append(append(k, tok...), 0)
	return binary.BigEndian.AppendUint32(k, first)
}

func decodeChunk(k, v []byte) ([]entry, error) {
	num := binary.BigEndian.Uint32(k[len(k)-4:])
	var es []entry
	for first := true; len(v) > 0; first = false {
		d, n := binary.Uvarint(v)
		if n <= 0 {
			return nil, fmt.Errorf("a postings chunk %q is damaged", k)
		}
		v = v[n:]
		val, n := binary.Uvarint(v)
		if n <= 0 {
			return nil, fmt.Errorf("a postings chunk %q is damaged", k)
		}
		v = v[n:]
		if !first {
			num += uint32(d)
		}
		es = append(es, entry{num: num, value: val})
	}
	return es, nil
}

func encodeChunk(es []entry) []byte {
	var out []byte
	prev := es[0].num
	for _, e := range es {
		out = binary.AppendUvarint(out, uint64(e.num-prev))
		out = binary.AppendUvarint(out, e.value)
		prev = e.num
	}
	return out
}

// putChunks writes es (in num order) as chunks of tok.
func (x Index) putChunks(tok string, es []entry) error {
	for len(es) > 0 {
		n, size := 0, 0
		for n < len(es) && size < chunkSize {
			size += 2 + bitsLen(es[n].value)
			n++
		}
		if err := x.terms.Put(chunkKey(tok, es[0].num), encodeChunk(es[:n])); err != nil {
			return err
		}
		es = es[n:]
	}
	return nil
}

func bitsLen(v uint64) int { return len(binary.AppendUvarint(nil, v)) }

// update sets the value of num in tok's postings to what fn makes of the old one (0 and
// false when it had none); a value of 0 removes it.
func (x Index) update(tok string, num uint32, fn func(old uint64, had bool) uint64) error {
	prefix := append([]byte(tok), 0)
	c := x.terms.Cursor()
	var key, val []byte
	k, v := c.Seek(chunkKey(tok, num))
	switch {
	case k != nil && bytes.Equal(k, chunkKey(tok, num)):
		key, val = k, v
	default:
		var pk, pv []byte
		if k == nil {
			pk, pv = c.Last()
		} else {
			pk, pv = c.Prev()
		}
		if pk != nil && bytes.HasPrefix(pk, prefix) && len(pk) == len(prefix)+4 {
			key, val = pk, pv
		} else if k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+4 {
			k2, v2 := c.Seek(chunkKey(tok, num)) // back to the chunk after num
			key, val = k2, v2
		}
	}
	var es []entry
	if key != nil {
		key = slices.Clone(key)
		var err error
		if es, err = decodeChunk(key, val); err != nil {
			return err
		}
	}
	i, found := slices.BinarySearchFunc(es, num, func(e entry, n uint32) int { return int(int64(e.num) - int64(n)) })
	var old uint64
	if found {
		old = es[i].value
	}
	nv := fn(old, found)
	switch {
	case found && nv == 0:
		es = slices.Delete(es, i, i+1)
	case found:
		es[i].value = nv
	case nv == 0:
		return nil
	default:
		es = slices.Insert(es, i, entry{num: num, value: nv})
	}
	if key != nil {
		if err := x.terms.Delete(key); err != nil {
			return err
		}
	}
	if len(es) == 0 {
		return nil
	}
	return x.putChunks(tok, es)
}

// Posting is one item that has a token.
type Posting struct {
	Num     uint32
	Count   int  // in the text
	InTitle bool // in the title
}

// Lookup returns the postings of tok, in number order.
func (x Index) Lookup(tok string) ([]Posting, error) {
	if x.terms == nil {
		return nil, nil
	}
	prefix := append([]byte(key(tok)), 0)
	var out []Posting
	c := x.terms.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if len(k) != len(prefix)+4 {
			continue // another token that starts with tok and a NUL: none can, but be sure
		}
		es, err := decodeChunk(k, v)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			out = append(out, Posting{Num: e.num, Count: int(e.value >> 1), InTitle: e.value&1 == 1})
		}
	}
	return out, nil
}

// Candidates returns the numbers of the items that have every one of toks, in number
// order, with their postings (one per token, in toks' order).
func (x Index) Candidates(toks []string) ([]uint32, [][]Posting, error) {
	lists := make([][]Posting, len(toks))
	for i, tok := range toks {
		ps, err := x.Lookup(tok)
		if err != nil {
			return nil, nil, err
		}
		if len(ps) == 0 {
			return nil, nil, nil
		}
		lists[i] = ps
	}
	// Walk the shortest list, looking each number up in the others.
	short := 0
	for i := range lists {
		if len(lists[i]) < len(lists[short]) {
			short = i
		}
	}
	var nums []uint32
	var rows [][]Posting
	pos := make([]int, len(lists))
next:
	for _, p := range lists[short] {
		row := make([]Posting, len(lists))
		for i, l := range lists {
			j := pos[i] + sort.Search(len(l)-pos[i], func(k int) bool { return l[pos[i]+k].Num >= p.Num })
			pos[i] = j
			if j == len(l) || l[j].Num != p.Num {
				continue next
			}
			row[i] = l[j]
		}
		nums = append(nums, p.Num)
		rows = append(rows, row)
	}
	return nums, rows, nil
}

// Key is the key of the item numbered num, or "" when there is none.
func (x Index) Key(num uint32) string {
	if x.keys == nil {
		return ""
	}
	return string(x.keys.Get(binary.BigEndian.AppendUint32(nil, num)))
}

// PrefetchKeys tells the store that the keys of the items numbered nums are about to be
// read (Key), so that it may read them all at once (kv.Prefetch).
func (x Index) PrefetchKeys(nums []uint32) {
	if x.keys == nil {
		return
	}
	ks := make([][]byte, len(nums))
	for i, num := range nums {
		ks[i] = binary.BigEndian.AppendUint32(nil, num)
	}
	kv.Prefetch(x.keys, ks)
}

// Dump gives every posting, token → key → value, for comparing an index with a rebuilt one.
func (x Index) Dump() (map[string]map[string]Posting, error) {
	out := map[string]map[string]Posting{}
	if x.terms == nil {
		return out, nil
	}
	err := x.terms.ForEach(func(k, v []byte) error {
		tok := string(k[:len(k)-5])
		es, err := decodeChunk(k, v)
		if err != nil {
			return err
		}
		for _, e := range es {
			if out[tok] == nil {
				out[tok] = map[string]Posting{}
			}
			out[tok][x.Key(e.num)] = Posting{Count: int(e.value >> 1), InTitle: e.value&1 == 1}
		}
		return nil
	})
	return out, err
}

// Compare rebuilds the index from the items each gives and compares it with what it held,
// returning the first difference (nil when none). It leaves the index rebuilt: the caller
// runs it in a transaction it rolls back, as a check.
func (x Index) Compare(each func(add func(Item) error) error) (diff error, err error) {
	kept, err := x.Dump()
	if err != nil {
		return nil, err
	}
	if err := x.Rebuild(each); err != nil {
		return nil, err
	}
	fresh, err := x.Dump()
	if err != nil {
		return nil, err
	}
	for tok, ps := range fresh {
		for key, p := range ps {
			if k, ok := kept[tok][key]; !ok || k != p {
				return fmt.Errorf("the index has %q in %s as %+v (present: %v), the text as %+v", tok, key, k, ok, p), nil
			}
		}
	}
	for tok, ps := range kept {
		for key, p := range ps {
			if _, ok := fresh[tok][key]; !ok {
				return fmt.Errorf("the index has %q in %s as %+v, the text doesn't have it", tok, key, p), nil
			}
		}
	}
	return nil, nil
}

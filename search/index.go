package search

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/kv"
)

// Index is an inverted index kept in a kv bucket: for each index key (a token's stem), the
// items (documents, conversations) whose text or title has it, and how often in each; for
// each item, how many tokens its text and title have; and how many items there are. What
// ranking needs of the postings is there (Plan); reading the texts is left to the store.
//
// # Layout
//
// Inside the bucket it is given:
//
//	terms/<key> 0x00 <j>   the key's postings of the items numbered j*Span to j*Span+Span-1
//	                       (j: 4 bytes, big-endian): for each item, its number less the one
//	                       before (the first: less j*Span; uvarint) and
//	                       count-in-text<<2 | min(count-in-title, 3) (uvarint)
//	lens/<j>               the lengths of the same items: number less the one before
//	                       (uvarint), tokens of the text, tokens of the title (uvarints);
//	                       an item with no token has none
//	nums/<item key>        the item's number, 4 bytes big-endian
//	keys/<n>               the item's key
//	meta/next, meta/built  the next number to give; the index's format, once built
//	meta/stats             items with a token, tokens of their texts, of their titles (uvarints)
//
// Items get small numbers so that postings take two or three bytes each. A posting's
// chunk is named by its item's number, so that a change finds it with one Get, and a
// search knows every chunk it may read before reading one, and reads them all at once
// (kv.GetAll).
type Index struct {
	terms, lens, nums, keys, meta kv.Bucket
}

// Format is the index's format: an index built in another is built again (format 1 had no
// stems nor lengths).
const Format = 2

// Span is how many item numbers one chunk of postings covers.
const Span = 512

// MaxKey is the longest key the index keeps whole, in bytes: a longer token (a blob of
// base64, a text of one 8 MiB word) is kept by its first MaxKey bytes, so that no key
// passes the stores' limit (kv.MaxKeySize). Two such tokens that begin alike share
// postings: a term with a token that long has its candidates read.
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

var (
	termsName = []byte("terms")
	lensName  = []byte("lens")
	numsName  = []byte("nums")
	keysName  = []byte("keys")
	metaName  = []byte("meta")
	nextKey   = []byte("next")
	builtKey  = []byte("built")
	statsKey  = []byte("stats")
)

// ReadIndex returns the index kept in parent (nil: none), for reading; its methods find
// nothing when there is none yet.
func ReadIndex(parent kv.Bucket) Index {
	if parent == nil {
		return Index{}
	}
	return Index{terms: parent.Bucket(termsName), lens: parent.Bucket(lensName), nums: parent.Bucket(numsName), keys: parent.Bucket(keysName), meta: parent.Bucket(metaName)}
}

// WriteIndex returns the index kept in parent, making its buckets as needed; parent must
// be in a write transaction.
func WriteIndex(parent kv.Bucket) (Index, error) {
	var x Index
	for _, b := range []struct {
		name []byte
		to   *kv.Bucket
	}{{termsName, &x.terms}, {lensName, &x.lens}, {numsName, &x.nums}, {keysName, &x.keys}, {metaName, &x.meta}} {
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
	if x.meta == nil || x.lens == nil {
		return false
	}
	v := x.meta.Get(builtKey)
	return len(v) == 4 && binary.BigEndian.Uint32(v) == Format
}

// Item is one text to index: its key (a document's id, a conversation's), title and text.
type Item struct {
	Key, Title, Text string
}

// Stats are what the index knows of all its items.
type Stats struct {
	Items           int // items with a token
	Text, TitleToks int // tokens of their texts, of their titles
}

func (x Index) stats() Stats {
	if x.meta == nil {
		return Stats{}
	}
	return decodeStats(x.meta.Get(statsKey))
}

// decodeStats reads meta/stats as stored (v); nil, or damaged, is no items.
func decodeStats(v []byte) Stats {
	var s Stats
	for _, to := range []*int{&s.Items, &s.Text, &s.TitleToks} {
		n, w := binary.Uvarint(v)
		if w <= 0 {
			return s
		}
		*to, v = int(n), v[w:]
	}
	return s
}

func (x Index) putStats(s Stats) error {
	var v []byte
	for _, n := range []int{s.Items, s.Text, s.TitleToks} {
		v = binary.AppendUvarint(v, uint64(max(n, 0)))
	}
	return x.meta.Put(statsKey, v)
}

// counted is an item's tokens by key: in its text, and in its title.
func counted(title, text string) (inText, inTitle map[string]int, textLen, titleLen int) {
	inText = map[string]int{}
	Count(text, 1, inText)
	inText = keyed(inText)
	inTitle = map[string]int{}
	Count(title, 1, inTitle)
	inTitle = keyed(inTitle)
	for _, n := range inText {
		textLen += n
	}
	for _, n := range inTitle {
		titleLen += n
	}
	return
}

// Rebuild empties the index and indexes every item each gives, then marks it Built.
func (x Index) Rebuild(each func(add func(Item) error) error) error {
	for _, b := range []kv.Bucket{x.terms, x.lens, x.nums, x.keys} {
		if err := empty(b); err != nil {
			return err
		}
	}
	postings := map[string][]entry{}
	var lens []lenEntry
	var num uint32
	var st Stats
	err := each(func(it Item) error {
		num++
		if err := x.number(it.Key, num); err != nil {
			return err
		}
		inText, inTitle, textLen, titleLen := counted(it.Title, it.Text)
		if textLen+titleLen == 0 {
			return nil
		}
		for tok, n := range inText {
			postings[tok] = append(postings[tok], entry{num: num, value: value(n, inTitle[tok])})
		}
		for tok, n := range inTitle {
			if inText[tok] == 0 {
				postings[tok] = append(postings[tok], entry{num: num, value: value(0, n)})
			}
		}
		lens = append(lens, lenEntry{num: num, text: textLen, title: titleLen})
		st.Items++
		st.Text += textLen
		st.TitleToks += titleLen
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
		es := postings[tok]
		for len(es) > 0 {
			j := es[0].num / Span
			n := 1
			for n < len(es) && es[n].num/Span == j {
				n++
			}
			if err := x.terms.Put(chunkKey(tok, j), encodeChunk(j, es[:n])); err != nil {
				return err
			}
			es = es[n:]
		}
	}
	for len(lens) > 0 {
		j := lens[0].num / Span
		n := 1
		for n < len(lens) && lens[n].num/Span == j {
			n++
		}
		if err := x.lens.Put(lensKey(j), encodeLens(j, lens[:n])); err != nil {
			return err
		}
		lens = lens[n:]
	}
	if err := x.putStats(st); err != nil {
		return err
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

func value(inText, inTitle int) uint64 {
	return uint64(inText)<<2 | uint64(min(inTitle, 3))
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
	return x.give(key)
}

// give gives key the next number.
func (x Index) give(key string) (uint32, error) {
	num := uint32(1)
	if v := x.meta.Get(nextKey); len(v) == 4 {
		num = binary.BigEndian.Uint32(v)
	}
	if err := x.meta.Put(nextKey, binary.BigEndian.AppendUint32(nil, num+1)); err != nil {
		return 0, err
	}
	return num, x.number(key, num)
}

// next is the number the next new item would get: every item's is below.
func (x Index) next() uint32 {
	if x.meta == nil {
		return 1
	}
	return decodeNext(x.meta.Get(nextKey))
}

// decodeNext reads meta/next as stored (v); nil is 1, the first number.
func decodeNext(v []byte) uint32 {
	if len(v) == 4 {
		return binary.BigEndian.Uint32(v)
	}
	return 1
}

// Change is how an item's tokens changed: Text adds (or, negative, takes away)
// occurrences in the text, by index key (Count); when Retitled, the title was Was and is
// Now.
type Change struct {
	Text     map[string]int
	Retitled bool
	Was, Now string
}

// Apply brings the postings and lengths of the item with key up to date with ch.
func (x Index) Apply(key string, ch Change) error {
	num, err := x.numOf(key, true)
	if err != nil {
		return err
	}
	return x.apply(key, num, ch)
}

func (x Index) apply(key string, num uint32, ch Change) error {
	text := keyed(ch.Text)
	var was, now map[string]int
	touched := map[string]bool{}
	dText := 0
	for tok, d := range text {
		if d != 0 {
			touched[tok] = true
			dText += d
		}
	}
	wasLen, nowLen := 0, 0
	if ch.Retitled {
		_, was, _, wasLen = counted(ch.Was, "")
		_, now, _, nowLen = counted(ch.Now, "")
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
	// The chunks of num's postings are named by the tokens: all are read at once.
	ks := make([][]byte, len(toks))
	for i, tok := range toks {
		ks[i] = chunkKey(tok, num/Span)
	}
	chunks := kv.GetAll(x.terms, ks)
	for i, tok := range toks {
		if err := x.update(ks[i], chunks[i], num, func(old uint64) uint64 {
			// A count below 0 would mean the index was out of step with the text; it is
			// kept at 0 rather than failing the person's write (CheckIndex finds such).
			count, inTitle := max(int(old>>2)+text[tok], 0), int(old&3)
			if ch.Retitled {
				inTitle = now[tok]
			}
			return value(count, inTitle)
		}); err != nil {
			return fmt.Errorf("indexing %q for %s: %w", tok, key, err)
		}
	}
	return x.relength(num, dText, ch.Retitled, nowLen-wasLen)
}

// relength adds dText to the item's text length and, when retitled, dTitle to its title's.
func (x Index) relength(num uint32, dText int, retitled bool, dTitle int) error {
	if dText == 0 && (!retitled || dTitle == 0) {
		return nil
	}
	j := num / Span
	es, err := decodeLens(j, x.lens.Get(lensKey(j)))
	if err != nil {
		return err
	}
	st := x.stats()
	i, found := slices.BinarySearchFunc(es, num, func(e lenEntry, n uint32) int { return cmpNum(e.num, n) })
	if !found {
		es = slices.Insert(es, i, lenEntry{num: num})
		st.Items++
	}
	e := &es[i]
	text, title := max(e.text+dText, 0), max(e.title+dTitle, 0)
	st.Text += text - e.text
	st.TitleToks += title - e.title
	e.text, e.title = text, title
	if text+title == 0 {
		es = slices.Delete(es, i, i+1)
		st.Items--
	}
	if err := x.putStats(st); err != nil {
		return err
	}
	if len(es) == 0 {
		return x.lens.Delete(lensKey(j))
	}
	return x.lens.Put(lensKey(j), encodeLens(j, es))
}

func cmpNum(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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
	num, err := x.numOf(it.Key, true)
	if err != nil {
		return err
	}
	return x.add(num, it)
}

// AddNew puts an item whose key the index has never held (a document just made) into the
// index whole: it gives the key a number without looking for one it already has. A key the
// index holds would get a second number, which CheckIndex reports.
func (x Index) AddNew(it Item) error {
	var num uint32 // as numOf, on an index without numbers
	if x.nums != nil {
		var err error
		if num, err = x.give(it.Key); err != nil {
			return err
		}
	}
	return x.add(num, it)
}

func (x Index) add(num uint32, it Item) error {
	counts := map[string]int{}
	Count(it.Text, 1, counts)
	return x.apply(it.Key, num, Change{Text: counts, Retitled: true, Now: it.Title})
}

type entry struct {
	num   uint32
	value uint64
}

func chunkKey(tok string, j uint32) []byte {
	k := make([]byte, 0, len(tok)+5)
	k = append(append(k, tok...), 0)
	return binary.BigEndian.AppendUint32(k, j)
}

func lensKey(j uint32) []byte { return binary.BigEndian.AppendUint32(nil, j) }

// decodeChunk appends the postings of chunk j to es.
func decodeChunk(es []entry, j uint32, v []byte) ([]entry, error) {
	num := j * Span
	for len(v) > 0 {
		d, n := binary.Uvarint(v)
		if n <= 0 {
			return nil, fmt.Errorf("a postings chunk (%d) is damaged", j)
		}
		v = v[n:]
		val, n := binary.Uvarint(v)
		if n <= 0 {
			return nil, fmt.Errorf("a postings chunk (%d) is damaged", j)
		}
		v = v[n:]
		num += uint32(d)
		es = append(es, entry{num: num, value: val})
	}
	return es, nil
}

func encodeChunk(j uint32, es []entry) []byte {
	out := make([]byte, 0, 3*len(es))
	prev := j * Span
	for _, e := range es {
		out = binary.AppendUvarint(out, uint64(e.num-prev))
		out = binary.AppendUvarint(out, e.value)
		prev = e.num
	}
	return out
}

type lenEntry struct {
	num         uint32
	text, title int
}

func decodeLens(j uint32, v []byte) ([]lenEntry, error) {
	var es []lenEntry
	num := j * Span
	for len(v) > 0 {
		var vals [3]uint64
		for i := range vals {
			n, w := binary.Uvarint(v)
			if w <= 0 {
				return nil, fmt.Errorf("a lengths chunk (%d) is damaged", j)
			}
			vals[i], v = n, v[w:]
		}
		num += uint32(vals[0])
		es = append(es, lenEntry{num: num, text: int(vals[1]), title: int(vals[2])})
	}
	return es, nil
}

func encodeLens(j uint32, es []lenEntry) []byte {
	out := make([]byte, 0, 4*len(es))
	prev := j * Span
	for _, e := range es {
		out = binary.AppendUvarint(out, uint64(e.num-prev))
		out = binary.AppendUvarint(out, uint64(e.text))
		out = binary.AppendUvarint(out, uint64(e.title))
		prev = e.num
	}
	return out
}

// update sets the value of num in the postings chunk k (holding num; as read: v) to what
// fn makes of the old one (0 when it had none); a value of 0 removes it.
func (x Index) update(k, v []byte, num uint32, fn func(old uint64) uint64) error {
	j := num / Span
	es, err := decodeChunk(nil, j, v)
	if err != nil {
		return err
	}
	i, found := slices.BinarySearchFunc(es, num, func(e entry, n uint32) int { return cmpNum(e.num, n) })
	var old uint64
	if found {
		old = es[i].value
	}
	nv := fn(old)
	switch {
	case nv == old:
		return nil
	case found && nv == 0:
		es = slices.Delete(es, i, i+1)
	case found:
		es[i].value = nv
	default:
		es = slices.Insert(es, i, entry{num: num, value: nv})
	}
	if len(es) == 0 {
		return x.terms.Delete(k)
	}
	return x.terms.Put(k, encodeChunk(j, es))
}

// Posting is one item that has a key.
type Posting struct {
	Num     uint32
	Count   int // in the text
	InTitle int // in the title (at most 3)
}

// chunks reads the chunks of each of keys, every one a key may have below next (the
// next item number) read at once, giving the raw chunks by key, in number order, each
// with its number (4 bytes, big-endian) appended.
func (x Index) chunks(keys []string, next uint32) [][][]byte {
	out := make([][][]byte, len(keys))
	if x.terms == nil {
		return out
	}
	// Every chunk a key may have is named by its number: all are known before one is read.
	last := (next - 1) / Span
	var ks [][]byte
	for _, k := range keys {
		for j := uint32(0); j <= last; j++ {
			ks = append(ks, chunkKey(k, j))
		}
	}
	vs := kv.GetAll(x.terms, ks)
	for i := range keys {
		for j := uint32(0); j <= last; j++ {
			if v := vs[0]; v != nil {
				out[i] = append(out[i], binary.BigEndian.AppendUint32(v[:len(v):len(v)], j))
			}
			vs = vs[1:]
		}
	}
	return out
}

// Lookup returns the postings of the key of tok (as the index keeps it: its stem), in
// number order.
func (x Index) Lookup(tok string) ([]Posting, error) {
	chunks := x.chunks([]string{key(Stem(tok))}, x.next())[0]
	var es []entry
	for _, c := range chunks {
		var err error
		j := binary.BigEndian.Uint32(c[len(c)-4:])
		if es, err = decodeChunk(es, j, c[:len(c)-4]); err != nil {
			return nil, err
		}
	}
	out := make([]Posting, len(es))
	for i, e := range es {
		out[i] = Posting{Num: e.num, Count: int(e.value >> 2), InTitle: int(e.value & 3)}
	}
	return out, nil
}

// Key is the key of the item numbered num, or "" when there is none.
func (x Index) Key(num uint32) string {
	if x.keys == nil {
		return ""
	}
	return string(x.keys.Get(binary.BigEndian.AppendUint32(nil, num)))
}

// Keys returns the keys of the items numbered nums, in their order ("" for a number no
// item has), read at once (kv.GetAll).
func (x Index) Keys(nums []uint32) []string {
	out := make([]string, len(nums))
	if x.keys == nil {
		return out
	}
	ks := make([][]byte, len(nums))
	for i, num := range nums {
		ks[i] = binary.BigEndian.AppendUint32(nil, num)
	}
	for i, v := range kv.GetAll(x.keys, ks) {
		out[i] = string(v)
	}
	return out
}

// Dump gives every posting, key → item key → value, and every item's lengths under the
// key "" (Count: its text's, InTitle: its title's), for comparing an index with a rebuilt
// one.
func (x Index) Dump() (map[string]map[string]Posting, Stats, error) {
	out := map[string]map[string]Posting{"": {}}
	if x.terms == nil {
		return out, Stats{}, nil
	}
	err := x.terms.ForEach(func(k, v []byte) error {
		tok := string(k[:len(k)-5])
		es, err := decodeChunk(nil, binary.BigEndian.Uint32(k[len(k)-4:]), v)
		if err != nil {
			return err
		}
		for _, e := range es {
			if out[tok] == nil {
				out[tok] = map[string]Posting{}
			}
			out[tok][x.Key(e.num)] = Posting{Count: int(e.value >> 2), InTitle: int(e.value & 3)}
		}
		return nil
	})
	if err != nil {
		return nil, Stats{}, err
	}
	err = x.lens.ForEach(func(k, v []byte) error {
		es, err := decodeLens(binary.BigEndian.Uint32(k), v)
		for _, e := range es {
			out[""][x.Key(e.num)] = Posting{Count: e.text, InTitle: e.title}
		}
		return err
	})
	return out, x.stats(), err
}

// Compare rebuilds the index from the items each gives and compares it with what it held,
// returning the first difference (nil when none). It leaves the index rebuilt: the caller
// runs it in a transaction it rolls back, as a check.
func (x Index) Compare(each func(add func(Item) error) error) (diff error, err error) {
	kept, keptStats, err := x.Dump()
	if err != nil {
		return nil, err
	}
	if err := x.Rebuild(each); err != nil {
		return nil, err
	}
	fresh, freshStats, err := x.Dump()
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
	if keptStats != freshStats {
		return fmt.Errorf("the index counts %+v, the texts %+v", keptStats, freshStats), nil
	}
	return nil, nil
}

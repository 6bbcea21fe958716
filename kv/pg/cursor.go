package pg

import (
	"bytes"
	"slices"
	"sort"
	"strconv"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/jackc/pgx/v5"
)

// A cursor merges the database's rows of its bucket, fetched in pages, with the
// transaction's own writes not yet committed. Its position is a key: every move asks for
// the first key after (or before) it, so writes made while walking are seen, and a deleted
// key's neighbours are still found.

// bound is one end of a key range: a key (itself in the range if incl), or no end (inf).
type bound struct {
	key       []byte
	inf, incl bool
}

// above reports whether k is in the range that starts at lo.
func above(k []byte, lo bound) bool {
	if lo.inf {
		return true
	}
	c := bytes.Compare(k, lo.key)
	return c > 0 || c == 0 && lo.incl
}

// below reports whether k is in the range that ends at hi.
func below(k []byte, hi bound) bool {
	if hi.inf {
		return true
	}
	c := bytes.Compare(k, hi.key)
	return c < 0 || c == 0 && hi.incl
}

type row struct {
	key []byte
	e   entry
}

// page is rows of the database: every row between lo and hi, in order.
type page struct {
	rows   []row
	lo, hi bound
	valid  bool
}

const (
	firstPage = 16   // rows: many walks stop at the first key or two (Last, Seek)
	maxPage   = 1024 // rows, each page doubling up to it
	pageValue = 64 << 10
)

type cursor struct {
	b     *bucket
	pos   []byte // nil: not on a key
	cur   entry
	pg    page
	size  int
	epoch int // the transaction's spills when pg was fetched
}

// resync drops the page if the transaction's writes were sent since it was fetched.
func (c *cursor) resync() {
	if c.epoch != c.b.t.spills {
		c.pg.valid, c.epoch = false, c.b.t.spills
	}
}

func (c *cursor) First() ([]byte, []byte) { return c.forward(bound{inf: true}) }
func (c *cursor) Last() ([]byte, []byte)  { return c.backward(bound{inf: true}) }
func (c *cursor) Seek(k []byte) ([]byte, []byte) {
	return c.forward(bound{key: bytes.Clone(k), incl: true})
}

func (c *cursor) Next() ([]byte, []byte) {
	if c.pos == nil {
		return nil, nil
	}
	return c.forward(bound{key: c.pos})
}

func (c *cursor) Prev() ([]byte, []byte) {
	if c.pos == nil {
		return nil, nil
	}
	return c.backward(bound{key: c.pos})
}

func (c *cursor) Delete() error {
	if err := c.b.checkWrite(c.pos); err != nil {
		return err
	}
	if c.cur.child != 0 {
		return kv.ErrIncompatibleValue
	}
	return c.b.Delete(c.pos)
}

func (c *cursor) land(k []byte, e entry) ([]byte, []byte) {
	if e.big {
		e = c.b.lookup(k)
	}
	c.pos, c.cur = k, e
	return k, e.value
}

func (c *cursor) forward(from bound) ([]byte, []byte) {
	s := c.b.state()
	for {
		d, dok := c.dbNext(from)
		keys := s.sorted()
		i := sort.Search(len(keys), func(i int) bool { return above(keys[i], from) })
		switch {
		case i < len(keys) && (!dok || bytes.Compare(keys[i], d.key) <= 0):
			if e := s.over[string(keys[i])]; e.found {
				return c.land(keys[i], *e)
			}
			from = bound{key: keys[i]} // deleted by this transaction: look past it
		case dok:
			return c.land(d.key, d.e)
		default:
			c.pos, c.cur = nil, entry{}
			return nil, nil
		}
	}
}

func (c *cursor) backward(from bound) ([]byte, []byte) {
	s := c.b.state()
	for {
		d, dok := c.dbPrev(from)
		keys := s.sorted()
		i := sort.Search(len(keys), func(i int) bool { return !below(keys[i], from) }) - 1
		switch {
		case i >= 0 && (!dok || bytes.Compare(keys[i], d.key) >= 0):
			if e := s.over[string(keys[i])]; e.found {
				return c.land(keys[i], *e)
			}
			from = bound{key: keys[i]}
		case dok:
			return c.land(d.key, d.e)
		default:
			c.pos, c.cur = nil, entry{}
			return nil, nil
		}
	}
}

// dbNext returns the database's first row in the range starting at from.
func (c *cursor) dbNext(from bound) (row, bool) {
	c.resync()
	if c.b.state().fresh {
		return row{}, false
	}
	p := &c.pg
	covered := p.valid && (p.lo.inf || !from.inf && (bytes.Compare(from.key, p.lo.key) > 0 ||
		bytes.Equal(from.key, p.lo.key) && (p.lo.incl || !from.incl)))
	if covered {
		i := sort.Search(len(p.rows), func(i int) bool { return above(p.rows[i].key, from) })
		if i < len(p.rows) {
			return p.rows[i], true
		}
		if p.hi.inf {
			return row{}, false
		}
	}
	op := ">"
	if from.incl {
		op = ">="
	}
	rows, full := c.fetch(op, "", from.key)
	*p = page{rows: rows, lo: from, hi: bound{inf: true}, valid: true}
	if full {
		p.hi = bound{key: rows[len(rows)-1].key, incl: true}
	}
	if len(rows) == 0 {
		return row{}, false
	}
	return rows[0], true
}

// afterGap finds the database's first row in the range starting at from in what the cache
// knows, with no round trip, when from is in a gap (or at its start, from excluded): the key
// after the gap, if its entry is known too, or none (ok false) at the bucket's end. known
// says whether it could.
func (c *cursor) afterGap(from bound) (r row, ok, known bool) {
	t := c.b.t
	if from.inf {
		return row{}, false, false
	}
	g, in := t.gapFrom(c.b.id, from)
	switch {
	case !in:
		return row{}, false, false
	case g.hi.inf:
		return row{}, false, true
	}
	it, cached := t.cached(cacheKey{bucket: c.b.id, key: string(g.hi.key)})
	if !cached || !it.e.found {
		return row{}, false, false
	}
	return row{key: g.hi.key, e: it.e}, true, true
}

// dbPrev returns the database's last row in the range ending at from.
func (c *cursor) dbPrev(from bound) (row, bool) {
	c.resync()
	if c.b.state().fresh {
		return row{}, false
	}
	p := &c.pg
	covered := p.valid && (p.hi.inf || !from.inf && (bytes.Compare(from.key, p.hi.key) < 0 ||
		bytes.Equal(from.key, p.hi.key) && (p.hi.incl || !from.incl)))
	if covered {
		i := sort.Search(len(p.rows), func(i int) bool { return !below(p.rows[i].key, from) }) - 1
		if i >= 0 {
			return p.rows[i], true
		}
		if p.lo.inf {
			return row{}, false
		}
	}
	op := "<"
	if from.incl {
		op = "<="
	}
	rows, full := c.fetch(op, " DESC", from.key)
	slices.Reverse(rows)
	*p = page{rows: rows, lo: bound{inf: true}, hi: from, valid: true}
	if full {
		p.lo = bound{key: rows[0].key, incl: true}
	}
	if len(rows) == 0 {
		return row{}, false
	}
	return rows[len(rows)-1], true
}

// fetch reads the next page of rows; full tells whether there may be more. Pages double
// from firstPage to maxPage; what the replica knows (a page cached, a gap) is answered with
// no round trip, and what is read is remembered.
func (c *cursor) fetch(op, order string, key []byte) (rows []row, full bool) {
	if c.size == 0 {
		c.size = firstPage
	}
	n := c.size
	c.size = min(2*c.size, maxPage)
	ck := cacheKey{bucket: c.b.id, page: pageKey(op, order, key, n)}
	if rows, full, ok := c.known(ck, op, order, key); ok {
		return rows, full
	}
	sql, args, forward := c.pageQuery(op, order, key, n)
	r, done := c.b.t.query(sql, args...)
	defer done()
	rows, before := c.scanPage(r, forward, op, key)
	full = len(rows) == n
	c.remember(ck, &pageOf{op: op, desc: order != "", key: bytes.Clone(key), limit: n}, rows, full, forward, before)
	return rows, full
}

// known answers a page from what the replica knows, if it can: the page cached, or, forward
// from a key, the gap the key is in (gaps.go).
func (c *cursor) known(ck cacheKey, op, order string, key []byte) (rows []row, full, ok bool) {
	if it, ok := c.b.t.cached(ck); ok {
		return slices.Clone(it.rows), it.full, true // the caller may reorder its copy
	}
	if key != nil && order == "" {
		if r, ok, known := c.afterGap(bound{key: key, incl: op == ">="}); known && ok {
			return []row{r}, true, true // a page of one: what follows r is asked for after it
		} else if known {
			return nil, false, true
		}
	}
	return nil, false, false
}

// pageQuery is the query of a page of n rows from key (op ">", ">=", "<", "<="; nil: from
// an end) in order ("" or " DESC"). A page forward from a key comes with the key before it
// (forward): between the two lies a gap, which a later Seek near there needs no round trip
// for. A value over pageValue is left out, to be read when the cursor lands on it.
func (c *cursor) pageQuery(op, order string, key []byte, n int) (sql string, args []any, forward bool) {
	sql = `SELECT key, child, octet_length(value), CASE WHEN octet_length(value) <= ` + strconv.Itoa(pageValue) + ` THEN value END
		FROM kv_entries WHERE bucket = $1`
	args = []any{c.b.id}
	if key != nil {
		sql += " AND key " + op + " $2"
		args = append(args, key)
	}
	sql += " ORDER BY key" + order + " LIMIT " + strconv.Itoa(n)
	forward = key != nil && order == ""
	if forward {
		below := "<"
		if op == ">" {
			below = "<="
		}
		sql = "(" + sql + ") UNION ALL (SELECT key, NULL::bigint, NULL::integer, NULL::bytea FROM kv_entries WHERE bucket = $1 AND key " +
			below + " $2 ORDER BY key DESC LIMIT 1)"
	}
	return sql, args, forward
}

// scanPage reads a page's rows from r, in key order, and (forward) the key before the page
// pageQuery asked for with it.
func (c *cursor) scanPage(r pgx.Rows, forward bool, op string, key []byte) (rows []row, before []byte) {
	t := c.b.t
	for r.Next() {
		var rw row
		var child *int64
		var size *int32
		if err := r.Scan(&rw.key, &child, &size, &rw.e.value); err != nil {
			kv.Fail(t.db.wrap(err))
		}
		if forward && size == nil && child == nil && (bytes.Compare(rw.key, key) < 0 || op == ">" && bytes.Equal(rw.key, key)) {
			before = rw.key // the key before the page, not of it
			continue
		}
		rw.e.found = true
		switch {
		case child != nil:
			rw.e.child, rw.e.value = *child, nil
		case *size > pageValue:
			rw.e.big = true // too big for a page: read when landed on
		case rw.e.value == nil:
			rw.e.value = []byte{}
		}
		rows = append(rows, rw)
	}
	if err := r.Err(); err != nil {
		kv.Fail(t.db.wrap(err))
	}
	if forward { // its parts' orders hold in UNION ALL's, but SQL doesn't promise it
		sort.Slice(rows, func(i, j int) bool { return bytes.Compare(rows[i].key, rows[j].key) < 0 })
	}
	return rows, before
}

// remember keeps a page read in the cache, with the query it answers (so that commits can
// patch it: feed.go), and, forward, its first entry and the gap between the key before it
// and its first.
func (c *cursor) remember(ck cacheKey, q *pageOf, rows []row, full, forward bool, before []byte) {
	t := c.b.t
	t.keep(&cacheItem{k: ck, rows: slices.Clone(rows), full: full, query: q})
	if !forward {
		return
	}
	var after []byte
	if len(rows) > 0 {
		after = rows[0].key
		if e := rows[0].e; !e.big {
			t.keep(&cacheItem{k: cacheKey{bucket: c.b.id, key: string(after)}, e: e})
		}
	}
	t.learn(c.b.id, before, after)
}

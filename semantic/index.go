package semantic

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// The vectors of a space's passages are kept in its bucket doc_vectors, through kv (bbolt
// or PostgreSQL), in buckets of their own:
//
//	meta/model, meta/dims   the model the vectors are of, and their dimensions
//	vec/<hash>              a passage's vector (Hash: of the model and the text), dims
//	                        float32s, little-endian, of length 1
//	docs/<document id>      the version embedded (uvarint), then its passages' hashes
//
// A model or dimensions other than meta's empties vec and docs first: vectors of two
// models are never compared.
const bucketVectors = "doc_vectors"

var (
	metaName  = []byte("meta")
	vecName   = []byte("vec")
	docsName  = []byte("docs")
	modelKey  = []byte("model")
	dimsKey   = []byte("dims")
	errWiped  = errors.New("the model changed")
	errPaused = errors.New("the embeddings endpoint failed a moment ago: not asked again yet")
)

// Options are how an Index works with its endpoint.
type Options struct {
	// Interval is the least time between two requests to the endpoint (0: 100 ms): a
	// bounded rate, whatever there is to embed.
	Interval time.Duration
	// Tries is how many times a batch is sent before the pass gives up (0: 4), waiting
	// Backoff (0: 1 s), then twice that, and so on, between tries.
	Tries   int
	Backoff time.Duration
	// Poll is how often the background loop looks for changes when not nudged (0: 30 s).
	Poll time.Duration
	// QueryTimeout bounds a query's embedding (0: 5 s): past it, search is lexical. After
	// the endpoint failed, queries don't ask it for Pause (0: 30 s), unless a pass found it
	// answering again: a search doesn't wait on an endpoint known to be down or slow.
	QueryTimeout, Pause time.Duration
	Logger              *slog.Logger
}

// Index is the semantic index of one space: the vectors of its documents' passages, kept
// in the store, and in memory for searching.
type Index struct {
	db    kv.DB
	docs  *docstore.Store
	space string
	c     *Client
	o     Options

	mu     sync.Mutex
	loaded bool
	dims   int
	byDoc  map[string]docVecs
	down   bool // the endpoint failed, and this was said (logged once until it answers)
	downAt time.Time
	last   time.Time
	nudge  chan struct{}
	status Status

	send sync.Mutex // one request at a time, Interval apart
}

type docVecs struct {
	version int
	vecs    [][]float32
}

// Status is how far the index is: passages embedded of those the documents have now.
type Status struct {
	Model               string
	Dims                int
	Documents, Embedded int // live documents, and those whose latest version is embedded
	Passages            int // passages of the embedded documents
	Down                string
	// Counted is when a pass last counted the documents (Progress; zero: none has yet).
	Counted time.Time
}

// NewIndex is the semantic index of space in db, asking c for vectors.
func NewIndex(db kv.DB, space string, c *Client, o Options) *Index {
	if o.Interval <= 0 {
		o.Interval = 100 * time.Millisecond
	}
	if o.Tries <= 0 {
		o.Tries = 4
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 30 * time.Second
	}
	if o.QueryTimeout <= 0 {
		o.QueryTimeout = 5 * time.Second
	}
	if o.Pause <= 0 {
		o.Pause = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Index{db: db, docs: docstore.New(db, space), space: space, c: c, o: o, nudge: make(chan struct{}, 1)}
}

// Nudge asks the background loop (Run) to look for changes now; it never waits.
func (x *Index) Nudge() {
	select {
	case x.nudge <- struct{}{}:
	default:
	}
}

// Run keeps the index up to date until ctx is done: a pass (Update) at once, then after
// every Nudge and every Poll. A pass that fails (the endpoint down) is tried again at the
// next; what failed is said on stderr once, until the endpoint answers again.
func (x *Index) Run(ctx context.Context) {
	t := time.NewTicker(x.o.Poll)
	defer t.Stop()
	for {
		if err := x.Update(ctx, nil); err != nil && ctx.Err() == nil {
			var ee *EndpointError
			if !errors.As(err, &ee) { // the endpoint's failures are said by Update
				x.o.Logger.Warn("updating the semantic index failed", "space", x.space, "err", err.Error())
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-x.nudge:
		case <-t.C:
		}
	}
}

// failed says err on stderr, once until the endpoint answers again.
func (x *Index) failed(err error) {
	x.mu.Lock()
	said := x.down
	x.down, x.downAt = true, time.Now()
	x.status.Down = err.Error()
	x.mu.Unlock()
	if !said {
		x.o.Logger.Warn("the embeddings endpoint failed: search is lexical only until it answers (said once)", "url", x.c.URL, "model", x.c.Model, "err", err.Error())
	}
}

// answered notes that the endpoint answered, saying so if it had failed.
func (x *Index) answered() {
	x.mu.Lock()
	was := x.down
	x.down = false
	x.status.Down = ""
	x.mu.Unlock()
	if was {
		x.o.Logger.Info("the embeddings endpoint answers again: search uses meaning as well", "url", x.c.URL)
	}
}

// embed sends texts in batches (MaxBatch, MaxBatchBytes), one request at a time and
// Interval apart, each tried Tries times with backoff; dims 0 takes what the first gives.
func (x *Index) embed(ctx context.Context, texts []string) ([][]float32, error) {
	var out [][]float32
	for len(texts) > 0 {
		n, size := 0, 0
		for n < len(texts) && n < MaxBatch && (n == 0 || size+len(texts[n]) <= MaxBatchBytes) {
			size += len(texts[n])
			n++
		}
		vs, err := x.send1(ctx, texts[:n], x.o.Tries)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && len(vs[0]) != len(out[0]) {
			return nil, &EndpointError{Msg: fmt.Sprintf("the embeddings endpoint's vectors changed from %d to %d dimensions within a pass", len(out[0]), len(vs[0]))}
		}
		out = append(out, vs...)
		texts = texts[n:]
	}
	return out, nil
}

// send1 is one batch, tried up to tries times.
func (x *Index) send1(ctx context.Context, texts []string, tries int) ([][]float32, error) {
	wait := x.o.Backoff
	for try := 1; ; try++ {
		x.send.Lock()
		if d := x.o.Interval - time.Since(x.last); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				x.send.Unlock()
				return nil, ctx.Err()
			}
		}
		vs, err := x.c.Embed(ctx, texts, 0)
		x.last = time.Now()
		x.send.Unlock()
		var ee *EndpointError
		if err == nil || try >= tries || ctx.Err() != nil || !errors.As(err, &ee) || !ee.Retry {
			return vs, err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		wait *= 2
	}
}

// Update brings the index up to date with the space's documents: each live document
// whose latest version isn't embedded is cut into passages (Passages), those whose vector
// isn't kept are sent to the endpoint (outside any transaction), and the vectors and the
// document's passages are written in a short write transaction of their own; documents
// gone are let go, and vectors no document uses any more removed. progress, if not nil,
// is told how many documents are done of how many.
func (x *Index) Update(ctx context.Context, progress func(done, total int)) error {
	err := x.update(ctx, progress)
	if errors.Is(err, errWiped) {
		err = x.update(ctx, progress) // everything again, with the new model's vectors
	}
	return err
}

func (x *Index) update(ctx context.Context, progress func(done, total int)) error {
	if err := x.load(ctx); err != nil {
		return err
	}
	live, err := x.live(ctx)
	if err != nil {
		return err
	}
	x.mu.Lock()
	var stale []docstore.Document
	isLive := make(map[string]bool, len(live))
	for _, d := range live {
		isLive[d.ID] = true
		if dv, ok := x.byDoc[d.ID]; !ok || dv.version != d.Version {
			stale = append(stale, d)
		}
	}
	var gone []string
	for id := range x.byDoc {
		if !isLive[id] {
			gone = append(gone, id)
		}
	}
	x.mu.Unlock()
	x.recount(live)
	defer x.recount(live) // what the pass did, even when it failed part way
	total, done := len(stale), 0
	if progress != nil {
		progress(0, total)
	}
	const group = 16 // documents read, embedded and written together
	for len(stale) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(group, len(stale))
		if err := x.updateDocs(ctx, stale[:n]); err != nil {
			return err
		}
		x.counted(stale[:n])
		stale = stale[n:]
		done += n
		if progress != nil {
			progress(done, total)
		}
	}
	if len(gone) > 0 {
		if err := x.drop(ctx, gone); err != nil {
			return err
		}
	}
	return nil
}

// live reads the space's documents that are not deleted.
func (x *Index) live(ctx context.Context) ([]docstore.Document, error) {
	var live []docstore.Document
	err := x.docs.View(ctx, func(r *docstore.Reader) error {
		all, err := r.Documents()
		live = live[:0]
		for _, d := range all {
			if d.Deleted == nil {
				live = append(live, d)
			}
		}
		return err
	})
	return live, err
}

// recount counts, for Progress, how many of the live documents a pass found are embedded at
// their version then (or later), and their passages.
func (x *Index) recount(live []docstore.Document) {
	x.mu.Lock()
	defer x.mu.Unlock()
	st := &x.status
	st.Documents, st.Counted = len(live), time.Now()
	st.Embedded, st.Passages = x.embedded(live)
}

// counted adds to Progress's count the documents of group (stale when the pass counted)
// that are embedded now: a group's worth of work, where counting every live document
// again after each group of 16 would cost the whole space each time. The pass's last
// recount sets the figures afresh.
func (x *Index) counted(group []docstore.Document) {
	x.mu.Lock()
	defer x.mu.Unlock()
	docs, passages := x.embedded(group)
	x.status.Embedded += docs
	x.status.Passages += passages
	x.status.Counted = time.Now()
}

// embedded is how many of live are embedded at their version (or a later one), and their
// passages; x.mu is held.
func (x *Index) embedded(live []docstore.Document) (docs, passages int) {
	for _, d := range live {
		if dv, ok := x.byDoc[d.ID]; ok && dv.version >= d.Version {
			docs++
			passages += len(dv.vecs)
		}
	}
	return docs, passages
}

// Progress is how far the index had got when a pass last counted (Status.Counted; zero
// before the first pass has read the documents), from memory alone: no read of the store,
// no request, for a page that shows it on every view. Status reads the store for the
// count of now.
func (x *Index) Progress() Status {
	x.mu.Lock()
	defer x.mu.Unlock()
	st := x.status
	st.Model, st.Dims = x.c.Model, x.dims
	return st
}

// load reads the kept vectors into memory, once; a model other than the kept one empties
// the store's first.
func (x *Index) load(ctx context.Context) error {
	x.mu.Lock()
	loaded := x.loaded
	x.mu.Unlock()
	if loaded {
		return nil
	}
	byDoc := map[string]docVecs{}
	dims, same := 0, true
	err := x.db.View(ctx, func(tx kv.Tx) error {
		clear(byDoc)
		b := spaces.Sub(tx, x.space, bucketVectors)
		if b == nil {
			return nil
		}
		if meta := b.Bucket(metaName); meta != nil {
			same = string(meta.Get(modelKey)) == x.c.Model
			if v := meta.Get(dimsKey); len(v) == 4 {
				dims = int(binary.BigEndian.Uint32(v))
			}
		}
		docs, vec := b.Bucket(docsName), b.Bucket(vecName)
		if !same || docs == nil || vec == nil {
			return nil
		}
		return docs.ForEach(func(k, v []byte) error {
			version, hashes, ok := decodeDoc(v)
			if !ok {
				return nil // damaged: embedded again
			}
			dv := docVecs{version: version}
			for _, h := range hashes {
				if f := decodeVec(vec.Get(h), dims); f != nil {
					dv.vecs = append(dv.vecs, f)
				} else {
					return nil // a vector missing: the document is embedded again
				}
			}
			byDoc[string(k)] = dv
			return nil
		})
	})
	if err != nil {
		return err
	}
	if !same {
		if err := x.wipe(ctx, 0); err != nil {
			return err
		}
		byDoc, dims = map[string]docVecs{}, 0
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.loaded {
		x.loaded, x.byDoc, x.dims = true, byDoc, dims
		x.status.Model, x.status.Dims = x.c.Model, dims
	}
	return nil
}

// wipe empties the kept vectors and documents and records the model (and dims, if known).
func (x *Index) wipe(ctx context.Context, dims int) error {
	return x.db.Update(ctx, func(tx kv.Tx) error {
		b, err := spaces.CreateSub(tx, x.space, bucketVectors)
		if err != nil {
			return err
		}
		for _, name := range [][]byte{vecName, docsName} {
			if err := b.DeleteBucket(name); err != nil && !errors.Is(err, kv.ErrBucketNotFound) {
				return err
			}
		}
		meta, err := b.CreateBucketIfNotExists(metaName)
		if err != nil {
			return err
		}
		if err := meta.Put(modelKey, []byte(x.c.Model)); err != nil {
			return err
		}
		if dims == 0 {
			return meta.Delete(dimsKey)
		}
		return meta.Put(dimsKey, binary.BigEndian.AppendUint32(nil, uint32(dims)))
	})
}

// updateDocs embeds the passages of ds that aren't kept, and writes them and ds's lists.
func (x *Index) updateDocs(ctx context.Context, ds []docstore.Document) error {
	type cut struct {
		id       string
		version  int
		passages []string
		hashes   [][32]byte
	}
	var cuts []cut
	if err := x.docs.View(ctx, func(r *docstore.Reader) error {
		cuts = cuts[:0]
		for _, d := range ds {
			d, v, err := r.Read(d.ID, 0)
			if errors.Is(err, docstore.ErrNotFound) {
				continue
			} else if err != nil {
				return err
			}
			c := cut{id: d.ID, version: v.Number, passages: Passages(v.Title, v.Text)}
			for _, p := range c.passages {
				c.hashes = append(c.hashes, Hash(x.c.Model, p))
			}
			cuts = append(cuts, c)
		}
		return nil
	}); err != nil {
		return err
	}
	// The passages whose vectors aren't kept, each once.
	have := map[[32]byte][]float32{}
	x.mu.Lock()
	dims := x.dims
	x.mu.Unlock()
	if err := x.db.View(ctx, func(tx kv.Tx) error {
		clear(have)
		vec := spaces.Sub(tx, x.space, bucketVectors)
		if vec != nil {
			vec = vec.Bucket(vecName)
		}
		if vec == nil {
			return nil
		}
		for _, c := range cuts {
			for _, h := range c.hashes {
				if f := decodeVec(vec.Get(h[:]), dims); f != nil {
					have[h] = f
				}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	var texts []string
	var wanted [][32]byte
	asked := map[[32]byte]bool{}
	for _, c := range cuts {
		for i, h := range c.hashes {
			if have[h] == nil && !asked[h] {
				asked[h] = true
				texts = append(texts, c.passages[i])
				wanted = append(wanted, h)
			}
		}
	}
	vs, err := x.embed(ctx, texts)
	if err != nil {
		if ctx.Err() == nil {
			x.failed(err)
		}
		return err
	}
	if len(texts) > 0 {
		x.answered()
	}
	if len(vs) > 0 && dims != 0 && len(vs[0]) != dims {
		x.o.Logger.Warn("the embeddings model's dimensions changed: embedding every passage again", "model", x.c.Model, "was", dims, "now", len(vs[0]))
		if err := x.wipe(ctx, 0); err != nil {
			return err
		}
		x.mu.Lock()
		x.byDoc, x.dims = map[string]docVecs{}, 0
		x.status.Dims = 0
		x.mu.Unlock()
		return errWiped
	}
	if len(vs) > 0 && dims == 0 {
		dims = len(vs[0])
	}
	for i, h := range wanted {
		have[h] = vs[i]
	}
	err = x.db.Update(ctx, func(tx kv.Tx) error {
		b, err := spaces.CreateSub(tx, x.space, bucketVectors)
		if err != nil {
			return err
		}
		meta, err := b.CreateBucketIfNotExists(metaName)
		if err != nil {
			return err
		}
		switch string(meta.Get(modelKey)) {
		case x.c.Model:
		case "": // the first vectors
			if err := meta.Put(modelKey, []byte(x.c.Model)); err != nil {
				return err
			}
		default:
			return errWiped // another process changed the model: load again
		}
		if dims != 0 {
			if err := meta.Put(dimsKey, binary.BigEndian.AppendUint32(nil, uint32(dims))); err != nil {
				return err
			}
		}
		vec, err := b.CreateBucketIfNotExists(vecName)
		if err != nil {
			return err
		}
		docs, err := b.CreateBucketIfNotExists(docsName)
		if err != nil {
			return err
		}
		for i, h := range wanted {
			if err := vec.Put(h[:], encodeVec(vs[i])); err != nil {
				return err
			}
		}
		for _, c := range cuts {
			if err := docs.Put([]byte(c.id), encodeDoc(c.version, c.hashes)); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errWiped) {
		x.mu.Lock()
		x.loaded = false
		x.mu.Unlock()
		return err
	}
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.dims, x.status.Dims = dims, dims
	for _, c := range cuts {
		dv := docVecs{version: c.version}
		for _, h := range c.hashes {
			dv.vecs = append(dv.vecs, have[h])
		}
		x.byDoc[c.id] = dv
	}
	return nil
}

// drop lets go of the documents ids (deleted or purged) and removes the vectors no
// document kept uses any more.
func (x *Index) drop(ctx context.Context, ids []string) error {
	err := x.db.Update(ctx, func(tx kv.Tx) error {
		b := spaces.Sub(tx, x.space, bucketVectors)
		if b == nil {
			return nil
		}
		docs, vec := b.Bucket(docsName), b.Bucket(vecName)
		if docs == nil || vec == nil {
			return nil
		}
		for _, id := range ids {
			if err := docs.Delete([]byte(id)); err != nil {
				return err
			}
		}
		used := map[string]bool{}
		if err := docs.ForEach(func(_, v []byte) error {
			_, hashes, _ := decodeDoc(v)
			for _, h := range hashes {
				used[string(h)] = true
			}
			return nil
		}); err != nil {
			return err
		}
		var unused [][]byte
		if err := vec.ForEach(func(k, _ []byte) error {
			if !used[string(k)] {
				unused = append(unused, slices.Clone(k))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range unused {
			if err := vec.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	x.mu.Lock()
	for _, id := range ids {
		delete(x.byDoc, id)
	}
	x.mu.Unlock()
	return nil
}

// Status says how far the index is.
func (x *Index) Status(ctx context.Context) (Status, error) {
	if err := x.load(ctx); err != nil {
		return Status{}, err
	}
	live, err := x.live(ctx)
	if err != nil {
		return Status{}, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	st := x.status
	st.Model, st.Dims, st.Documents = x.c.Model, x.dims, len(live)
	st.Embedded, st.Passages = x.embedded(live)
	return st, nil
}

// Similar embeds query and gives each document kept its passages' best cosine similarity
// to it. It returns nil and the endpoint's error when the endpoint fails (said on stderr
// once): search is then lexical.
func (x *Index) Similar(ctx context.Context, query string) (map[string]float32, error) {
	if err := x.load(ctx); err != nil {
		return nil, err
	}
	x.mu.Lock()
	empty := len(x.byDoc) == 0
	paused := x.down && time.Since(x.downAt) < x.o.Pause
	x.mu.Unlock()
	if empty {
		return nil, nil
	}
	if paused {
		return nil, errPaused
	}
	if len(query) > MaxPassage*4 {
		query = query[:cutAt(query, MaxPassage*4)]
	}
	ctx, cancel := context.WithTimeout(ctx, x.o.QueryTimeout)
	defer cancel()
	vs, err := x.c.Embed(ctx, []string{query}, 0)
	if err != nil {
		x.failed(err)
		return nil, err
	}
	x.answered()
	q := vs[0]
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(q) != x.dims {
		return nil, nil // the model changed: the next pass embeds again
	}
	out := make(map[string]float32, len(x.byDoc))
	for id, dv := range x.byDoc {
		best := float32(math.Inf(-1))
		for _, v := range dv.vecs {
			best = max(best, dot(q, v))
		}
		if len(dv.vecs) > 0 {
			out[id] = best
		}
	}
	return out, nil
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func encodeVec(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}

// decodeVec reads a kept vector: nil if it hasn't dims dimensions (dims 0: any).
func decodeVec(b []byte, dims int) []float32 {
	if len(b) == 0 || len(b)%4 != 0 || dims != 0 && len(b) != 4*dims {
		return nil
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func encodeDoc(version int, hashes [][32]byte) []byte {
	out := binary.AppendUvarint(nil, uint64(version))
	for _, h := range hashes {
		out = append(out, h[:]...)
	}
	return out
}

func decodeDoc(v []byte) (int, [][]byte, bool) {
	n, w := binary.Uvarint(v)
	if w <= 0 || (len(v)-w)%32 != 0 {
		return 0, nil, false
	}
	var hashes [][]byte
	for rest := v[w:]; len(rest) > 0; rest = rest[32:] {
		hashes = append(hashes, rest[:32])
	}
	return int(n), hashes, true
}

package semantic_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/embedtest"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/stores"
	"github.com/compass-mcp/compass-mcp/semantic"
)

// fake is an embeddings endpoint for tests (embedtest): each text's vector is made from its
// words (a word's vector from its hash, summed, in dims dimensions), so texts sharing words
// are similar.
type fake struct {
	*embedtest.Server
	dims atomic.Int32
}

func newFake(t testing.TB, dims int) *fake {
	f := &fake{}
	f.dims.Store(int32(dims))
	f.Server = embedtest.New(t, func(_ int, text string) []float64 { return vectorOf(text, int(f.dims.Load())) })
	return f
}

func vectorOf(text string, dims int) []float64 {
	v := make([]float64, dims)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New64a()
		h.Write([]byte(strings.Trim(w, ".,;:!?")))
		s := h.Sum64()
		for i := 0; i < 4; i++ {
			v[(s>>(i*16))%uint64(dims)] += 1
		}
	}
	v[0] += 0.01 // never all zeros
	return v
}

// testDB is a store for a test: bbolt, or PostgreSQL when COMPASS_TEST_DATA says so.
func testDB(t *testing.T) kv.DB {
	t.Helper()
	path := os.Getenv("COMPASS_TEST_DATA")
	if path == "" {
		path = filepath.Join(t.TempDir(), "test.db")
	}
	db, err := stores.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// fresh is a store for a test (testDB) and a space of its own in it, named prefix and a
// number: a PostgreSQL store is shared by every run.
func fresh(t *testing.T, prefix string) (kv.DB, string, *docstore.Store) {
	t.Helper()
	db := testDB(t)
	space := fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()%1e9)
	return db, space, docstore.New(db, space)
}

var author = docstore.Author{By: "agent:north", For: "person:ana"}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)) }

func opts(log *slog.Logger) semantic.Options {
	return semantic.Options{Interval: time.Millisecond, Backoff: time.Millisecond, Logger: log}
}

func create(t *testing.T, s *docstore.Store, title, text string) docstore.Document {
	t.Helper()
	saved, err := s.Create(t.Context(), title, text, docstore.KindWrite, author)
	if err != nil {
		t.Fatal(err)
	}
	return saved.Document
}

func TestVectorsSurviveARestartAndUnchangedPassagesAreNotSentAgain(t *testing.T) {
	f := newFake(t, 16)
	db, space, s := fresh(t, "vec")
	c := &semantic.Client{URL: f.URL(), Model: "fake"}
	long := strings.Repeat("Paragraph about lanterns and copper.\n\n", 60) // about 2,300 bytes: two passages
	d := create(t, s, "Lanterns", long+"## Music\n\nThe trailer music is by Ben.\n")
	create(t, s, "Bread", "Sourdough needs a starter and patience.")
	ix := semantic.NewIndex(db, space, c, opts(quiet()))
	if err := ix.Update(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	st, err := ix.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedded != 2 || st.Documents != 2 || st.Dims != 16 || st.Passages < 4 {
		t.Fatalf("status after the first pass: %+v", st)
	}
	firstTexts := f.Texts.Load()
	// A new process (a new Index on the same store): nothing is sent again.
	ix2 := semantic.NewIndex(db, space, c, opts(quiet()))
	if err := ix2.Update(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if n := f.Texts.Load(); n != firstTexts {
		t.Fatalf("a restart sent %d more texts", n-firstTexts)
	}
	// A version that changes one paragraph sends that passage alone.
	if _, err := s.Write(t.Context(), d.ID, "Lanterns", long+"## Music\n\nThe trailer music is by Ana.\n", 0, author); err != nil {
		t.Fatal(err)
	}
	before := f.Requests.Load()
	if err := ix2.Update(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if got := f.Texts.Load() - firstTexts; got != 1 {
		t.Fatalf("a changed paragraph sent %d texts, want 1", got)
	}
	if got := f.Requests.Load() - before; got != 1 {
		t.Fatalf("a changed paragraph made %d requests, want 1", got)
	}
	sent := f.Sent()
	last := sent[len(sent)-1]
	if !strings.Contains(last, "by Ana") {
		t.Fatalf("sent %q, want the changed passage", last)
	}
	sim, err := ix2.Similar(t.Context(), "sourdough starter")
	if err != nil {
		t.Fatal(err)
	}
	if len(sim) != 2 {
		t.Fatalf("similarities of %d documents, want 2", len(sim))
	}
}

func TestAModelChangeEmbedsAgainNeverMixing(t *testing.T) {
	f := newFake(t, 8)
	db, space, s := fresh(t, "model")
	create(t, s, "One", "alpha beta")
	create(t, s, "Two", "gamma delta")
	ix := semantic.NewIndex(db, space, &semantic.Client{URL: f.URL(), Model: "a"}, opts(quiet()))
	if err := ix.Update(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	// Another model's name: every passage again.
	n := f.Texts.Load()
	ix = semantic.NewIndex(db, space, &semantic.Client{URL: f.URL(), Model: "b"}, opts(quiet()))
	if err := ix.Update(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if got := f.Texts.Load() - n; got != 2 {
		t.Fatalf("a new model sent %d texts, want 2", got)
	}
	// The same name, other dimensions (a model pulled again under its name): again.
	f.dims.Store(12)
	var logs bytes.Buffer
	create(t, s, "Three", "epsilon")
	n = f.Texts.Load()
	ix = semantic.NewIndex(db, space, &semantic.Client{URL: f.URL(), Model: "b"}, opts(slog.New(slog.NewTextHandler(&logs, nil))))
	if err := ix.Update(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	st, _ := ix.Status(t.Context())
	if st.Dims != 12 || st.Embedded != 3 {
		t.Fatalf("after the dimensions changed: %+v", st)
	}
	if got := f.Texts.Load() - n; got != 1+3 {
		t.Fatalf("sent %d texts, want 4 (the new one, then all three again)", got)
	}
	if !strings.Contains(logs.String(), "dimensions changed") {
		t.Fatalf("no line said the dimensions changed: %s", logs.String())
	}
	sim, err := ix.Similar(t.Context(), "epsilon")
	if err != nil || len(sim) != 3 {
		t.Fatalf("similar: %v %v", sim, err)
	}
}

func TestAFailingEndpointLeavesSearchLexicalAndSaysSoOnce(t *testing.T) {
	f := newFake(t, 8)
	db, space, s := fresh(t, "fail")
	create(t, s, "Copper", "copper lantern")
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	c := &semantic.Client{URL: f.URL(), Model: "fake", Key: "s3cret-key", Timeout: 200 * time.Millisecond}
	ix := semantic.NewIndex(db, space, c, opts(log))
	cases := []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request, texts []string) bool
	}{
		{"503", func(w http.ResponseWriter, _ *http.Request, _ []string) bool {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return true
		}},
		{"garbage", func(w http.ResponseWriter, _ *http.Request, _ []string) bool {
			w.Write([]byte("<html>not json s3cret-key"))
			return true
		}},
		{"wrong count", func(w http.ResponseWriter, _ *http.Request, _ []string) bool {
			w.Write([]byte(`{"data":[]}`))
			return true
		}},
		{"NaN", func(w http.ResponseWriter, _ *http.Request, texts []string) bool {
			w.Write([]byte(`{"data":[{"index":0,"embedding":[1, NaN]}]}`))
			return true
		}},
		{"huge numbers", func(w http.ResponseWriter, _ *http.Request, texts []string) bool {
			w.Write([]byte(`{"data":[{"index":0,"embedding":[1e300, 1]}]}`))
			return true
		}},
		{"dimensions within a batch", func(w http.ResponseWriter, _ *http.Request, texts []string) bool {
			w.Write([]byte(`{"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2]}]}`))
			return true
		}},
		{"too many dimensions", func(w http.ResponseWriter, _ *http.Request, texts []string) bool {
			w.Write([]byte(`{"data":[{"index":0,"embedding":[` + strings.Repeat("1,", semantic.MaxDims) + `1]}]}`))
			return true
		}},
		{"a huge body", func(w http.ResponseWriter, _ *http.Request, texts []string) bool {
			w.Write([]byte(`{"data":[{"index":0,"embedding":[`))
			chunk := bytes.Repeat([]byte("0.1,"), 1<<16)
			for range semantic.MaxAnswer/len(chunk) + 2 {
				if _, err := w.Write(chunk); err != nil {
					break
				}
			}
			return true
		}},
		{"slow", func(w http.ResponseWriter, r *http.Request, _ []string) bool {
			<-r.Context().Done() // no answer before the client gives up (its Timeout) and hangs up
			return true
		}},
	}
	for _, tc := range cases {
		f.Answer(tc.answer)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		err := ix.Update(ctx, nil)
		cancel()
		if err == nil {
			t.Fatalf("%s: the pass succeeded", tc.name)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("%s: the error shows the key: %v", tc.name, err)
		}
		sim, err := ix.Similar(t.Context(), "copper")
		if err == nil && sim != nil {
			t.Fatalf("%s: similarities from a failing endpoint: %v", tc.name, sim)
		}
		// What the person's search does then: the lexical answer, no error.
		var res docstore.Results
		if err := s.View(t.Context(), func(r *docstore.Reader) (err error) {
			res, _, err = semantic.Fused.Search(r, "copper", 10, sim)
			return err
		}); err != nil || len(res.Found) != 1 {
			t.Fatalf("%s: search with the endpoint failing: %v, %d found", tc.name, err, len(res.Found))
		}
	}
	mu.Lock()
	said := strings.Count(logs.String(), "search is lexical only")
	text := logs.String()
	mu.Unlock()
	if said != 1 {
		t.Fatalf("the failure was said %d times, want once:\n%s", said, text)
	}
	if strings.Contains(text, "s3cret") {
		t.Fatalf("the key is in the log:\n%s", text)
	}
	// It answers again: said so, and the document is embedded.
	f.Answer(nil)
	if err := ix.Update(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	text = logs.String()
	mu.Unlock()
	if !strings.Contains(text, "answers again") {
		t.Fatalf("no line said the endpoint answers again:\n%s", text)
	}
	// Down altogether: a closed port.
	f.Close()
	if err := ix.Update(t.Context(), nil); err != nil {
		t.Fatalf("a pass with nothing to embed asked the endpoint: %v", err)
	}
	if sim, err := ix.Similar(t.Context(), "copper"); err == nil || sim != nil {
		t.Fatalf("similar with the endpoint down: %v %v", sim, err)
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestFusionKeepsEveryWordFirstAndMarksMeaningAlone(t *testing.T) {
	lex := []semantic.Hit{{ID: "a", Score: 10, Every: true}, {ID: "b", Score: 9}, {ID: "c", Score: 8.9}, {ID: "d", Score: 1}}
	sim := map[string]float32{"a": 0.1, "b": 0.2, "c": 0.9, "d": 0.95, "z": 0.99}
	f := semantic.Fusion{Meaning: 0.2, Depth: 10, Alone: 0.5, AloneMax: 1}
	got := f.Fuse(lex, sim, func(id string) bool { return true })
	var order []string
	for _, h := range got {
		order = append(order, fmt.Sprintf("%s%v", h.ID, h.ByMeaning))
	}
	// a has every word: first whatever its meaning. c's meaning lifts it past b (their words
	// score alike); d's can't lift it past them (its words score far below); z comes by
	// meaning alone, marked, after the documents with words.
	want := "afalse cfalse bfalse dfalse ztrue"
	if strings.Join(order, " ") != want {
		t.Fatalf("fused %v, want %s", order, want)
	}
	if got := f.Fuse(lex, nil, nil); len(got) != len(lex) || got[1].ID != "b" {
		t.Fatalf("without meaning, the lexical order: %v", got)
	}
	// Words that find nothing: the documents most alike by meaning, marked.
	if got := f.Fuse(nil, sim, nil); len(got) != 1 || got[0].ID != "z" || !got[0].ByMeaning {
		t.Fatalf("by meaning alone: %v", got)
	}
	// One document by its words: the others, less alike than it, don't come by meaning.
	if got := f.Fuse(lex[:1], map[string]float32{"a": 0.9, "b": 0.5, "c": 0.2}, nil); len(got) != 1 {
		t.Fatalf("one found by words, and less alike by meaning: %v", got)
	}
	// A deleted document found by meaning is not given.
	if got := f.Fuse(lex, sim, func(id string) bool { return id != "z" }); len(got) != 4 {
		t.Fatalf("a deleted document came back: %v", got)
	}
}

var _ = errors.New

package reliability

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/mark3labs/mcp-go/client"
)

// The crash test: writers over HTTP, the server SIGKILLed at a random moment, restarted on
// the same file, and every write that was answered "Saved ... as version N" looked for in
// the file, with its text.
//
//	go test -run TestCrash -v ./e2e/reliability                          # 3 rounds
//	COMPASS_CRASH_ROUNDS=20 go test -run TestCrash -v ./e2e/reliability  # the long form
//
// COMPASS_CRASH_SEED replays a run (the seed is logged).

const crashWriters = 6

// promise is what one acknowledged write says is in the file: version n of doc, made by a
// call of kind, whose text is exact (when the writer knows the whole text) or else ends
// with suffix and has (and has not) a line.
type promise struct {
	doc, call   string
	n           int
	kind        docstore.Kind
	exact       string
	suffix      string
	has, hasNot string
}

func (p promise) check(v docstore.Version) error {
	switch {
	case v.Kind != p.kind:
		return fmt.Errorf("kind %s, want %s", v.Kind, p.kind)
	case p.exact != "" && v.Text != p.exact:
		return fmt.Errorf("text %q, want %q", v.Text, p.exact)
	case !strings.HasSuffix(v.Text, p.suffix):
		return fmt.Errorf("text ends %q, want it to end %q", tail(v.Text), p.suffix)
	case !strings.Contains(v.Text, p.has):
		return fmt.Errorf("text %q has no %q", tail(v.Text), p.has)
	case p.hasNot != "" && strings.Contains(v.Text, p.hasNot):
		return fmt.Errorf("text %q still has %q", tail(v.Text), p.hasNot)
	}
	return nil
}

func tail(s string) string {
	if len(s) > 120 {
		return "…" + s[len(s)-120:]
	}
	return s
}

// ledger gathers the promises of every round. Two acknowledgements of the same version of a
// document would mean one write overwrote the other: add refuses the second.
type ledger struct {
	mu       sync.Mutex
	promises []promise
	by       map[string]string // "<doc> <n>" → the call that was answered with it
	logLines []string          // lines appended to Log and acknowledged
}

func (l *ledger) add(p promise) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := fmt.Sprintf("%s %d", p.doc, p.n)
	if other, ok := l.by[key]; ok {
		return fmt.Errorf("version %d of %s was answered to two calls: %s, and %s", p.n, p.doc, other, p.call)
	}
	l.by[key] = p.call
	l.promises = append(l.promises, p)
	return nil
}

func TestCrashKeepsEveryAcknowledgedWrite(t *testing.T) {
	t.Parallel()
	rounds, window := 3, 600 // the short form: a few hundred to a couple of thousand writes
	if v := os.Getenv("COMPASS_CRASH_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("COMPASS_CRASH_ROUNDS=%q: want a number of rounds", v)
		}
		rounds, window = n, 1500
	}
	rng, l, writers := crashSetup(t)
	data := newData(t)
	var logID string
	inFlight, start := 0, time.Now()
	for round := range rounds {
		from := len(l.promises)
		srv := startHTTP(t, data, "--agent", "crash")
		if round == 0 {
			c := httpClient(t, srv.url, "setup")
			a := mustCall(t, c, "write_document", map[string]any{"title": "Log", "text": "# Log\n"})
			id, n, ok := saved(a)
			if !ok {
				t.Fatalf("creating Log: %q", a.text)
			}
			logID = id
			must(t, l.add(promise{doc: id, n: n, call: "create Log", kind: docstore.KindWrite, exact: "# Log\n"}))
			c.Close()
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for _, w := range writers {
			w.round, w.log = round, logID
			c := httpClient(t, srv.url, fmt.Sprintf("writer-%d", w.i))
			if err := w.sync(ctx, c); err != nil {
				t.Fatalf("round %d, writer %d, before the writes: %v", round, w.i, err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				if err := w.write(ctx, c); err != nil {
					t.Errorf("round %d, writer %d: %v", round, w.i, err)
				}
			}()
		}
		// The moment of the kill: sometimes before the first commit, mostly in the thick of it.
		time.Sleep(time.Duration(rng.IntN(window)) * time.Millisecond)
		srv.kill()
		wg.Wait()
		cancel()
		for _, w := range writers {
			if w.unknown {
				inFlight++
			}
		}
		if t.Failed() {
			t.FailNow()
		}
		verify(t, data, l.promises[from:], nil, nil)
		t.Logf("round %d: %d writes acknowledged, all there after SIGKILL", round+1, len(l.promises)-from)
	}
	counters := map[string]int{}
	for _, w := range writers {
		counters[fmt.Sprintf("counter %d: ", w.i)] = w.counter
	}
	docs := verify(t, data, l.promises, l.logLines, counters)
	t.Logf("%d rounds, %d acknowledged writes to %d documents verified after SIGKILL and restart (%d calls in flight at the kills, outcome unknown to their clients): 0 lost, bbolt's check clean, in %s",
		rounds, len(l.promises), docs, inFlight, time.Since(start).Round(time.Millisecond))
}

// crashSetup gives a crash test its random source (seeded from COMPASS_CRASH_SEED, else
// the clock, and logged so that a failing run can be run again), its ledger of
// acknowledged writes, and its writers.
func crashSetup(t *testing.T) (*rand.Rand, *ledger, []*crashWriter) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("COMPASS_CRASH_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("COMPASS_CRASH_SEED=%d", seed)
	l := &ledger{by: map[string]string{}}
	writers := make([]*crashWriter, crashWriters)
	for i := range writers {
		writers[i] = &crashWriter{i: i, l: l, rng: rand.New(rand.NewPCG(seed, uint64(i+1)))}
	}
	return rand.New(rand.NewPCG(seed, 0)), l, writers
}

// verify opens the data file (no server holds it), runs bbolt's consistency check, and
// finds every promise kept. logLines, when given, must all be in Log's latest text, each
// counter line there must be at its last acknowledged value or one more (an edit in flight
// at the last kill), and every document's versions must be 1..n without gaps. It returns
// how many documents it saw.
func verify(t *testing.T, data string, promises []promise, logLines []string, counters map[string]int) int {
	t.Helper()
	db := openChecked(t, data)
	defer db.Close()
	return verifyIn(t, db, promises, logLines, counters)
}

// verifyIn is verify on a store that is already open (a PostgreSQL database the servers
// still use).
func verifyIn(t *testing.T, db kv.DB, promises []promise, logLines []string, counters map[string]int) int {
	t.Helper()
	s := docstore.New(db, "personal")
	docs := map[string]bool{}
	for _, p := range promises {
		docs[p.doc] = true
		_, v, err := read(t, s, p.doc, p.n)
		if err != nil {
			t.Errorf("%s was answered version %d of %s: %v", p.call, p.n, p.doc, err)
			continue
		}
		if err := p.check(v); err != nil {
			t.Errorf("%s was answered version %d of %s, which has %v", p.call, p.n, p.doc, err)
		}
	}
	if logLines == nil {
		return len(docs)
	}
	for id := range docs {
		d, vs, err := history(t, s, id)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			if v.Number != d.Version-i {
				t.Errorf("%s's versions are not 1..%d without gaps: %d at %d", d.Title, d.Version, v.Number, i)
				break
			}
		}
		if d.Title == "Log" {
			_, latest, err := read(t, s, id, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range logLines {
				if !strings.Contains(latest.Text, "\n"+line+"\n") {
					t.Errorf("%q was appended to Log and acknowledged, but is not in its latest text", line)
				}
			}
			for prefix, n := range counters {
				if !strings.Contains(latest.Text, fmt.Sprintf("\n%s%d\n", prefix, n)) && !strings.Contains(latest.Text, fmt.Sprintf("\n%s%d\n", prefix, n+1)) {
					t.Errorf("Log's latest text has not %s%d, the value its last acknowledged edit made", prefix, n)
				}
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return len(docs)
}

// crashWriter writes to its own document (write, append, edit: it knows the whole text) and
// to the shared Log (appends, and edits of its own counter line).
type crashWriter struct {
	i       int
	l       *ledger
	rng     *rand.Rand
	round   int
	log     string // Log's id
	own     string // its own document's id
	text    string // its own document's text, as it was last answered
	token   int    // the token-N its text has, which edits count up
	counter int    // its counter line in Log
	step    int
	unknown bool // a call was in flight when the server died
}

var (
	tokenRE   = regexp.MustCompile(`token-(\d+)`)
	headerEnd = "\n\n"
)

// sync reads what the last round left (its calls in flight at the kill may or may not have
// been committed), making its own document and counter line if they aren't there yet.
func (w *crashWriter) sync(ctx context.Context, c *client.Client) error {
	w.unknown = false
	title := fmt.Sprintf("Own %d", w.i)
	a, err := call(ctx, c, "read_document", map[string]any{"document": title})
	if err != nil {
		return err
	}
	if a.isError {
		w.text, w.token = fmt.Sprintf("# Own %d\n\ntoken-0\n", w.i), 0
		a, err = call(ctx, c, "write_document", map[string]any{"title": title, "text": w.text})
		if err != nil {
			return err
		}
		id, n, ok := saved(a)
		if !ok {
			return fmt.Errorf("creating %s: %q", title, a.text)
		}
		w.own = id
		if err := w.l.add(promise{doc: id, n: n, call: "create " + title, kind: docstore.KindWrite, exact: w.text}); err != nil {
			return err
		}
	} else {
		_, w.text, _ = strings.Cut(a.text, headerEnd)
		m := tokenRE.FindStringSubmatch(w.text)
		if m == nil {
			return fmt.Errorf("%s has no token: %q", title, w.text)
		}
		w.token, _ = strconv.Atoi(m[1])
		if w.own == "" {
			return errors.New("own document without an id")
		}
	}
	a, err = call(ctx, c, "read_document", map[string]any{"document": w.log})
	if err != nil {
		return err
	}
	m := regexp.MustCompile(fmt.Sprintf(`\ncounter %d: (\d+)\n`, w.i)).FindStringSubmatch(a.text)
	if m != nil {
		w.counter, _ = strconv.Atoi(m[1])
		return nil
	}
	w.counter = 0
	line := fmt.Sprintf("counter %d: 0", w.i)
	a, err = call(ctx, c, "append_document", map[string]any{"document": w.log, "text": line})
	if err != nil {
		return err
	}
	return w.acknowledged(a, promise{doc: w.log, call: "append " + line, kind: docstore.KindAppend, suffix: "\n\n" + line + "\n"}, "")
}

// write makes writes until the server dies. It returns an error only for an answer that
// is not what was asked for.
func (w *crashWriter) write(ctx context.Context, c *client.Client) error {
	for {
		w.step++
		var (
			args   map[string]any
			p      promise
			logged string
			next   string // its own text after the write
			token  = w.token
		)
		switch w.rng.IntN(5) {
		case 0:
			token++
			next = fmt.Sprintf("# Own %d\n\nwritten in round %d, step %d\ntoken-%d\n", w.i, w.round, w.step, token)
			args = map[string]any{"document": w.own, "text": next}
			p = promise{doc: w.own, kind: docstore.KindWrite, exact: next}
		case 1:
			line := fmt.Sprintf("own %d, round %d, step %d", w.i, w.round, w.step)
			next = strings.TrimRight(w.text, "\n") + "\n\n" + line + "\n"
			args = map[string]any{"document": w.own, "text": line}
			p = promise{doc: w.own, kind: docstore.KindAppend, exact: next}
		case 2:
			token++
			old, new := fmt.Sprintf("token-%d\n", w.token), fmt.Sprintf("token-%d\n", token)
			next = strings.Replace(w.text, old, new, 1)
			args = map[string]any{"document": w.own, "old": old, "new": new}
			p = promise{doc: w.own, kind: docstore.KindEdit, exact: next}
		case 3:
			logged = fmt.Sprintf("log %d, round %d, step %d", w.i, w.round, w.step)
			args = map[string]any{"document": w.log, "text": logged}
			p = promise{doc: w.log, kind: docstore.KindAppend, suffix: "\n\n" + logged + "\n"}
		case 4:
			old, new := fmt.Sprintf("\ncounter %d: %d\n", w.i, w.counter), fmt.Sprintf("\ncounter %d: %d\n", w.i, w.counter+1)
			args = map[string]any{"document": w.log, "old": old, "new": new}
			p = promise{doc: w.log, kind: docstore.KindEdit, has: new, hasNot: old}
		}
		tool := map[docstore.Kind]string{docstore.KindWrite: "write_document", docstore.KindAppend: "append_document", docstore.KindEdit: "edit_document"}[p.kind]
		p.call = fmt.Sprintf("%s %v (writer %d, round %d)", tool, args, w.i, w.round)
		a, err := call(ctx, c, tool, args)
		if err != nil {
			w.unknown = true // the server died: whether this write was committed, nobody was told
			return nil
		}
		if err := w.acknowledged(a, p, logged); err != nil {
			return err
		}
		switch {
		case p.doc == w.own:
			w.text, w.token = next, token
		case p.kind == docstore.KindEdit:
			w.counter++
		}
	}
}

// acknowledged records an answer "Saved ... as version N" as a promise.
func (w *crashWriter) acknowledged(a answer, p promise, logged string) error {
	id, n, ok := saved(a)
	if !ok {
		return fmt.Errorf("%s: answered %q", p.call, a.text)
	}
	if id != p.doc {
		return fmt.Errorf("%s: answered with document %s", p.call, id)
	}
	p.n = n
	if err := w.l.add(p); err != nil {
		return err
	}
	if logged != "" {
		w.l.mu.Lock()
		w.l.logLines = append(w.l.logLines, logged)
		w.l.mu.Unlock()
	}
	return nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

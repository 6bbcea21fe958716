package filesync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/filesync"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/internal/testkit/wait"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

func TestMain(m *testing.M) { testbin.Main(m) }

// madeWithin is how long the last sync is given, once the torture's agents and editor have
// stopped, to make the documents of the folder's first files, if the killed syncs had not.
const madeWithin = 2 * time.Minute

// tortureFor is how long TestSyncTorture runs: a few seconds in the normal run,
// COMPASS_TORTURE (a duration: 5m) for the long one.
func tortureFor(t *testing.T) time.Duration {
	if v := os.Getenv("COMPASS_TORTURE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("COMPASS_TORTURE=%q: a duration, like 5m", v)
		}
		return d
	}
	return 6 * time.Second
}

// TestSyncTorture: agents append and edit through the store while a simulated editor saves
// atomically (temp and rename), renames and deletes and restores files, and the sync (the
// real binary, `compass-mcp sync DIR`) is killed with SIGKILL and started again at random.
// Once it has quiesced: every file is its document's text, no file holds conflict markers,
// every write an agent had acknowledged is in its document's text or in an open proposal
// of it, every line the editor saved is in its document, and no document was lost or
// duplicated. On bbolt, or on PostgreSQL with COMPASS_TEST_DATA; for minutes with
// COMPASS_TORTURE=5m.
//
//	COMPASS_TORTURE=5m go test -run TestSyncTorture -timeout 20m ./filesync
func TestSyncTorture(t *testing.T) { torture(t, false) }

// TestSyncTortureOverHTTP is TestSyncTorture with the sync against a real
// `compass-mcp serve --http` on 127.0.0.1, with a person's token (in COMPASS_TOKEN), as a
// team's member runs it: the sync is killed and started again, the server stays.
func TestSyncTortureOverHTTP(t *testing.T) { torture(t, true) }

// torturePause is the torture's random time between two acts of one of its actors (an
// agent's appends, the editor's saves, a scratch file's life, a sync's life before it is
// killed), least ms and up to spread more.
func torturePause(rng *rand.Rand, least, spread int) {
	// A genuine sleep (internal/style's TestNoSleeps allows it): the moments are the
	// torture's input, random against a real process; nothing is waited for.
	time.Sleep(time.Duration(least+rng.IntN(spread)) * time.Millisecond)
}

// tortureSeed is the seed of the torture's choices (which document an agent appends to,
// what the editor does, when the sync is killed): COMPASS_TORTURE_SEED, else the clock's.
// It is logged, so a failed run says it; the same seed makes the same choices, though not
// at the same moments (the machine's load decides those).
func tortureSeed(t *testing.T) uint64 {
	if v := os.Getenv("COMPASS_TORTURE_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("COMPASS_TORTURE_SEED=%q: a number", v)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

func torture(t *testing.T, viaHTTP bool) {
	ctx := context.Background()
	seed := tortureSeed(t)
	t.Logf("COMPASS_TORTURE_SEED=%d", seed)
	root := t.TempDir()
	data := kvtest.Data(t, root, "compass.db")
	var tm *team
	var token string
	if viaHTTP {
		tm = &team{t: t, data: data}
		tm.start()
		token = tm.token("--for", "ana")
	}
	db := kvtest.OpenData(t, data)
	s := docstore.New(db, "personal")
	dir := filepath.Join(root, "vault")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	const files = 6
	for i := range files {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("note %d.md", i)), []byte(fmt.Sprintf("# note %d\nseed-%d\n", i, i)), 0o644)
	}
	for i := range 3 {
		check[docstore.Saved](t)(s.Create(ctx, fmt.Sprintf("agent doc %d", i), fmt.Sprintf("# agent %d\nseed-a%d\n", i, i), docstore.KindWrite, north))
	}

	var (
		mu       sync.Mutex
		sayings  bytes.Buffer
		proc     *exec.Cmd
		restarts int
	)
	start := func() {
		cmd := exec.Command(testbin.Path, "sync", dir, "--data", data, "--space", "personal", "--for", "ana", "--every", "2s")
		if viaHTTP {
			cmd = exec.Command(testbin.Path, "sync", dir, "--server", tm.url, "--space", "personal", "--every", "2s", "--poll", "1s")
			cmd.Env = append(os.Environ(), "COMPASS_TOKEN="+token)
		}
		// What each sync says, after its number and the time since it started; and when it
		// started and was killed: a failure under load is traced by these.
		w := &lockedWriter{mu: &mu, w: &sayings, n: restarts, t0: time.Now()}
		cmd.Stdout, cmd.Stderr = w, w
		mu.Lock()
		fmt.Fprintf(&sayings, "[%d] started at %s\n", restarts, w.t0.Format("15:04:05.000"))
		mu.Unlock()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		proc = cmd
	}
	kill := func() {
		mu.Lock()
		fmt.Fprintf(&sayings, "[%d] killed at %s\n", restarts, time.Now().Format("15:04:05.000"))
		mu.Unlock()
		proc.Process.Signal(syscall.SIGKILL)
		proc.Wait()
	}
	start()

	until := time.Now().Add(tortureFor(t))
	var wg sync.WaitGroup
	// Agents: an append a line, each line unique, acknowledged when Append returns.
	acked := map[string]string{} // line → document id
	var ackMu sync.Mutex
	for a := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed+uint64(a), 1))
			for n := 0; time.Now().Before(until); n++ {
				var docs []docstore.Document
				if !wait.For(time.Until(until), func() bool { // listed, with documents in it
					ds, err := docstore.ReadIn(ctx, s, func(r *docstore.Reader) ([]docstore.Document, error) {
						ds, _, err := r.List(100)
						return ds, err
					})
					docs = ds
					return err == nil && len(ds) > 0
				}) {
					break
				}
				d := docs[rng.IntN(len(docs))]
				line := fmt.Sprintf("agent%d-line-%d", a, n)
				if _, err := s.Append(ctx, d.ID, line, docstore.Author{By: fmt.Sprintf("agent:a%d", a), For: "person:ana"}); err == nil {
					ackMu.Lock()
					acked[line] = d.ID
					ackMu.Unlock()
				}
				torturePause(rng, 20, 60)
			}
		}()
	}
	// The editor: saves by temp and rename (as VS Code and Obsidian do), renames, deletes
	// its own scratch files and brings them back.
	saved := map[string]bool{} // lines the editor saved into a file that still exists
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(seed, 7))
		for n := 0; time.Now().Before(until); n++ {
			var mds []string
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && !strings.Contains(p, "/.") {
					mds = append(mds, p)
				}
				return nil
			})
			switch op := rng.IntN(10); {
			case op < 6 && len(mds) > 0: // an atomic save adding a line
				p := mds[rng.IntN(len(mds))]
				b, err := os.ReadFile(p)
				if err != nil {
					continue
				}
				line := fmt.Sprintf("editor-line-%d", n)
				tmp := filepath.Join(filepath.Dir(p), fmt.Sprintf(".%s.tmp%d", filepath.Base(p), n))
				os.WriteFile(tmp, append(b, []byte(line+"\n")...), 0o644)
				if os.Rename(tmp, p) == nil {
					saved[line] = true
				}
			case op < 8 && len(mds) > 0: // a rename or a move
				p := mds[rng.IntN(len(mds))]
				to := filepath.Join(dir, "sub", fmt.Sprintf("moved %d.md", n))
				if rng.IntN(2) == 0 {
					to = filepath.Join(dir, fmt.Sprintf("renamed %d.md", n))
				}
				os.Rename(p, to)
			case op < 9: // a scratch file made, then deleted
				p := filepath.Join(dir, fmt.Sprintf("scratch %d.md", n))
				os.WriteFile(p, []byte(fmt.Sprintf("scratch %d\n", n)), 0o644)
				torturePause(rng, 0, 400)
				os.Remove(p)
			default: // a scratch file that stays
				os.WriteFile(filepath.Join(dir, fmt.Sprintf("kept %d.md", n)), []byte(fmt.Sprintf("kept-%d\n", n)), 0o644)
			}
			torturePause(rng, 50, 150)
		}
	}()
	// The killer.
	rng := rand.New(rand.NewPCG(seed, 3))
	for time.Now().Before(until) {
		torturePause(rng, 500, 1500)
		kill()
		restarts++
		start()
	}
	wg.Wait()
	// The syncs did the work (not only the passes below): the folder's first files are
	// documents. On a busy machine a sync can take longer to start and make its first
	// pass than the killer gives it, every time (a -race binary at load 30 took 1.5 s to
	// say its start line), so the last one is given the time it takes (at most
	// madeWithin) before it is killed.
	made := func() int {
		return len(check[[]docstore.Document](t)(docstore.ReadIn(ctx, s, (*docstore.Reader).Documents))) - 3
	}
	wait.For(madeWithin, func() bool { return made() >= files })
	kill()
	if n := made(); n < files {
		t.Fatalf("the syncs made %d documents of the %d files in the torture and %v after: did they run?\nthey said: %s", n, files, madeWithin, sayings.String())
	}

	// Quiesce: passes until one has nothing to do (over HTTP too, when the syncs were).
	say := &bytes.Buffer{}
	y := &filesync.Sync{Store: s, Dir: dir, By: docstore.Author{By: "agent:sync", For: "person:ana"}, Say: say}
	if viaHTTP {
		y.Space = &filesync.Remote{URL: tm.url, Token: token, Space: "personal"}
	}
	quiet := false
	for range 10 {
		rep, err := y.Once(ctx)
		if err != nil {
			t.Fatalf("a pass after the torture: %v\nsaid: %s\nthe sync said: %s", err, say, sayings.String())
		}
		if !rep.Changed() {
			quiet = true
			break
		}
	}
	if !quiet {
		t.Fatalf("the sync did not quiesce in 10 passes\nsaid: %s", say)
	}

	// Every file is its document; no markers.
	var st filesync.State
	raw, err := os.ReadFile(filepath.Join(dir, ".compass", "sync-personal.json"))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(raw, &st)
	docs := check[[]docstore.Document](t)(docstore.ReadIn(ctx, s, (*docstore.Reader).Documents))
	live := 0
	for _, d := range docs {
		if d.Deleted == nil {
			live++
		}
	}
	onDisk := 0
	var paths []string // the files, relative to dir
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && !strings.Contains(p, "/.") {
			onDisk++
			rel, _ := filepath.Rel(dir, p)
			paths = append(paths, filepath.ToSlash(rel))
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, []byte("<<<<<<<")) || bytes.Contains(b, []byte(">>>>>>>")) {
				t.Errorf("%s holds conflict markers", p)
			}
		}
		return nil
	})
	if onDisk != live || len(st.Docs) != live {
		t.Errorf("%d files, %d documents not deleted, %d in the sync's state: %s\nthe syncs said: %s\nthe quiescing passes said: %s",
			onDisk, live, len(st.Docs), disagree(paths, docs, st), sayings.String(), say)
	}
	texts := map[string]string{} // id → latest text
	for id, e := range st.Docs {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.Path)))
		if err != nil {
			t.Errorf("%s (%s): %v", e.Path, id, err)
			continue
		}
		var v docstore.Version
		s.View(ctx, func(r *docstore.Reader) (err error) { _, v, err = r.Read(id, 0); return err })
		if string(b) != v.Text {
			t.Errorf("%s is not its document %s's text:\nfile %q\ndoc  %q", e.Path, id, b, v.Text)
		}
		texts[id] = v.Text
	}
	// Every acknowledged agent line: in its document's text (deleted documents are kept
	// whole, restorable) or in an open proposal of it.
	lost := 0
	for line, id := range acked {
		text, ok := texts[id]
		if !ok { // deleted: its latest text, kept whole
			text = latestText(ctx, s, id)
		}
		if strings.Contains(text, line) || inOpenProposal(ctx, s, id, line) {
			continue
		}
		lost++
		if lost < 5 {
			t.Errorf("agent's acknowledged %q is not in document %s nor in an open proposal", line, id)
		}
	}
	// Every line the editor saved is in a document (it never saves into a file it deletes).
	for line := range saved {
		in := false
		for _, text := range texts {
			if strings.Contains(text, line+"\n") {
				in = true
				break
			}
		}
		if !in {
			lost++
			if lost < 5 {
				t.Errorf("the editor's saved %q is in no document", line)
			}
		}
	}
	// No document lost or duplicated: each seed line is in exactly one live document.
	for i := range files {
		for _, seed := range []string{fmt.Sprintf("seed-%d\n", i), fmt.Sprintf("seed-a%d\n", i%3)} {
			n := 0
			for _, text := range texts {
				if strings.Contains(text, seed) {
					n++
				}
			}
			if n != 1 {
				var in []string
				for id, text := range texts {
					if strings.Contains(text, seed) {
						in = append(in, st.Docs[id].Path+" ("+id+")")
					}
				}
				t.Errorf("%q is in %d documents, want 1: %v\nthe syncs said: %s\nthe quiescing passes said: %s", seed, n, in, sayings.String(), say)
			}
		}
	}
	proposals := 0 // the agents' sides of clashes: a kill at the wrong moment made more, once
	for id := range texts {
		s.View(ctx, func(r *docstore.Reader) error {
			_, ps, err := r.Proposals(id, 0, 1000)
			for _, p := range ps {
				if p.Status == docstore.StatusOpen {
					proposals++
				}
			}
			return err
		})
	}
	t.Logf("%s: %d agent writes, %d editor saves, %d kills, %d documents, %d files, %d open proposals", tortureFor(t), len(acked), len(saved), restarts, live, onDisk, proposals)
}

// disagree says which files no state entry has, which entries no file or live document
// has, and which live documents no entry has.
func disagree(paths []string, docs []docstore.Document, st filesync.State) string {
	var out []string
	byPath := map[string]string{}
	for id, e := range st.Docs {
		byPath[e.Path] = id
	}
	for _, p := range paths {
		if byPath[p] == "" {
			out = append(out, fmt.Sprintf("file %s: in no entry", p))
		}
	}
	onDisk := map[string]bool{}
	for _, p := range paths {
		onDisk[p] = true
	}
	byID := map[string]docstore.Document{}
	for _, d := range docs {
		byID[d.ID] = d
	}
	for id, e := range st.Docs {
		d, ok := byID[id]
		switch {
		case !onDisk[e.Path]:
			out = append(out, fmt.Sprintf("entry %s (%s): no file", e.Path, id))
		case !ok:
			out = append(out, fmt.Sprintf("entry %s (%s): no document", e.Path, id))
		case d.Deleted != nil:
			out = append(out, fmt.Sprintf("entry %s (%s): its document %q is deleted", e.Path, id, d.Title))
		}
	}
	for _, d := range docs {
		if _, ok := st.Docs[d.ID]; !ok && d.Deleted == nil {
			out = append(out, fmt.Sprintf("document %q (%s): in no entry", d.Title, d.ID))
		}
	}
	return strings.Join(out, "; ")
}

func latestText(ctx context.Context, s *docstore.Store, id string) string {
	var text string
	s.Walk(ctx, id, func(v docstore.Version) error {
		if text == "" {
			text = v.Text
		}
		return fmt.Errorf("enough")
	})
	return text
}

func inOpenProposal(ctx context.Context, s *docstore.Store, id, line string) bool {
	found := false
	s.View(ctx, func(r *docstore.Reader) error {
		found = false
		_, ps, err := r.Proposals(id, 0, 1000)
		if err != nil {
			return nil
		}
		for _, p := range ps {
			if p.Status != docstore.StatusOpen {
				continue
			}
			if _, full, _, err := r.Proposal(id, p.Number); err == nil && strings.Contains(full.Text, line) {
				found = true
			}
		}
		return nil
	})
	return found
}

// lockedWriter writes what sync n says into a buffer all syncs share, each write after
// the time since it started.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
	n  int
	t0 time.Time
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "[%d +%dms] %s", l.n, time.Since(l.t0).Milliseconds(), b)
	return len(b), nil
}

package web

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"go.etcd.io/bbolt"
)

// The page's figures in docs/PERFORMANCE.md come from these (go run ./internal/cmd/bench runs them):
//
//	go test -run '^$' -bench . -benchmem ./web

// markdownOf makes about size bytes of Markdown of the kinds people and agents write:
// headings, paragraphs with emphasis and links, lists, task lists, tables and code.
func markdownOf(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "## Part %d\n\nThe *launch* needs the **trailer** recorded, see [the plan](http://127.0.0.1:7411/document/01M8PGKZD91FPDJN4QQFFR0WBP) and https://example.com/notes/%d for more.\n\n", i, i)
		fmt.Fprintf(&b, "- [x] book the studio for week %d\n- [ ] write the script\n- review `draft-%d.md` with Ana\n\n", i, i)
		fmt.Fprintf(&b, "| step | who | when |\n|---|---|---|\n| trailer | Ana | week %d |\n| course page | north | week %d |\n\n", i, i+1)
		fmt.Fprintf(&b, "```go\nfunc part%d() string { return \"<script>not run</script>\" }\n```\n\n", i)
	}
	return b.String()
}

// benchSite is a page on a fresh data file filled by fill (through a bbolt handle that
// doesn't sync, to be quick), with a signed-in cookie.
func benchSite(b *testing.B, fill func(*docstore.Store)) (*Site, *http.Cookie, *bolt.File) {
	b.Helper()
	ctx := b.Context()
	path := filepath.Join(b.TempDir(), "compass.db")
	raw, err := bbolt.Open(path, 0o600, &bbolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	fill(docstore.New(bolt.Wrap(raw), "personal"))
	raw.Close()
	db, err := bolt.OpenFile(path, bolt.DefaultTimeout, bolt.DefaultIdle)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	site, err := New(ctx, db, Config{Space: "personal", Me: "ana", Path: path})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(site.Close)
	code, err := access.New(db).NewSignInCode(ctx, "ana", "personal", "/")
	if err != nil {
		b.Fatal(err)
	}
	w := httptest.NewRecorder()
	site.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/signin?code="+code, nil))
	cookies := w.Result().Cookies()
	if len(cookies) != 1 {
		b.Fatalf("signing in: %d %s", w.Code, w.Body)
	}
	return site, cookies[0], db
}

func get(b *testing.B, site *Site, cookie *http.Cookie, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil)
	req.AddCookie(cookie)
	w := httptest.NewRecorder()
	site.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		b.Fatalf("GET %s: %d", path, w.Code)
	}
	return w
}

// BenchmarkDocumentPage is the server's time to answer /document/{id}: read the latest
// version, render its Markdown, sanitize it, fill the template. cold renders the version
// every time (its first view); warm finds its HTML kept from an earlier view. It runs with
// the garbage collector's target the server sets (cmd/compass-mcp/gc.go: 400, unless GOGC
// is set), since that is the time the server takes; at Go's default (100) a cold 100 KB
// page took 9.7–10.3 ms against 7.8–8.6 ms, on the same quiet machine.
func BenchmarkDocumentPage(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(serverGC))
	}
	for _, size := range []struct {
		name  string
		bytes int
	}{{"100KB", 100_000}, {"1MB", 1_000_000}} {
		for _, warm := range []bool{false, true} {
			name := size.name + "/cold"
			if warm {
				name = size.name + "/warm"
			}
			b.Run(name, func(b *testing.B) {
				var id string
				site, cookie, _ := benchSite(b, func(s *docstore.Store) {
					saved, err := s.Create(b.Context(), "Launch plan", markdownOf(size.bytes), docstore.KindWrite, agent)
					if err != nil {
						b.Fatal(err)
					}
					id = saved.Document.ID
				})
				b.SetBytes(int64(size.bytes))
				if warm {
					get(b, site, cookie, "/document/"+id)
				}
				b.ResetTimer()
				cpu := testbin.ProcessCPU()
				for b.Loop() {
					if !warm {
						site.html = newRenderCache(64 << 20)
					}
					get(b, site, cookie, "/document/"+id)
				}
				reportCPU(b, cpu)
			})
		}
	}
}

// serverGC is the garbage collector's target a compass-mcp server runs with
// (transport.ServerGC).
const serverGC = 400

// BenchmarkList is the server's time to answer / (the first page of the list) with 100
// and with 10,000 documents: paged, it should cost the same.
func BenchmarkList(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := b.Context()
			site, cookie, _ := benchSite(b, func(s *docstore.Store) {
				// Many writers at once, so that bbolt's Batch commits them together.
				var wg sync.WaitGroup
				errs := make(chan error, 1)
				for w := range 100 {
					wg.Go(func() {
						for i := w; i < n; i += 100 {
							if _, err := s.Create(ctx, fmt.Sprintf("Document %05d", i), "# Notes\n\nSome text to open with.\n", docstore.KindWrite, agent); err != nil {
								select {
								case errs <- err:
								default:
								}
								return
							}
						}
					})
				}
				wg.Wait()
				select {
				case err := <-errs:
					b.Fatal(err)
				default:
				}
			})
			b.ResetTimer()
			cpu := testbin.ProcessCPU()
			for b.Loop() {
				get(b, site, cookie, "/")
			}
			reportCPU(b, cpu)
		})
	}
}

// reportCPU reports the process's CPU time per operation since start, in ms.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((testbin.ProcessCPU()-start).Microseconds())/float64(b.N)/1000, "cpu-ms/op")
}

// BenchmarkLiveUpdate is how long after an agent's save is acknowledged (Write returned)
// an open page's event stream carries the new version: ms/update is the mean, max-ms the
// slowest. The save goes through the data file as another process's would; the page
// learns of it by watching the file, not by being told.
func BenchmarkLiveUpdate(b *testing.B) {
	ctx := b.Context()
	var id string
	site, cookie, db := benchSite(b, func(s *docstore.Store) {
		saved, err := s.Create(ctx, "Launch plan", "one\n", docstore.KindWrite, agent)
		if err != nil {
			b.Fatal(err)
		}
		id = saved.Document.ID
	})
	docs := docstore.New(db, "personal")
	reportLive(b, follow(b, site, cookie, id, 1, func(int) bool { return b.Loop() }, func(i int) {
		if _, err := docs.Append(ctx, id, fmt.Sprintf("line %d", i), agent); err != nil {
			b.Fatal(err)
		}
	}))
}

// follow opens site's event stream of document id, known at version known, and then, for
// each round i that more allows, saves a version by save(i) and waits for its event. It
// returns how long each event came after its save returned.
func follow(tb testing.TB, site *Site, cookie *http.Cookie, id string, known int, more func(i int) bool, save func(i int)) []time.Duration {
	tb.Helper()
	srv := httptest.NewServer(site)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/document/%s/events?version=%d", srv.URL, id, known), nil)
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("events: %d", resp.StatusCode)
	}
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
		close(events)
	}()
	var took []time.Duration
	for i := 0; more(i); i++ {
		save(i)
		acked := time.Now()
		select {
		case ev, ok := <-events:
			if !ok {
				tb.Fatal("the event stream ended")
			}
			if !strings.Contains(ev, fmt.Sprintf(`"version":%d`, known+i+1)) {
				tb.Fatalf("event %s, want version %d", ev, known+i+1)
			}
		case <-time.After(5 * time.Second):
			tb.Fatalf("no event within 5 s of save %d", i+1)
		}
		took = append(took, time.Since(acked))
	}
	return took
}

// reportLive reports the mean (ms/update) and the slowest (max-ms) of took.
func reportLive(b *testing.B, took []time.Duration) {
	mean, worst := meanMax(took)
	b.ReportMetric(mean, "ms/update")
	b.ReportMetric(worst, "max-ms")
}

// meanMax is the mean and the largest of ds, in ms.
func meanMax(ds []time.Duration) (mean, worst float64) {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return float64(sum.Microseconds()) / float64(len(ds)) / 1000, float64(slices.Max(ds).Microseconds()) / 1000
}

// BenchmarkBlamePage is one page (BlameLines lines) of the blame of a 20,000-line document
// that grew by 1,000 appends: cold works the blame out for every page, as every page did
// before issue 34; window is the pages after the first, the version's blame kept
// (blameCache), so a page costs its window.
//
//	go test -run '^$' -bench BenchmarkBlamePage -benchtime 20x ./web
func BenchmarkBlamePage(b *testing.B) {
	for _, warm := range []bool{false, true} {
		name := "cold"
		if warm {
			name = "window"
		}
		b.Run(name, func(b *testing.B) {
			var id string
			site, cookie, _ := benchSite(b, func(s *docstore.Store) {
				var text strings.Builder
				for i := range 19000 {
					fmt.Fprintf(&text, "line %d of the plan, as it was first written\n", i+1)
				}
				saved, err := s.Create(b.Context(), "Long plan", text.String(), docstore.KindWrite, agent)
				if err != nil {
					b.Fatal(err)
				}
				id = saved.Document.ID
				for i := range 1000 {
					if _, err := s.Append(b.Context(), id, fmt.Sprintf("appended %d", i+1), agent); err != nil {
						b.Fatal(err)
					}
				}
			})
			get(b, site, cookie, "/document/"+id+"/blame")
			b.ResetTimer()
			cpu := testbin.ProcessCPU()
			i := 0
			for b.Loop() {
				if !warm {
					site.blames = newBlameCache(64 << 20)
				}
				i++
				get(b, site, cookie, fmt.Sprintf("/document/%s/blame?from=%d", id, 1+(i%10)*BlameLines))
			}
			reportCPU(b, cpu)
		})
	}
}

package oauth

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
)

// The figures in docs/HTTP.md (unauthenticated requests) come from:
//
//	go test -run '^$' -bench WriteBesideBogusTokens -benchtime 300x ./oauth
//
// BenchmarkWriteBesideBogusTokens is how long one write transaction takes on the store (an
// authorised append's commit) while 8 clients post made-up codes and refresh tokens to
// /token, 1,600 a second between them (the load: 1,585 a second), over loopback:
// from one address, or each from an address of its own (X-Forwarded-For, as a reverse
// proxy on the same machine would say), and, for comparison, with no such clients.
// ms/write is the median, p99-ms the 99th percentile; bogus/s is how many made-up requests
// the server answered a second, and their-writes/s the write transactions they cost.
func BenchmarkWriteBesideBogusTokens(b *testing.B) {
	for _, load := range []struct {
		name    string
		clients int
		spread  bool
	}{{"quiet", 0, false}, {"bogus-one-address", 8, false}, {"bogus-many-addresses", 8, true}} {
		b.Run(load.name, func(b *testing.B) {
			var w *writes
			h := newHarness(b, func(c *Config) { w = &writes{DB: c.DB}; c.DB = w })
			var (
				answered atomic.Int64
				stop     = make(chan struct{})
				wg       sync.WaitGroup
				// under has a token from each client at its first answer.
				under = make(chan struct{}, load.clients)
			)
			for c := range load.clients {
				wg.Go(func() {
					hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
					pace := time.NewTicker(time.Second / 200)
					defer pace.Stop()
					for i, said := 0, false; ; i++ {
						select {
						case <-stop:
							return
						case <-pace.C:
						}
						form := url.Values{"grant_type": {"authorization_code"}, "client_id": {"cmc_madeup"},
							"code": {fmt.Sprintf("madeup-%d-%d", c, i)}, "code_verifier": {strings.Repeat("v", 43)}}
						if i%2 == 1 {
							form = url.Values{"grant_type": {"refresh_token"}, "client_id": {"cmc_madeup"}, "refresh_token": {fmt.Sprintf("cmr_madeup-%d-%d", c, i)}}
						}
						req, _ := http.NewRequest("POST", h.url+"/token", strings.NewReader(form.Encode()))
						req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
						if load.spread {
							req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.51.%d.%d", c, i%250+1))
						}
						resp, err := hc.Do(req)
						if err != nil {
							continue
						}
						resp.Body.Close()
						answered.Add(1)
						if !said {
							under <- struct{}{}
							said = true
						}
					}
				})
			}
			// The load under way: every client has been answered.
			deadline := time.After(10 * time.Second)
			for range load.clients {
				select {
				case <-under:
				case <-deadline:
					close(stop)
					wg.Wait()
					b.Fatalf("%d clients posting to /token: not all of them answered within 10 s", load.clients)
				}
			}
			var took []time.Duration
			start, before, wrote := time.Now(), answered.Load(), w.n.Load()
			value := []byte(strings.Repeat("an appended line ", 6))
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				err := w.Update(b.Context(), func(tx kv.Tx) error {
					bk, err := tx.CreateBucketIfNotExists([]byte("bench"))
					if err != nil {
						return err
					}
					return bk.Put(fmt.Appendf(nil, "%08d", i), value)
				})
				if err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
			}
			secs := time.Since(start).Seconds()
			bogus := float64(answered.Load()-before) / secs
			theirs := (float64(w.n.Load()-wrote) - float64(len(took))) / secs
			close(stop)
			wg.Wait()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms/write")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(bogus, "bogus/s")
			b.ReportMetric(theirs, "their-writes/s")
		})
	}
}

// writes counts the write transactions on a store.
type writes struct {
	kv.DB
	n atomic.Int64
}

func (w *writes) Update(ctx context.Context, fn func(kv.Tx) error) error {
	w.n.Add(1)
	return w.DB.Update(ctx, fn)
}

func (w *writes) Batch(ctx context.Context, fn func(kv.Tx) error) error {
	w.n.Add(1)
	return w.DB.Batch(ctx, fn)
}

// What can be refused with a read is: a made-up code, refresh token or client, and a
// registration that isn't one, cost /token and /register no write transaction (1,585 of
// them a second took an authorised append from 1.5 ms to 5 ms, and on PostgreSQL each took
// the store's write lock). A real code and a real registration still write.
func TestRefusalsDontWrite(t *testing.T) {
	var w *writes
	h := newHarness(t, func(c *Config) { w = &writes{DB: c.DB}; c.DB = w })
	a, verifier := h.loopbackClient()
	code := h.code(a, "launch")
	status, tokens := h.exchange(a, code, verifier)
	if status != http.StatusOK {
		t.Fatalf("exchange: %d %v", status, tokens)
	}
	post := func(path, contentType, body string) int {
		req, _ := http.NewRequest("POST", h.url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		status, _, _ := h.do(req)
		return status
	}
	form := "application/x-www-form-urlencoded"
	before := w.n.Load()
	for _, tc := range []struct {
		name, path, contentType, body string
		want                          int
	}{
		{"a made-up code", "/token", form, url.Values{"grant_type": {"authorization_code"}, "client_id": {a.client}, "code": {"made-up"}, "code_verifier": {verifier}}.Encode(), http.StatusBadRequest},
		{"a made-up client", "/token", form, url.Values{"grant_type": {"authorization_code"}, "client_id": {"cmc_nobody"}, "code": {"made-up"}, "code_verifier": {verifier}}.Encode(), http.StatusBadRequest},
		{"a made-up refresh token", "/token", form, url.Values{"grant_type": {"refresh_token"}, "client_id": {a.client}, "refresh_token": {"cmr_madeup"}}.Encode(), http.StatusBadRequest},
		{"a real refresh token, another client", "/token", form, url.Values{"grant_type": {"refresh_token"}, "client_id": {"cmc_other"}, "refresh_token": {str(tokens, "refresh_token")}}.Encode(), http.StatusBadRequest},
		{"a real refresh token, another resource", "/token", form, url.Values{"grant_type": {"refresh_token"}, "client_id": {a.client}, "refresh_token": {str(tokens, "refresh_token")}, "resource": {"https://elsewhere.example/"}}.Encode(), http.StatusBadRequest},
		{"no grant type", "/token", form, url.Values{"client_id": {a.client}}.Encode(), http.StatusBadRequest},
		{"a registration that isn't JSON", "/register", "application/json", "{redirect_uris", http.StatusBadRequest},
		{"a registration with a bad redirect", "/register", "application/json", `{"redirect_uris":["http://evil.example/cb"]}`, http.StatusBadRequest},
	} {
		if got := post(tc.path, tc.contentType, tc.body); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
		if n := w.n.Load() - before; n != 0 {
			t.Errorf("%s: %d write transactions, want none", tc.name, n)
		}
		before = w.n.Load()
	}
	// The real refresh token still works, and writes.
	if status, m := h.refresh(a.client, str(tokens, "refresh_token")); status != http.StatusOK {
		t.Fatalf("the real refresh token after the refusals: %d %v", status, m)
	}
	if w.n.Load() == before {
		t.Error("a refresh wrote nothing")
	}
}

package web

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/embedtest"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/semantic"
)

// The documents list says whether search by meaning is on for the agents' searches: off;
// on with its endpoint (the credentials in its URL redacted) and model, the space's index
// not started yet; then how many documents of the space are embedded of how many, and the
// endpoint's failure, redacted and escaped.
func TestMeaningOnThePage(t *testing.T) {
	off := newFixture(t)
	c := off.client()
	off.signIn(c, "/")
	if got := body(t, off.get(c, "/")); !strings.Contains(got, `<p class="quiet meaning" id="meaning">Search by meaning is off for this server's agents`) {
		t.Errorf("the list of a server without the tier doesn't say it is off:\n%s", got)
	}

	var failing atomic.Bool
	endpoint := embedtest.New(t, func(i int, _ string) []float64 { return []float64{1, float64(i + 1), 0.5} })
	endpoint.Answer(func(w http.ResponseWriter, _ *http.Request, _ []string) bool {
		if failing.Load() {
			http.Error(w, "<b>busy</b>, hunter2", http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	url := "http://ana:hunter2@" + endpoint.Host() + "/v1"
	var tier *semantic.Tier
	f := newFixtureWith(t, func(db kv.DB, cfg *Config) {
		o := semantic.Options{Interval: time.Millisecond, Backoff: time.Millisecond, Tries: 1}
		tier = semantic.NewTier(context.Background(), db, &semantic.Client{URL: url, Model: "tiny", Timeout: 5 * time.Second}, o, false)
		cfg.Semantic = tier
	})
	for _, title := range []string{"Copper", "Bread"} {
		if _, err := f.docs.Create(t.Context(), title, title+" is a word.", "write", agent); err != nil {
			t.Fatal(err)
		}
	}
	c = f.client()
	f.signIn(c, "/")
	shown := "http://***@" + endpoint.Host() + "/v1"
	page := body(t, f.get(c, "/"))
	if want := "Search by meaning is on for the agents' searches: model tiny at " + shown + ".\nThis space's index starts when an agent first searches or changes it."; !strings.Contains(page, want) {
		t.Errorf("before any search the list lacks %q:\n%s", want, page)
	}
	if _, started := tier.Progress("personal"); started {
		t.Errorf("showing the page started the space's index")
	}

	ix := tier.Space("personal") // as an agent's first search or change does
	if err := ix.Update(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	page = body(t, f.get(c, "/"))
	if want := "2 of 2 documents of this space embedded (2 passages, 3 dimensions), counted <time"; !strings.Contains(page, want) {
		t.Errorf("after a pass the list lacks %q:\n%s", want, page)
	}

	if _, err := f.docs.Create(t.Context(), "Tea", "Tea is a word.", "write", agent); err != nil {
		t.Fatal(err)
	}
	failing.Store(true)
	if err := ix.Update(t.Context(), nil); err == nil {
		t.Fatal("a pass with the endpoint failing did not fail")
	}
	page = body(t, f.get(c, "/"))
	for _, want := range []string{"2 of 3 documents of this space embedded", "The endpoint failed: ", "&lt;b&gt;busy&lt;/b&gt;", "Until it answers, the agents' searches match words only."} {
		if !strings.Contains(page, want) {
			t.Errorf("after a failed pass the list lacks %q:\n%s", want, page)
		}
	}
	for _, secret := range []string{"hunter2", "ana:", "<b>busy"} {
		if strings.Contains(page, secret) {
			t.Errorf("the list shows %q:\n%s", secret, page)
		}
	}
}

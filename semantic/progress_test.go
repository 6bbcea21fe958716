package semantic_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/semantic"
)

// Progress says from memory what the last pass counted: nothing before one, the same as
// Status after one, and, when the endpoint fails part way, the documents embedded so far
// and the failure (the key never in it).
func TestProgressIsWhatTheLastPassCounted(t *testing.T) {
	f := newFake(t, 8)
	db, space, s := fresh(t, "progress")
	create(t, s, "Copper", "copper lantern")
	create(t, s, "Bread", "sourdough starter")
	c := &semantic.Client{URL: f.URL(), Model: "fake", Key: "s3cret-key", Timeout: 200 * time.Millisecond}
	ix := semantic.NewIndex(db, space, c, opts(quiet()))
	if p := ix.Progress(); !p.Counted.IsZero() || p.Documents != 0 || p.Model != "fake" {
		t.Fatalf("progress before any pass: %+v", p)
	}
	if err := ix.Update(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	st, err := ix.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p := ix.Progress()
	if p.Counted.IsZero() || p.Documents != 2 || p.Embedded != 2 || p.Passages != st.Passages || p.Dims != 8 || p.Down != "" {
		t.Fatalf("progress after a pass: %+v; status %+v", p, st)
	}
	create(t, s, "Tea", "green tea")
	f.Answer(func(w http.ResponseWriter, _ *http.Request, _ []string) bool {
		http.Error(w, "busy s3cret-key", http.StatusServiceUnavailable)
		return true
	})
	if err := ix.Update(t.Context(), nil); err == nil {
		t.Fatal("a pass with the endpoint failing did not fail")
	}
	p = ix.Progress()
	if p.Documents != 3 || p.Embedded != 2 || p.Down == "" || strings.Contains(p.Down, "s3cret-key") {
		t.Fatalf("progress after a failed pass: %+v", p)
	}
}

// The endpoint as a page shows it: no user info, no query values, no key.
func TestEndpointIsRedacted(t *testing.T) {
	for _, tc := range []struct{ url, key, want string }{
		{"http://127.0.0.1:11434/v1", "", "http://127.0.0.1:11434/v1"},
		{"https://ana:hunter2@127.0.0.1/v1?api_key=abc&x=1#frag", "", "https://***@127.0.0.1/v1?api_key=***&x=***"},
		{"http://token@127.0.0.1/v1", "", "http://***@127.0.0.1/v1"},
		{"http://127.0.0.1/s3cret-key/v1", "s3cret-key", "http://127.0.0.1/***/v1"},
		{"http://[::1", "", "(a URL that does not parse)"},
	} {
		c := &semantic.Client{URL: tc.url, Key: tc.key}
		if got := c.Endpoint(); got != tc.want {
			t.Errorf("Endpoint of %q: %q, want %q", tc.url, got, tc.want)
		}
	}
	c := &semantic.Client{URL: "https://ana:hunter2@127.0.0.1/v1", Key: "k3y"}
	for _, msg := range []string{`Post "https://ana:***@127.0.0.1/v1/embeddings": refused k3y`, "https://ana:xxxxx@127.0.0.1/v1", "https://ana:hunter2@127.0.0.1/v1"} {
		if got := c.Redact(msg); strings.Contains(got, "ana") || strings.Contains(got, "hunter2") || strings.Contains(got, "k3y") {
			t.Errorf("Redact(%q) = %q", msg, got)
		}
	}
}

// During a pass, Progress counts the documents embedded so far, a group at a time: what
// the page shows while a large space is embedded.
func TestProgressDuringAPass(t *testing.T) {
	f := newFake(t, 8)
	db, space, s := fresh(t, "progress-groups")
	for i := range 40 {
		create(t, s, fmt.Sprintf("Note %d", i), fmt.Sprintf("note number %d", i))
	}
	c := &semantic.Client{URL: f.URL(), Model: "fake", Timeout: 10 * time.Second}
	ix := semantic.NewIndex(db, space, c, opts(quiet()))
	var seen []string
	if err := ix.Update(t.Context(), func(done, total int) {
		p := ix.Progress()
		seen = append(seen, fmt.Sprintf("%d/%d: %d of %d", done, total, p.Embedded, p.Documents))
	}); err != nil {
		t.Fatal(err)
	}
	want := "0/40: 0 of 40, 16/40: 16 of 40, 32/40: 32 of 40, 40/40: 40 of 40"
	if got := strings.Join(seen, ", "); got != want {
		t.Errorf("progress during a pass: %s, want %s", got, want)
	}
	st, err := ix.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if p := ix.Progress(); p.Embedded != st.Embedded || p.Passages != st.Passages {
		t.Errorf("progress after the pass %+v, status %+v", p, st)
	}
}

package web

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
)

// The blame page shows every line with the version that last changed it, a run a version,
// linked to its diff, the author's runs marked; a long text is shown a page at a time.
func TestBlamePage(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	saved, err := f.docs.Create(ctx, "Launch plan", "# Plan\nRecord the <trailer>.\nReview the page.\n", docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	id := saved.Document.ID
	if _, err := f.docs.Save(ctx, id, 0, "# Plan\nRecord the <trailer> on Tuesday.\nReview the page.\n", docstore.Author{By: "person:ana"}, linediff.Clash); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	f.signIn(c, "/")
	doc := body(t, f.get(c, "/document/"+id))
	if !strings.Contains(doc, `href="/document/`+id+`/blame"`) {
		t.Errorf("the document doesn't link its blame:\n%s", doc)
	}
	resp := f.get(c, "/document/"+id+"/blame")
	got := body(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("blame: %d\n%s", resp.StatusCode, got)
	}
	for _, want := range []string{
		`data-version="1"`, `data-version="2"`,
		`href="/document/` + id + `/diff?from=1&amp;to=2">v2</a> save`,
		`href="/document/` + id + `/diff?from=0&amp;to=1">v1</a> write`,
		"north for Ana", ">Ana<",
		"Record the &lt;trailer&gt; on Tuesday.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the blame page lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "<tbody class=\"run") != 3 || strings.Count(got, "mark1") != 1 {
		t.Errorf("want three runs, the middle one marked as another author's:\n%s", got)
	}

	var text strings.Builder
	for i := range BlameLines + 10 {
		fmt.Fprintf(&text, "line %d\n", i+1)
	}
	long, err := f.docs.Create(ctx, "Long", text.String(), docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	first := body(t, f.get(c, "/document/"+long.Document.ID+"/blame"))
	if strings.Count(first, `<td class="n">`) != BlameLines || !strings.Contains(first, fmt.Sprintf("blame?from=%d", BlameLines+1)) {
		t.Errorf("the first page of a long blame has %d lines", strings.Count(first, `<td class="n">`))
	}
	second := body(t, f.get(c, fmt.Sprintf("/document/%s/blame?from=%d", long.Document.ID, BlameLines+1)))
	if strings.Count(second, `<td class="n">`) != 10 || !strings.Contains(second, "line 2010") || !strings.Contains(second, "blame?from=1") {
		t.Errorf("the second page has %d lines", strings.Count(second, `<td class="n">`))
	}
	// The second page, and the first again, reused the blame the first worked out: one
	// blame of the version, not one a page (issue 34). A new version is worked out anew.
	body(t, f.get(c, "/document/"+long.Document.ID+"/blame"))
	worked := func() int { f.site.blames.mu.Lock(); defer f.site.blames.mu.Unlock(); return f.site.blames.worked }
	if got := worked(); got != 2 { // the first document's, and Long's
		t.Errorf("%d blames worked out for two documents' pages, want 2", got)
	}
	if _, err := f.docs.Append(ctx, long.Document.ID, "one more line", agent); err != nil {
		t.Fatal(err)
	}
	if page := body(t, f.get(c, fmt.Sprintf("/document/%s/blame?from=%d", long.Document.ID, BlameLines+1))); !strings.Contains(page, "one more line") || worked() != 3 {
		t.Errorf("after a new version: %d blames worked out, the page:\n%s", worked(), page)
	}
	// Four viewers of a new version at once: one blame worked out, the others wait for it.
	if _, err := f.docs.Append(ctx, long.Document.ID, "and another", agent); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	pages := make([]string, 4)
	for i := range pages {
		wg.Go(func() {
			resp, err := c.Get(fmt.Sprintf("%s/document/%s/blame?from=%d", f.srv.URL, long.Document.ID, 1+i%2*BlameLines))
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				pages[i] = string(b)
			}
		})
	}
	wg.Wait()
	if got := worked(); got != 4 || !strings.Contains(pages[1], "and another") || !strings.Contains(pages[0], "line 1<") {
		t.Errorf("four viewers of one new version: %d blames worked out in all, want 4", got)
	}
	if resp := f.get(c, "/document/01JDX0000000000000000000000/blame"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("blame of no document: %d", resp.StatusCode)
	}
}

// A history is shown HistoryPage versions a page, newest first, each page linking the
// newer and older ones: a document of 50,000 versions was one 19 MB page (issue 34); a
// page now reads and shows its own versions, about 100 KB whatever the history's length.
func TestHistoryIsPaged(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	saved, err := f.docs.Create(ctx, "Log", "# Log\n", docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	id := saved.Document.ID
	total := 2*HistoryPage + 50
	for i := 2; i <= total; i++ {
		if _, err := f.docs.Append(ctx, id, fmt.Sprintf("entry %d", i), agent); err != nil {
			t.Fatal(err)
		}
	}
	c := f.client()
	f.signIn(c, "/").Body.Close()
	rows := regexp.MustCompile(`/diff\?from=(\d+)&amp;to=(\d+)"`)
	page := func(path string) (first, last, n int, html string) {
		t.Helper()
		resp := f.get(c, path)
		html = body(t, resp)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		if len(html) > 256<<10 {
			t.Errorf("%s is %d bytes, over 256 KB", path, len(html))
		}
		all := rows.FindAllStringSubmatch(html, -1)
		if len(all) == 0 {
			return 0, 0, 0, html
		}
		first, _ = strconv.Atoi(all[0][2])
		last, _ = strconv.Atoi(all[len(all)-1][2])
		return first, last, len(all), html
	}
	base := "/document/" + id + "/history"
	first, last, n, html := page(base)
	if first != total || last != total-HistoryPage+1 || n != HistoryPage || !strings.Contains(html, fmt.Sprintf(`history?before=%d" rel="next"`, last)) || strings.Contains(html, `rel="prev"`) {
		t.Fatalf("the first page: versions %d to %d (%d rows):\n%s", first, last, n, html)
	}
	first, last, n, html = page(fmt.Sprintf("%s?before=%d", base, last))
	if first != total-HistoryPage || last != total-2*HistoryPage+1 || n != HistoryPage || !strings.Contains(html, `href="`+base+`" rel="prev"`) || !strings.Contains(html, fmt.Sprintf(`history?before=%d" rel="next"`, last)) {
		t.Fatalf("the second page: versions %d to %d (%d rows):\n%s", first, last, n, html)
	}
	first, last, n, html = page(fmt.Sprintf("%s?before=%d", base, last))
	if first != 50 || last != 1 || n != 50 || strings.Contains(html, `rel="next"`) || !strings.Contains(html, fmt.Sprintf(`history?before=%d" rel="prev"`, 50+HistoryPage+1)) {
		t.Fatalf("the last page: versions %d to %d (%d rows):\n%s", first, last, n, html)
	}
	// Out of range, or not a number: no rows, or the first page; never an error.
	if _, _, n, _ := page(base + "?before=1"); n != 0 {
		t.Errorf("before=1: %d rows", n)
	}
	if first, _, _, _ := page(base + "?before=-5"); first != total {
		t.Errorf("before=-5: starts at %d", first)
	}
	if first, _, _, _ := page(base + "?before=99999999999999999999"); first != total {
		t.Errorf("a huge before: starts at %d", first)
	}
}

package web

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
)

const reviewedPlan = "# Plan\n\nRecord the trailer.\nReview the page.\n\nBook the studio.\n"

// staying is a signed-in browser that shows where a form sends it instead of going.
func staying(c *http.Client) *http.Client {
	n := *c
	n.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &n
}

// The person's side of proposals on the page: the banner, a proposal against its base and
// against today's text, accept (a version of kind accept), a clash that keeps both sides
// and is settled by a choice, accept after editing, decline with a reason.
func TestProposalsOnThePage(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	made, err := f.docs.Create(ctx, "Plan", reviewedPlan, docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	id := made.Document.ID
	agentDocs := f.docs.Proposing()
	agentDocs.Edit(ctx, id, "Review the page.", "Review the <course> page.", agent)
	agentDocs.Edit(ctx, id, "Book the studio.", "Book the big studio.", agent)
	agentDocs.Edit(ctx, id, "Record the trailer.", "Record the trailer on Monday.", agent)
	c := f.client()
	f.signIn(c, "/")

	doc := body(t, f.get(c, "/document/"+id))
	for _, want := range []string{"<strong>3 changes</strong> wait for your review", `href="/document/` + id + `/proposal/3">change 3</a> · edit by north for Ana`, `data-proposals="3"`} {
		if !strings.Contains(doc, want) {
			t.Errorf("the document's banner lacks %q:\n%s", want, doc)
		}
	}
	// Every page that follows the document's events knows the proposals it shows already, or
	// its script would announce change 3 as news (and move the editor under the cursor).
	for _, path := range []string{"/edit", "/history"} {
		if got := body(t, f.get(c, "/document/"+id+path)); !strings.Contains(got, `data-proposals="3"`) {
			t.Errorf("%s does not know the 3 proposals:\n%s", path, got)
		}
	}
	page := body(t, f.get(c, "/document/"+id+"/proposal/1"))
	for _, want := range []string{"change 1</h1>", "<strong>open</strong>, waiting for Ana's review", "<del>Review the page.</del>", "<ins>Review the &lt;course&gt; page.</ins>", `action="/document/` + id + `/proposal/1/accept"`, `name="why" required`} {
		if !strings.Contains(page, want) {
			t.Errorf("change 1's page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "Against today") {
		t.Errorf("a proposal on the latest version shows a second diff")
	}
	nr := staying(c)
	resp := f.post(nr, "/document/"+id+"/proposal/1/accept", url.Values{})
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "accepted+change+1+as+version+2") {
		t.Fatalf("accept 1: %d %s", resp.StatusCode, loc)
	}
	if got := body(t, f.get(c, "/document/"+id+"/history")); !strings.Contains(got, "accept") || !strings.Contains(got, "north for Ana, accepted by Ana") {
		t.Errorf("the history after accepting:\n%s", got)
	}
	// Ana changes line 3 herself: change 3 (line 3 too) now clashes; 2 merges.
	v, _ := view(t, f.docs, newest(id))
	if _, err := f.docs.Save(ctx, id, 0, strings.Replace(v.Text, "Record the trailer.", "Record the trailer twice.", 1), me(who{Person: "ana"}), linediff.Clash); err != nil {
		t.Fatal(err)
	}
	two := body(t, f.get(c, "/document/"+id+"/proposal/2"))
	if !strings.Contains(two, "Against today's text (version 3)") || !strings.Contains(two, "<ins>Book the big studio.</ins>") {
		t.Errorf("change 2 against today's text:\n%s", two)
	}
	three := body(t, f.get(c, "/document/"+id+"/proposal/3"))
	if !strings.Contains(three, "accepting it as it is clashes") || !strings.Contains(three, "Record the trailer twice.") || !strings.Contains(three, "Record the trailer on Monday.") {
		t.Errorf("change 3's clash:\n%s", three)
	}
	resp = f.post(nr, "/document/"+id+"/proposal/3/accept", url.Values{})
	clash := body(t, resp)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(clash, "Nothing was saved") || !strings.Contains(clash, `action="/document/`+id+`/proposal/3/accept"`) || !strings.Contains(clash, "Keep the proposal's lines") || !strings.Contains(clash, "Record the trailer on Monday.\n") {
		t.Fatalf("accepting 3 over Ana's change: %d\n%s", resp.StatusCode, clash)
	}
	if d, _ := view(t, f.docs, find(id)); d.Version != 3 || d.Review.Open != 2 {
		t.Fatalf("a clash changed something: version %d, %d open", d.Version, d.Review.Open)
	}
	form := url.Values{"text": {strings.Replace(reviewedPlan, "Record the trailer.", "Record the trailer on Monday.", 1)}, "base": {"1"}, "choose": {"mine"}}
	resp = f.post(nr, "/document/"+id+"/proposal/3/accept", form)
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "merged") {
		t.Fatalf("accepting 3, keeping its lines: %d %s\n%s", resp.StatusCode, loc, body(t, resp))
	}
	// The clashing region is lines 3-4 (Ana's line 3, change 1's line 4): the proposal's lines win there.
	if v, _ := view(t, f.docs, newest(id)); !strings.Contains(v.Text, "on Monday.\nReview the page.") || v.Kind != docstore.KindAccept {
		t.Errorf("after choosing the proposal's lines: %s %q", v.Kind, v.Text)
	}
	// Change 2, accepted after editing: the editor holds today's text with it merged in.
	edit := body(t, f.get(c, "/document/"+id+"/proposal/2/edit"))
	if !strings.Contains(edit, "Accepting <a href=\"/document/"+id+"/proposal/2\">change 2</a>") || !strings.Contains(edit, "Book the big studio.") || !strings.Contains(edit, `name="base" value="4"`) {
		t.Fatalf("the editor for change 2:\n%s", edit)
	}
	v, _ = view(t, f.docs, newest(id))
	mine := strings.Replace(v.Text, "Book the studio.", "Book the big studio, at noon.", 1)
	resp = f.post(nr, "/document/"+id+"/proposal/2/accept", url.Values{"text": {mine}, "base": {"4"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("accepting 2 after editing: %d\n%s", resp.StatusCode, body(t, resp))
	}
	if v, _ := view(t, f.docs, newest(id)); v.Text != mine {
		t.Errorf("after editing: %q", v.Text)
	}
	if got := body(t, f.get(c, "/document/"+id+"/proposal/2")); !strings.Contains(got, "accepted by Ana after editing it") {
		t.Errorf("change 2 decided:\n%s", got)
	}
	// Declining needs a reason, and says it on the proposal's page.
	agentDocs.Append(ctx, id, "- a bad idea", agent)
	resp = f.post(nr, "/document/"+id+"/proposal/4/decline", url.Values{"why": {" "}})
	if got := body(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(got, "Nothing was declined") {
		t.Errorf("a decline without a reason: %d\n%s", resp.StatusCode, got)
	}
	resp = f.post(nr, "/document/"+id+"/proposal/4/decline", url.Values{"why": {"Not <now>."}})
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "declined+change+4") {
		t.Fatalf("decline 4: %d %s", resp.StatusCode, loc)
	}
	if got := body(t, f.get(c, "/document/"+id+"/proposal/4")); !strings.Contains(got, "declined by Ana") || !strings.Contains(got, "“Not &lt;now&gt;.”") || strings.Contains(got, `id="accept"`) {
		t.Errorf("change 4 declined:\n%s", got)
	}
	if resp := f.post(nr, "/document/"+id+"/proposal/4/accept", url.Values{}); resp.StatusCode != http.StatusConflict {
		t.Errorf("accepting a declined proposal: %d", resp.StatusCode)
	}
	if resp := f.get(c, "/document/"+id+"/proposal/9"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("change 9: %d", resp.StatusCode)
	}
	if got := body(t, f.get(c, "/document/"+id)); strings.Contains(got, "wait for your review") || strings.Contains(got, "waits for your review") {
		t.Errorf("the banner is there with nothing open:\n%s", got)
	}
}

// Many open proposals: the banner names a few and links the list, which pages.
func TestManyProposalsPage(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	made, _ := f.docs.Create(ctx, "Plan", reviewedPlan, docstore.KindWrite, agent)
	id := made.Document.ID
	for i := range ProposalsPage + 5 {
		if _, err := f.docs.Proposing().Append(ctx, id, fmt.Sprintf("- item %d", i), agent); err != nil {
			t.Fatal(err)
		}
	}
	c := f.client()
	f.signIn(c, "/")
	doc := body(t, f.get(c, "/document/"+id))
	// Each change the banner names has its link, its Accept and its Decline.
	if strings.Count(doc, `id="banner-change-`) != BannerProposals || strings.Count(doc, "/proposal/") != 3*BannerProposals || !strings.Contains(doc, "All 55 proposals") {
		t.Errorf("the banner of 55 names %d", strings.Count(doc, `id="banner-change-`))
	}
	first := body(t, f.get(c, "/document/"+id+"/proposals"))
	if strings.Count(first, `/proposal/`) != ProposalsPage || !strings.Contains(first, "proposals?before=6") {
		t.Errorf("the first page lists %d", strings.Count(first, "/proposal/"))
	}
	second := body(t, f.get(c, "/document/"+id+"/proposals?before=6"))
	if strings.Count(second, `/proposal/`) != 5 || strings.Contains(second, "before=") {
		t.Errorf("the second page lists %d", strings.Count(second, "/proposal/"))
	}
}

// A team member decides proposals in the spaces they are a member of, and nowhere else.
func TestTeamMembersDecide(t *testing.T) {
	ctx := t.Context()
	tm := newTeam(t)
	launch, design := docstore.New(tm.db, "launch"), docstore.New(tm.db, "design")
	if _, err := launch.Proposing().Append(ctx, tm.plans["launch"], "- proposed", agent); err != nil {
		t.Fatal(err)
	}
	if _, err := design.Proposing().Append(ctx, tm.plans["design"], "- proposed", agent); err != nil {
		t.Fatal(err)
	}
	ben := staying(tm.as("ben"))
	post := func(c *http.Client, path string) int {
		req, _ := http.NewRequest(http.MethodPost, tm.srv.URL+path, strings.NewReader("form_token="+tokenOf(c, tm.srv.URL)))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", tm.srv.URL)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(ben, "/document/"+tm.plans["launch"]+"/proposal/1/accept"); code != http.StatusSeeOther {
		t.Errorf("Ben accepting in launch: %d", code)
	}
	if v, _ := view(t, launch, newest(tm.plans["launch"])); v.Author != (docstore.Author{By: agent.By, For: agent.For, Accepted: "person:ben", Door: docstore.DoorAccept}) {
		t.Errorf("the accepted version's author: %+v", v.Author)
	}
	ana := staying(tm.as("ana"))
	if code := post(ana, "/document/"+tm.plans["design"]+"/proposal/1/accept"); code != http.StatusNotFound {
		t.Errorf("Ana, not in design, accepting there: %d", code)
	}
	if d, _ := view(t, design, find(tm.plans["design"])); d.Review.Open != 1 {
		t.Errorf("design's proposal was decided by someone outside: %+v", d.Review)
	}
}

// An open page hears of a new proposal at once: event "proposed". The page is open (its
// stream listens) once the stream's answer begins.
func TestLiveProposals(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	made, _ := f.docs.Create(ctx, "Plan", reviewedPlan, docstore.KindWrite, agent)
	id := made.Document.ID
	c := f.client()
	f.signIn(c, "/")
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp := openStream(t, ctx, c, f.srv.URL+"/document/"+id+"/events?version=1&proposals=0")
	defer resp.Body.Close()
	if _, err := f.docs.Proposing().Append(ctx, id, "- more", agent); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	var event string
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			if event != "proposed" || !strings.Contains(data, `"proposal":1`) || !strings.Contains(data, `"by":"north for Ana"`) || !strings.Contains(data, `"version":1`) {
				t.Fatalf("the event: %s %s", event, data)
			}
			return
		}
	}
	t.Fatalf("no event: %v", sc.Err())
}

// A proposal clashing with the person's change at 6,667 places of 1 MB: its page and the
// clash page show the first ClashRegions places, whatever their number.
func TestProposalPagesAreBounded(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	var lines, mine, theirs []string
	for i := range 20000 {
		lines = append(lines, fmt.Sprintf("line %d: %s\n", i, strings.Repeat("x", 40)))
	}
	mine, theirs = append(mine, lines...), append(theirs, lines...)
	for i := 0; i < len(lines); i += 3 {
		mine[i], theirs[i] = fmt.Sprintf("agent %d\n", i), fmt.Sprintf("person %d\n", i)
	}
	made, _ := f.docs.Create(ctx, "Huge", strings.Join(lines, ""), docstore.KindWrite, agent)
	id := made.Document.ID
	if _, err := f.docs.Proposing().Write(ctx, id, "", strings.Join(mine, ""), 0, agent); err != nil {
		t.Fatal(err)
	}
	if _, err := f.docs.Save(ctx, id, 0, strings.Join(theirs, ""), me(who{Person: "ana"}), linediff.Clash); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	f.signIn(c, "/")
	start := time.Now()
	page := body(t, f.get(c, "/document/"+id+"/proposal/1"))
	took := time.Since(start)
	if strings.Count(page, `class="sides"`) != ClashRegions || !strings.Contains(page, "… and 6567 more clashing places.") || strings.Count(page, `<tr class=`) > DiffRows+10 {
		t.Errorf("the proposal's page shows %d places, %d rows", strings.Count(page, `class="sides"`), strings.Count(page, `<tr class=`))
	}
	start = time.Now()
	resp := f.post(staying(c), "/document/"+id+"/proposal/1/accept", url.Values{})
	clash := body(t, resp)
	tookClash := time.Since(start)
	if resp.StatusCode != http.StatusConflict || strings.Count(clash, `class="sides"`) != ClashRegions || !strings.Contains(clash, "… and 6567 more clashing places") {
		t.Errorf("the clash page: %d, %d places", resp.StatusCode, strings.Count(clash, `class="sides"`))
	}
	t.Logf("proposal page %d KB in %s; clash page %d KB in %s", len(page)>>10, took, len(clash)>>10, tookClash)
}

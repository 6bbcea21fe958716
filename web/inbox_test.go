package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
)

// The inbox shows what waits for the person, newest first, each change with Accept and
// Decline in place and each comment linked to its lines; every page's header counts it;
// the documents list marks documents with open changes and comments; /proposals is the
// inbox; several changes of one document are accepted in order in one step, the versions
// they made said as the writes returned them.
func TestInboxOnThePage(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	made, err := f.docs.Create(ctx, "Plan", reviewedPlan, docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	id := made.Document.ID
	agentDocs := f.docs.Proposing()
	for _, e := range [][2]string{{"Review the page.", "Review the <course> page."}, {"Book the studio.", "Book the big studio."}, {"Record the trailer.", "Record the trailer on Monday."}} {
		if _, err := agentDocs.Edit(ctx, id, e[0], e[1], agent); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.docs.Comment(ctx, id, docstore.NewComment{Lines: docstore.LineRange{From: 3, To: 3}, Text: "Which trailer, <the> long one?", Author: agent, Asks: agent.For}); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	f.signIn(c, "/")

	box := body(t, f.get(c, "/inbox"))
	for _, want := range []string{
		`Inbox <span class="waiting" aria-label="4 waiting">4</span>`,
		`">Inbox <span class="count">4</span></h1>`,
		`<a href="/document/` + id + `/comments#c1">comment 1</a> on <a href="/document/` + id + `">Plan</a>, line 3`,
		"north for Ana asks you",
		"Which trailer, &lt;the&gt; long one?",
		`<a href="/document/` + id + `/proposal/3">change 3</a> to <a href="/document/` + id + `">Plan</a>`,
		"Record the trailer on Monday.",
		`action="/document/` + id + `/proposal/2/decline"`,
		`<input type="hidden" name="back" value="inbox">`,
	} {
		if !strings.Contains(box, want) {
			t.Errorf("the inbox lacks %q:\n%s", want, box)
		}
	}
	if i, j := strings.Index(box, "comment 1</a>"), strings.Index(box, "change 1</a>"); i < 0 || j < 0 || i > j {
		t.Errorf("the inbox is not newest first (comment at %d, change 1 at %d)", i, j)
	}
	list := body(t, f.get(c, "/"))
	for _, want := range []string{"3 changes to review", "1 open comment", `aria-label="4 waiting"`} {
		if !strings.Contains(list, want) {
			t.Errorf("the documents list lacks %q:\n%s", want, list)
		}
	}
	if got := body(t, f.get(c, "/conversations")); !strings.Contains(got, `aria-label="4 waiting"`) {
		t.Errorf("the conversations page's header lacks the count:\n%s", got)
	}
	nr := staying(c)
	if resp := f.get(nr, "/proposals"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/inbox" {
		t.Errorf("/proposals: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp := f.get(c, "/inbox?after=nothing"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a made-up page of the inbox: %d", resp.StatusCode)
	}

	// Changes 1 and 2 in one step, from the banner's form: each a version, in order.
	resp := f.post(nr, "/document/"+id+"/accept", url.Values{"n": {"2", "1"}})
	loc, _ := url.QueryUnescape(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(loc, "accepted change 1 as version 2 (+1 −1 lines); accepted change 2, merged with the versions saved since, as version 3") {
		t.Fatalf("accepting 1 and 2: %d %s", resp.StatusCode, loc)
	}
	if d, _ := view(t, f.docs, find(id)); d.Version != 3 || d.Review.Open != 1 {
		t.Fatalf("after accepting two: version %d, %d open", d.Version, d.Review.Open)
	}
	// Declining from the inbox goes back to it.
	resp = f.post(nr, "/document/"+id+"/proposal/3/decline", url.Values{"why": {"Not Monday."}, "back": {"inbox"}})
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/inbox?saved=declined+change+3") {
		t.Fatalf("declining 3 from the inbox: %d %s", resp.StatusCode, loc)
	}
	box = body(t, f.get(c, "/inbox"))
	if !strings.Contains(box, `aria-label="1 waiting"`) || strings.Contains(box, "change 3</a>") {
		t.Errorf("after deciding, the inbox:\n%s", box)
	}
}

// Several changes accepted in one step stop at the first that clashes: it shows the clash
// page, saying what was accepted before it, and the rest stay open.
func TestAcceptManyStopsAtAClash(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	made, err := f.docs.Create(ctx, "Plan", reviewedPlan, docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	id := made.Document.ID
	agentDocs := f.docs.Proposing()
	agentDocs.Edit(ctx, id, "Book the studio.", "Book the big studio.", agent)
	agentDocs.Edit(ctx, id, "Record the trailer.", "Record the trailer on Monday.", agent)
	agentDocs.Append(ctx, id, "- and a third", agent)
	v, _ := view(t, f.docs, newest(id))
	if _, err := f.docs.Save(ctx, id, 0, strings.Replace(v.Text, "Record the trailer.", "Record the trailer twice.", 1), me(who{Person: "ana"}), linediff.Clash); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	f.signIn(c, "/")
	resp := f.post(staying(c), "/document/"+id+"/accept", url.Values{"n": {"1", "2", "3"}})
	got := body(t, resp)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(got, "Before it: accepted change 1, merged with the versions saved since, as version 3") || !strings.Contains(got, `action="/document/`+id+`/proposal/2/accept"`) {
		t.Fatalf("accepting 1-3 with 2 clashing: %d\n%s", resp.StatusCode, got)
	}
	if d, _ := view(t, f.docs, find(id)); d.Version != 3 || d.Review.Open != 2 {
		t.Errorf("after the clash: version %d, %d open; want 3, 2 (2 and 3)", d.Version, d.Review.Open)
	}
	for _, bad := range []url.Values{{}, {"n": {"x"}}, {"n": {"0"}}} {
		if resp := f.post(staying(c), "/document/"+id+"/accept", bad); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("accepting %v: %d", bad, resp.StatusCode)
		}
	}
	many := url.Values{}
	for i := range AcceptMany + 1 {
		many.Add("n", string(rune('1'+i%9)))
	}
	if resp := f.post(staying(c), "/document/"+id+"/accept", many); resp.StatusCode == http.StatusBadRequest {
		t.Errorf("repeated numbers count once: %d", resp.StatusCode)
	}
	tooMany := url.Values{}
	for i := range AcceptMany + 1 {
		tooMany.Add("n", strconv.Itoa(i+1))
	}
	if resp := f.post(staying(c), "/document/"+id+"/accept", tooMany); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("accepting %d changes at once: %d", AcceptMany+1, resp.StatusCode)
	}
}

// For a team, each member sees their own inbox: their agents' changes in the spaces they
// are members of, and nothing of a space they are not in, nor of another's agent.
func TestTeamInboxes(t *testing.T) {
	ctx := t.Context()
	tm := newTeam(t)
	launch, design := docstore.New(tm.db, "launch"), docstore.New(tm.db, "design")
	forBen := docstore.Author{By: "agent:south", For: "person:ben"}
	if _, err := launch.Proposing().Append(ctx, tm.plans["launch"], "- for-ana-in-launch", agent); err != nil {
		t.Fatal(err)
	}
	if _, err := launch.Proposing().Append(ctx, tm.plans["launch"], "- for-ben-in-launch", forBen); err != nil {
		t.Fatal(err)
	}
	// An agent working for Ana in design, a space Ana is not a member of: she never sees it.
	if _, err := design.Proposing().Append(ctx, tm.plans["design"], "- for-ana-in-design", agent); err != nil {
		t.Fatal(err)
	}
	if _, err := design.Comment(ctx, tm.plans["design"], docstore.NewComment{Lines: docstore.LineRange{From: 1, To: 1}, Text: "ask-ana-in-design", Author: agent, Asks: agent.For}); err != nil {
		t.Fatal(err)
	}
	if _, err := design.Proposing().Append(ctx, tm.plans["design"], "- for-ben-in-design", forBen); err != nil {
		t.Fatal(err)
	}
	ana := body(t, tm.get(tm.as("ana"), "/inbox"))
	if !strings.Contains(ana, "for-ana-in-launch") || !strings.Contains(ana, `aria-label="1 waiting"`) {
		t.Errorf("Ana's inbox lacks her change in launch:\n%s", ana)
	}
	for _, not := range []string{"for-ben", "in-design", "Design plan"} {
		if strings.Contains(ana, not) {
			t.Errorf("Ana's inbox shows %q:\n%s", not, ana)
		}
	}
	ben := body(t, tm.get(tm.as("ben"), "/inbox"))
	if !strings.Contains(ben, "for-ben-in-launch") || !strings.Contains(ben, "for-ben-in-design") || !strings.Contains(ben, `aria-label="2 waiting"`) {
		t.Errorf("Ben's inbox lacks his changes:\n%s", ben)
	}
	if strings.Contains(ben, "for-ana") || strings.Contains(ben, "ask-ana") {
		t.Errorf("Ben's inbox shows Ana's:\n%s", ben)
	}
}

// On a store without members (one person's), the person sees every space of it: the
// inbox lists what waits in space launch though the page's space is personal, naming the
// space; the header counts it; the switcher lists each space with its documents and what
// waits there; launch's documents list opens.
func TestInboxEverySpaceOfAOnePersonStore(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t) // --space personal, --for ana, no members
	if _, err := f.docs.Create(ctx, "Diary", "today\n", docstore.KindSave, docstore.Author{By: "person:ana"}); err != nil {
		t.Fatal(err)
	}
	launch := docstore.New(f.db, "launch")
	made, err := launch.Create(ctx, "Launch plan", reviewedPlan, docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := launch.Proposing().Edit(ctx, made.Document.ID, "Book the studio.", "Book the big studio.", agent); err != nil {
		t.Fatal(err)
	}
	if _, err := launch.Create(ctx, "Guest list", "- Ben\n", docstore.KindWrite, agent); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	f.signIn(c, "/")
	box := body(t, f.get(c, "/inbox"))
	for _, want := range []string{
		`Inbox <span class="waiting" aria-label="1 waiting">1</span>`,
		`<a href="/document/` + made.Document.ID + `/proposal/1">change 1</a>`,
		"launch",
		`launch <span class="space-counts">2 docs · <span class="waiting" aria-label="1 waiting">1 waiting</span></span>`,
		`personal <span class="space-counts">1 doc</span>`,
	} {
		if !strings.Contains(box, want) {
			t.Errorf("the inbox of a one-person store lacks %q:\n%s", want, box)
		}
	}
	if got := body(t, f.get(c, "/?space=launch")); !strings.Contains(got, "Guest list") {
		t.Errorf("space launch's documents list:\n%s", got)
	}

	// A team's store: Ana is a member of personal only; launch is not hers to see.
	if _, err := access.New(f.db).AddMember(ctx, "personal", "ana"); err != nil {
		t.Fatal(err)
	}
	box = body(t, f.get(c, "/inbox"))
	if strings.Contains(box, "change 1") || strings.Contains(box, "launch") {
		t.Errorf("the inbox on a team's store shows another space:\n%s", box)
	}
	if resp := f.get(c, "/?space=launch"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("space launch on a team's store: %d", resp.StatusCode)
	}
}

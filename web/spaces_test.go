package web

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

// team is a page on one data file of two people and three spaces: personal (Ana's, the
// configured space, hers without a member row), launch (Ana and Ben) and design (Ben). Each
// space has a document "<Space> plan" in two versions whose text says marker-<space>, a
// scratch document for the writing routes, a deleted document, and a conversation
// <space>-chat saying talk-<space>; personal and launch both have a conversation "general",
// each saying general-<space>.
type team struct {
	*fixture
	plans, scratch, gone map[string]string // space → a document's id
}

var (
	teamSpaces = []string{"personal", "launch", "design"}
	teamMay    = map[string][]string{"ana": {"launch", "personal"}, "ben": {"design", "launch"}}
	teamHome   = map[string]string{"ana": "personal", "ben": "design"} // ben: his first, not being in personal
	teamNames  = map[string]string{"ana": "Ana", "ben": "Ben"}
)

func teamTitle(space string) string { return strings.ToUpper(space[:1]) + space[1:] + " plan" }

func newTeam(t *testing.T) *team {
	t.Helper()
	ctx := t.Context()
	db, path := openStore(t)
	members := access.New(db).WithOwner("personal", "ana")
	for _, m := range [][2]string{{"launch", "ana"}, {"launch", "ben"}, {"design", "ben"}} {
		if _, err := members.AddMember(ctx, m[0], m[1]); err != nil {
			t.Fatal(err)
		}
	}
	tm := &team{plans: map[string]string{}, scratch: map[string]string{}, gone: map[string]string{}}
	for id, name := range teamNames {
		if err := spaces.SetName(ctx, db, id, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, sp := range teamSpaces {
		docs := docstore.New(db, sp)
		plan, err := docs.Create(ctx, teamTitle(sp), "marker-"+sp+"\n", docstore.KindWrite, agent)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := docs.Append(ctx, plan.Document.ID, "second-"+sp+"\n", agent); err != nil {
			t.Fatal(err)
		}
		scratch, err := docs.Create(ctx, "Scratch "+sp, "scratch-"+sp+"\n", docstore.KindWrite, agent)
		if err != nil {
			t.Fatal(err)
		}
		gone, err := docs.Create(ctx, "Gone "+sp, "gone-"+sp+"\n", docstore.KindWrite, agent)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := docs.Delete(ctx, gone.Document.ID, agent); err != nil {
			t.Fatal(err)
		}
		tm.plans[sp], tm.scratch[sp], tm.gone[sp] = plan.Document.ID, scratch.Document.ID, gone.Document.ID
		convs := threads.New(db, sp)
		if _, err := convs.Say(ctx, sp+"-chat", sp+" chat", threads.Message{From: "person:ana", Text: "talk-" + sp}); err != nil {
			t.Fatal(err)
		}
		if sp != "design" {
			if _, err := convs.Say(ctx, "general", "General", threads.Message{From: "person:ana", Text: "general-" + sp}); err != nil {
				t.Fatal(err)
			}
		}
	}
	site, err := New(ctx, db, Config{Space: "personal", Me: "ana", Path: path, Poll: 20 * time.Millisecond, Access: members})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(site)
	t.Cleanup(func() { site.Close(); srv.Close() })
	tm.fixture = &fixture{t: t, db: db, site: site, srv: srv}
	return tm
}

// as is a browser signed in as person with a link made for one of their spaces.
func (tm *team) as(person string) *http.Client {
	tm.t.Helper()
	c := tm.client()
	code, err := access.New(tm.db).NewSignInCode(tm.t.Context(), person, teamMay[person][0], "/")
	if err != nil {
		tm.t.Fatal(err)
	}
	if resp := tm.get(c, "/signin?code="+code); resp.StatusCode != http.StatusOK {
		tm.t.Fatalf("%s signing in: %d", person, resp.StatusCode)
	}
	return c
}

// logged reads, for view, the document name names as its history has it, deleted or not.
func logged(name string) func(*docstore.Reader) (docstore.Document, error) {
	return func(r *docstore.Reader) (docstore.Document, error) {
		d, _, err := r.Log(name)
		return d, err
	}
}

// missing is an id no document has, in any space.
const missing = "01JDXZZZZZZZZZZZZZZZZZZZZZ"

// leaks returns the first marker in got of a space person may not see.
func leaks(person, got string) string {
	for _, sp := range teamSpaces {
		if slices.Contains(teamMay[person], sp) {
			continue
		}
		for _, m := range []string{"marker-" + sp, "second-" + sp, "scratch-" + sp, "gone-" + sp, "talk-" + sp, "general-" + sp, teamTitle(sp), sp + " chat", ">" + sp + "<", "?space=" + sp} {
			if strings.Contains(got, m) {
				return m
			}
		}
	}
	return ""
}

// Every page route × person × space: a space the person may see shows its things, in its
// own space; one they may not see answers exactly as a missing document (or conversation,
// or space) does, and nothing of it shows anywhere.
func TestEveryRouteEveryPersonEverySpace(t *testing.T) {
	tm := newTeam(t)
	routes := []struct {
		name string
		path func(tm *team, sp string) string // of the space's things
		lost string                           // the same route for something that doesn't exist
		want func(sp string) []string         // what the page shows of sp
		home bool                             // the page is of the person's home space, not sp
	}{
		// Each: name, path, lost, want, home.
		{"document", func(tm *team, sp string) string { return "/document/" + tm.plans[sp] }, "/document/" + missing,
			func(sp string) []string { return []string{"marker-" + sp, "second-" + sp, "version 2 of 2"} }, false},
		{"version", func(tm *team, sp string) string { return "/document/" + tm.plans[sp] + "/v/1" }, "/document/" + missing + "/v/1",
			func(sp string) []string { return []string{"marker-" + sp, "version: 1 of 2"} }, false},
		{"history", func(tm *team, sp string) string { return "/document/" + tm.plans[sp] + "/history" }, "/document/" + missing + "/history",
			func(sp string) []string { return []string{teamTitle(sp), "append"} }, false},
		{"diff", func(tm *team, sp string) string { return "/document/" + tm.plans[sp] + "/diff?from=1&to=2" }, "/document/" + missing + "/diff?from=1&to=2",
			func(sp string) []string { return []string{"<ins>second-" + sp + "</ins>"} }, false},
		{"edit", func(tm *team, sp string) string { return "/document/" + tm.plans[sp] + "/edit" }, "/document/" + missing + "/edit",
			func(sp string) []string { return []string{"marker-" + sp, `name="base" value="2"`} }, false},
		{"a deleted document", func(tm *team, sp string) string { return "/document/" + tm.gone[sp] }, "/document/" + missing, nil, false},
		{"list", func(tm *team, sp string) string { return "/?space=" + sp }, "/?space=nowhere",
			func(sp string) []string { return []string{teamTitle(sp), "Scratch " + sp} }, false},
		{"search", func(tm *team, sp string) string { return "/?space=" + sp + "&q=marker" }, "/?space=nowhere&q=marker",
			func(sp string) []string { return []string{teamTitle(sp), "1: <mark>marker</mark>-" + sp} }, false},
		{"search by link", func(tm *team, sp string) string {
			return "/?q=" + url.QueryEscape("http://elsewhere.example/document/"+tm.plans[sp])
		}, "/?q=" + url.QueryEscape("http://elsewhere.example/document/"+missing),
			func(sp string) []string { return []string{teamTitle(sp)} }, true},
		{"deleted", func(tm *team, sp string) string { return "/deleted?space=" + sp }, "/deleted?space=nowhere",
			func(sp string) []string { return []string{"Gone " + sp} }, false},
		{"new", func(tm *team, sp string) string { return "/new?space=" + sp }, "/new?space=nowhere",
			func(sp string) []string { return []string{`class="space"`, sp} }, false},
		{"conversations", func(tm *team, sp string) string { return "/conversations?space=" + sp }, "/conversations?space=nowhere",
			func(sp string) []string { return []string{sp + " chat", "talk-" + sp} }, false},
		{"conversation", func(tm *team, sp string) string { return "/conversation/" + sp + "-chat" }, "/conversation/nowhere-chat",
			func(sp string) []string { return []string{"talk-" + sp} }, false},
	}
	for _, person := range []string{"ana", "ben"} {
		c := tm.as(person)
		for _, rt := range routes {
			lost := tm.get(c, rt.lost)
			lostBody := body(t, lost)
			if lost.StatusCode != http.StatusNotFound && !rt.home {
				t.Fatalf("%s %s: %s answers %d, want 404", person, rt.name, rt.lost, lost.StatusCode)
			}
			for _, sp := range teamSpaces {
				path := rt.path(tm, sp)
				resp := tm.get(c, path)
				got := body(t, resp)
				if m := leaks(person, got); m != "" {
					t.Errorf("%s GET %s (%s in %s): shows %q of a space not theirs:\n%s", person, path, rt.name, sp, m, got)
				}
				if !slices.Contains(teamMay[person], sp) || rt.want == nil {
					// A search echoes the link it was given: its id aside, the same page.
					same := strings.NewReplacer(tm.plans[sp], missing, tm.gone[sp], missing).Replace(got)
					if resp.StatusCode != lost.StatusCode || same != lostBody {
						t.Errorf("%s GET %s (%s in %s): %d, not the answer for %s (%d):\n%s\nwant:\n%s", person, path, rt.name, sp, resp.StatusCode, rt.lost, lost.StatusCode, got, lostBody)
					}
					continue
				}
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s GET %s (%s in %s): %d\n%s", person, path, rt.name, sp, resp.StatusCode, got)
					continue
				}
				shown := sp
				if rt.home {
					shown = teamHome[person]
				}
				for _, want := range append(rt.want(sp), `<summary class="space" title="the space: choose another">`+shown+`</summary>`, "<span>"+teamNames[person]+"</span>") {
					if !strings.Contains(got, want) {
						t.Errorf("%s GET %s (%s in %s) lacks %q:\n%s", person, path, rt.name, sp, want, got)
					}
				}
			}
		}
	}
}

// Without ?space=, the lists show the person's home: the configured space if theirs, else
// their first; the switcher offers their spaces and no other.
func TestHomeSpaceAndSwitcher(t *testing.T) {
	tm := newTeam(t)
	for _, person := range []string{"ana", "ben"} {
		c := tm.as(person)
		home := teamHome[person]
		for _, path := range []string{"/", "/conversations", "/new", "/deleted"} {
			got := body(t, tm.get(c, path))
			if !strings.Contains(got, `<summary class="space" title="the space: choose another">`+home+`</summary>`) {
				t.Errorf("%s GET %s: not in %s:\n%s", person, path, home, got)
			}
			if m := leaks(person, got); m != "" {
				t.Errorf("%s GET %s shows %q", person, path, m)
			}
			for _, sp := range teamMay[person] {
				want := `href="` + path + `"`
				if sp != home {
					want = `href="` + path + `?space=` + sp + `"`
				}
				if !strings.Contains(got, want) {
					t.Errorf("%s GET %s: the switcher lacks %s", person, path, want)
				}
			}
		}
		if got := body(t, tm.get(c, "/")); !strings.Contains(got, teamTitle(home)) {
			t.Errorf("%s's list lacks %s", person, teamTitle(home))
		}
	}
	// "general" is in personal and launch: ?space= says which, the home space by default.
	c := tm.as("ana")
	if got := body(t, tm.get(c, "/conversation/general")); !strings.Contains(got, "general-personal") {
		t.Errorf("/conversation/general for Ana: not personal's:\n%s", got)
	}
	if got := body(t, tm.get(c, "/conversation/general?space=launch")); !strings.Contains(got, "general-launch") {
		t.Errorf("/conversation/general?space=launch: not launch's:\n%s", got)
	}
	if got := body(t, tm.get(c, "/conversations?space=launch")); !strings.Contains(got, `href="/conversation/general?space=launch"`) {
		t.Errorf("launch's conversations don't link launch's general:\n%s", got)
	}
	// One space only: no switcher.
	solo := newFixture(t)
	sc := solo.client()
	solo.signIn(sc, "/").Body.Close()
	if got := body(t, solo.get(sc, "/")); strings.Contains(got, "<details") || !strings.Contains(got, `<span class="space" title="the space">personal</span>`) {
		t.Errorf("one space, the header:\n%s", got)
	}
}

// The writing routes change a document of a space the person may see, in its own space, as
// person:<id> alone; for a space they may not see they answer as for a missing document
// and change nothing.
func TestWritingRoutesEveryPersonEverySpace(t *testing.T) {
	ctx := t.Context()
	tm := newTeam(t)
	type post struct {
		name string
		path func(id string) string
		form url.Values
	}
	for _, person := range []string{"ana", "ben"} {
		posts := []post{
			{"edit", func(id string) string { return "/document/" + id + "/edit" }, url.Values{"base": {"1"}, "text": {"edited by " + person + "\n"}}},
			{"rename", func(id string) string { return "/document/" + id + "/rename" }, url.Values{"title": {"Renamed by " + person}}},
			{"restore", func(id string) string { return "/document/" + id + "/restore" }, url.Values{"n": {"1"}}},
			{"delete", func(id string) string { return "/document/" + id + "/delete" }, nil},
			{"undelete", func(id string) string { return "/document/" + id + "/undelete" }, nil},
		}
		c := tm.as(person)
		for _, p := range posts {
			lost := tm.post(c, p.path(missing), p.form)
			lostBody := body(t, lost)
			for _, sp := range teamSpaces {
				id := tm.scratch[sp]
				if p.name == "undelete" {
					id = tm.gone[sp]
				}
				docs := docstore.New(tm.db, sp)
				before, _ := view(t, docs, logged(id))
				resp := tm.post(c, p.path(id), p.form)
				got := body(t, resp)
				if !slices.Contains(teamMay[person], sp) {
					if resp.StatusCode != lost.StatusCode || got != lostBody {
						t.Errorf("%s POST %s in %s: %d, not the answer for a missing document (%d):\n%s", person, p.name, sp, resp.StatusCode, lost.StatusCode, got)
					}
					if after, _ := view(t, docs, logged(id)); after.Version != before.Version || (after.Deleted == nil) != (before.Deleted == nil) || after.Title != before.Title {
						t.Errorf("%s POST %s changed %s's document: %+v → %+v", person, p.name, sp, before, after)
					}
					continue
				}
				if resp.StatusCode != http.StatusOK || leaks(person, got) != "" {
					t.Errorf("%s POST %s in %s: %d\n%s", person, p.name, sp, resp.StatusCode, got)
				}
				switch p.name {
				case "edit", "rename", "restore":
					var (
						d docstore.Document
						v docstore.Version
					)
					err := docs.View(ctx, func(r *docstore.Reader) (err error) {
						d, v, err = r.Read(id, 0)
						return err
					})
					if err != nil || v.Author.By != "person:"+person || v.Author.Door != docstore.DoorPage || d.Version <= before.Version {
						t.Errorf("%s POST %s in %s: latest %+v by %+v, %v", person, p.name, sp, d, v.Author, err)
					}
				case "delete":
					if _, err := view(t, docs, find(id)); err == nil || !strings.Contains(got, before.Title) {
						t.Errorf("%s deleted %s's scratch: still found (%v), or the deleted page lacks it:\n%s", person, sp, err, got)
					}
					if _, err := docs.Undelete(ctx, id); err != nil { // for the next person
						t.Fatal(err)
					}
				case "undelete":
					if _, err := view(t, docs, find(id)); err != nil {
						t.Errorf("%s undeleted %s's gone: %v", person, sp, err)
					}
					if _, err := docs.Delete(ctx, id, agent); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		// New: in the space the form names, when the person may see it.
		for _, sp := range teamSpaces {
			title := "New of " + person + " in " + sp
			resp := tm.post(c, "/new?space="+sp, url.Values{"title": {title}, "text": {"new\n"}})
			got := body(t, resp)
			d, err := view(t, docstore.New(tm.db, sp), find(title))
			if !slices.Contains(teamMay[person], sp) {
				if resp.StatusCode != http.StatusNotFound || err == nil || !strings.Contains(got, "No such space") {
					t.Errorf("%s POST /new?space=%s: %d, made: %v\n%s", person, sp, resp.StatusCode, err == nil, got)
				}
				continue
			}
			if resp.StatusCode != http.StatusOK || err != nil || d.Author.By != "person:"+person || d.Author.Door != docstore.DoorPage {
				t.Errorf("%s POST /new?space=%s: %d, %+v, %v", person, sp, resp.StatusCode, d, err)
			}
		}
	}
}

// An open page of a document in another space than the configured one follows its new
// versions there; a document of a space not the person's has no stream, as a missing one.
func TestLiveInTheDocumentsSpace(t *testing.T) {
	tm := newTeam(t)
	c := tm.as("ana")
	lost := tm.get(c, "/document/"+missing+"/events")
	lostBody := body(t, lost)
	if resp := tm.get(c, "/document/"+tm.plans["design"]+"/events"); resp.StatusCode != http.StatusNotFound || lost.StatusCode != http.StatusNotFound || body(t, resp) != lostBody {
		t.Fatalf("events of design's plan for Ana: %d (missing: %d)", resp.StatusCode, lost.StatusCode)
	}
	id := tm.plans["launch"]
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	resp := openStream(t, ctx, c, tm.srv.URL+"/document/"+id+"/events?version=2")
	defer resp.Body.Close()
	if _, err := docstore.New(tm.db, "launch").Append(ctx, id, "third-launch\n", agent); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "data: ") {
			if !strings.Contains(line, `"version":3`) || !strings.Contains(line, `"by":"north for Ana"`) {
				t.Fatalf("the event: %s", line)
			}
			return
		}
	}
	t.Fatalf("no event: %v", sc.Err())
}

// Taken out of a space, a signed-in person sees nothing more of it at the next request;
// taken out of every space, they are asked to sign in.
func TestRemovedMemberSeesNoMore(t *testing.T) {
	ctx := t.Context()
	tm := newTeam(t)
	c := tm.as("ben")
	path := "/document/" + tm.plans["launch"]
	if got := body(t, tm.get(c, path)); !strings.Contains(got, "marker-launch") {
		t.Fatalf("Ben, a member of launch:\n%s", got)
	}
	members := access.New(tm.db)
	if _, err := members.RemoveMember(ctx, "launch", "ben"); err != nil {
		t.Fatal(err)
	}
	resp := tm.get(c, path)
	lost := tm.get(c, "/document/"+missing)
	if got, want := body(t, resp), body(t, lost); resp.StatusCode != http.StatusNotFound || got != want {
		t.Fatalf("Ben, out of launch: %d\n%s\nwant:\n%s", resp.StatusCode, got, want)
	}
	if _, err := members.RemoveMember(ctx, "design", "ben"); err != nil {
		t.Fatal(err)
	}
	if resp := tm.get(c, "/"); resp.StatusCode != http.StatusUnauthorized || strings.Contains(body(t, resp), "Design plan") {
		t.Fatalf("Ben, in no space: %d", resp.StatusCode)
	}
}

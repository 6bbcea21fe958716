package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

const appsBase = "http://127.0.0.1:7777"

// appsSession is a real in-process MCP session with the tools, its client declaring the
// MCP Apps extension in initialize or not.
type appsSession struct {
	c    *client.Client
	init *mcp.InitializeResult
}

func newAppsSession(t testing.TB, db kv.DB, cfg tools.Config, apps bool) *appsSession {
	t.Helper()
	var ext map[string]any
	if apps {
		ext = map[string]any{tools.AppsExtension: map[string]any{"mimeTypes": []any{tools.AppMIMEType}}}
	}
	c, res := inProcess(t, db, cfg, "apps-host", ext)
	return &appsSession{c: c, init: res}
}

func (s *appsSession) call(t testing.TB, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := s.c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	return res
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// viewOf is the change view's data in a result's _meta, as a host hands it to the view:
// decoded from the result's JSON.
type viewData struct {
	Document, Title, Kind, By, For, Comment, Link, ChangeLink, Note string
	Version, Added, Removed, Proposal                               int
	Unchanged, Undo                                                 bool
	Hunks                                                           []struct {
		A, B  int
		Lines []string
	}
}

func viewOf(t *testing.T, res *mcp.CallToolResult) (viewData, int) {
	t.Helper()
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var wire struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		t.Fatal(err)
	}
	var v viewData
	data, ok := wire.Meta["compass/change"]
	if !ok {
		t.Fatalf("no _meta[compass/change] in %s", short(string(raw)))
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v, len(raw)
}

func short(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

func toolsByName(t *testing.T, s *appsSession) map[string]mcp.Tool {
	t.Helper()
	res, err := s.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]mcp.Tool{}
	for _, tl := range res.Tools {
		m[tl.Name] = tl
	}
	return m
}

func toolsListBytes(t *testing.T, s *appsSession) int {
	t.Helper()
	res, err := s.c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res)
	return len(raw)
}

// A client that did not declare the extension gets the tools as before: no _meta, no
// undo_change (not listed, and refused as unknown), no view among the resources, no _meta
// in results; tools/list within 6 KB. One that did gets the links, the app-only tool, the
// resource and its HTML.
func TestAppsOnlyForClientsThatDeclareThem(t *testing.T) {
	db := kvtest.Open(t)
	cfg := tools.Config{Agent: "north", For: "ana", LinkBase: appsBase}
	plain, apps := newAppsSession(t, db, cfg, false), newAppsSession(t, db, cfg, true)

	// The server declares the extension back (capabilities.extensions, as both sides do
	// under SEP-2133) to the client that declared it, and to no other: the plain client's
	// initialize answer is as it was.
	if ext := plain.init.Capabilities.Extensions; ext != nil {
		t.Errorf("the server declares extensions to a client without apps: %v", ext)
	}
	if got, _ := json.Marshal(apps.init.Capabilities.Extensions); string(got) != `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}` {
		t.Errorf("the server's extensions for an apps client: %s", got)
	}

	pt := toolsByName(t, plain)
	if _, ok := pt[tools.UndoTool]; ok {
		t.Errorf("a client without apps is offered %s", tools.UndoTool)
	}
	for name, tl := range pt {
		if tl.Meta != nil {
			t.Errorf("a client without apps gets _meta on %s: %+v", name, tl.Meta)
		}
	}
	if len(pt) != len(tools.Names()) {
		t.Errorf("a client without apps gets %d tools, want %d", len(pt), len(tools.Names()))
	}
	if n := toolsListBytes(t, plain); n > 6<<10 {
		t.Errorf("tools/list for a client without apps is %d bytes, over 6 KB", n)
	}
	undoReq := mcp.CallToolRequest{}
	undoReq.Params.Name, undoReq.Params.Arguments = tools.UndoTool, map[string]any{"document": "x", "version": 2}
	if res, err := plain.c.CallTool(context.Background(), undoReq); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a client without apps called %s: %v %+v", tools.UndoTool, err, res)
	}

	at := toolsByName(t, apps)
	for _, name := range []string{"write_document", "append_document", "edit_document", "comment_document"} {
		m := at[name].Meta
		if m == nil {
			t.Errorf("%s has no _meta for an apps client", name)
			continue
		}
		ui, _ := m.AdditionalFields["ui"].(map[string]any)
		if ui["resourceUri"] != tools.ViewURI || m.AdditionalFields["ui/resourceUri"] != tools.ViewURI {
			t.Errorf("%s's _meta: %+v", name, m.AdditionalFields)
		}
		if vis, _ := json.Marshal(ui["visibility"]); string(vis) != `["model","app"]` {
			t.Errorf("%s's visibility: %s", name, vis)
		}
	}
	for _, name := range []string{"list_documents", "read_document", "list_conversations", "read_conversation"} {
		if at[name].Meta != nil {
			t.Errorf("%s links the view: %+v", name, at[name].Meta)
		}
	}
	undo, ok := at[tools.UndoTool]
	if !ok {
		t.Fatalf("an apps client has no %s", tools.UndoTool)
	}
	ui, _ := undo.Meta.AdditionalFields["ui"].(map[string]any)
	if vis, _ := json.Marshal(ui["visibility"]); string(vis) != `["app"]` {
		t.Errorf("%s's visibility: %s, want only the app", tools.UndoTool, vis)
	}

	pr, err := plain.c.ListResources(context.Background(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range pr.Resources {
		if strings.HasPrefix(r.URI, "ui://") {
			t.Errorf("a client without apps lists %s", r.URI)
		}
	}
	ar, err := apps.c.ListResources(context.Background(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ar.Resources) == 0 || ar.Resources[0].URI != tools.ViewURI || ar.Resources[0].MIMEType != tools.AppMIMEType {
		t.Errorf("an apps client's resources: %+v", ar.Resources)
	}
	req := mcp.ReadResourceRequest{}
	req.Params.URI = tools.ViewURI
	read, err := apps.c.ReadResource(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Contents) != 1 {
		t.Fatalf("reading the view: %+v", read.Contents)
	}
	html, ok := read.Contents[0].(mcp.TextResourceContents)
	if !ok || html.MIMEType != tools.AppMIMEType || !strings.HasPrefix(html.Text, "<!DOCTYPE html>") {
		t.Fatalf("the view: %T %+v", read.Contents[0], short(html.Text))
	}
	for _, outside := range []string{"src=\"http", "href=\"http", "@import", "fetch(", "XMLHttpRequest", "WebSocket", "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("} {
		if strings.Contains(html.Text, outside) {
			t.Errorf("the view has %q: nothing from another origin, text only through textContent", outside)
		}
	}
	t.Logf("the view is %d bytes; tools/list is %d bytes without apps, %d with", len(html.Text), toolsListBytes(t, plain), toolsListBytes(t, apps))

	// The results: the same text for both; the view's data only for the apps client.
	first := plain.call(t, "write_document", map[string]any{"title": "Plan", "text": "one\ntwo\nthree\n"})
	if first.Meta != nil || first.StructuredContent != nil {
		t.Errorf("a client without apps got _meta or structuredContent: %+v", first)
	}
	edit := apps.call(t, "edit_document", map[string]any{"document": "Plan", "old": "two", "new": "TWO"})
	want := "Saved [Plan](" + appsBase + "/document/"
	if got := textOf(edit); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, " as version 2: +1 \u22121 lines.") {
		t.Errorf("the apps client's answer: %q", got)
	}
	if edit.StructuredContent != nil {
		t.Errorf("structuredContent for an apps client: the model would read it instead of the text")
	}
	for _, c := range edit.Content {
		if _, ok := c.(mcp.ResourceLink); ok {
			t.Errorf("a resource_link in a result that drives the view")
		}
	}
	v, _ := viewOf(t, edit)
	if v.Title != "Plan" || v.Version != 2 || v.Kind != "edit" || v.By != "north" || v.For != "ana" || v.Added != 1 || v.Removed != 1 || !v.Undo {
		t.Errorf("the view's data: %+v", v)
	}
	if v.Link != appsBase+"/document/"+v.Document+"/v/2" || v.ChangeLink != appsBase+"/document/"+v.Document+"/diff?from=1&to=2" {
		t.Errorf("the view's links: %q %q", v.Link, v.ChangeLink)
	}
	if len(v.Hunks) != 1 || strings.Join(v.Hunks[0].Lines, "|") != " one|-two|+TWO| three" || v.Hunks[0].A != 1 || v.Hunks[0].B != 1 {
		t.Errorf("the view's diff: %+v", v.Hunks)
	}
	plainEdit := plain.call(t, "append_document", map[string]any{"document": "Plan", "text": "four"})
	if plainEdit.Meta != nil {
		t.Errorf("a client without apps got _meta: %+v", plainEdit.Meta)
	}
	comment := apps.call(t, "comment_document", map[string]any{"document": "Plan", "lines": "2", "text": "Why <b>shout</b>?"})
	cv, _ := viewOf(t, comment)
	if cv.Kind != "comment" || cv.Comment != "Why <b>shout</b>?" || len(cv.Hunks) != 1 || cv.Hunks[0].Lines[0] != " TWO" || cv.Hunks[0].A != 2 {
		t.Errorf("a comment's view: %+v", cv)
	}
}

// undo_change restores the version before, as the person's restore does, only while the
// version the view shows is the latest; it refuses version 1, and a version since moved on.
func TestUndoChange(t *testing.T) {
	db := kvtest.Open(t)
	s := newAppsSession(t, db, tools.Config{Agent: "north", For: "ana", LinkBase: appsBase}, true)
	s.call(t, "write_document", map[string]any{"title": "Plan", "text": "one\ntwo\n"})
	if res := s.call(t, tools.UndoTool, map[string]any{"document": "Plan", "version": 1}); !res.IsError || !strings.Contains(textOf(res), "no version before it") {
		t.Errorf("undoing version 1: %q", textOf(res))
	}
	edit := s.call(t, "edit_document", map[string]any{"document": "Plan", "old": "two", "new": "2"})
	v, _ := viewOf(t, edit)
	undone := s.call(t, tools.UndoTool, map[string]any{"document": v.Document, "version": v.Version})
	if undone.IsError || !strings.HasPrefix(textOf(undone), "Undone: [Plan](") || !strings.Contains(textOf(undone), "has the text of version 1 again, as version 3: +1 \u22121 lines.") {
		t.Fatalf("undo: %q", textOf(undone))
	}
	d, latest := readLatest(t, db, v.Document)
	if latest.Text != "one\ntwo\n" || latest.Kind != docstore.KindRestore || latest.Author.By != "agent:north" || d.Version != 3 {
		t.Errorf("after undo: version %d %q %s by %+v", d.Version, latest.Text, latest.Kind, latest.Author)
	}
	// The view still shows version 2: undoing it again would throw version 3 away.
	again := s.call(t, tools.UndoTool, map[string]any{"document": v.Document, "version": v.Version})
	if !again.IsError || !strings.Contains(textOf(again), "has changed since this view's version 2 (it is at version 3 now)") {
		t.Errorf("undoing a version since moved on: %q", textOf(again))
	}
	if _, l := readLatest(t, db, v.Document); l.Number != 3 {
		t.Errorf("a refused undo made version %d", l.Number)
	}
}

func readLatest(t *testing.T, db kv.DB, id string) (docstore.Document, docstore.Version) {
	t.Helper()
	var (
		d docstore.Document
		v docstore.Version
	)
	err := docstore.New(db, "personal").View(context.Background(), func(r *docstore.Reader) (err error) {
		d, v, err = r.Read(id, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return d, v
}

// In review mode the view shows the proposal and sends the person to its page; there is
// no undo_change at all, listed or callable.
func TestAppsInReviewMode(t *testing.T) {
	db := kvtest.Open(t)
	ana := docstore.Author{By: "person:ana"}
	if _, err := docstore.New(db, "personal").Create(context.Background(), "Plan", "one\ntwo\n", docstore.KindWrite, ana); err != nil {
		t.Fatal(err)
	}
	s := newAppsSession(t, db, tools.Config{Agent: "north", For: "ana", LinkBase: appsBase, Review: true}, true)
	if _, ok := toolsByName(t, s)[tools.UndoTool]; ok {
		t.Errorf("review mode lists %s", tools.UndoTool)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tools.UndoTool, map[string]any{"document": "Plan", "version": 1}
	if res, err := s.c.CallTool(context.Background(), req); err == nil {
		t.Errorf("review mode answered %s: %q", tools.UndoTool, textOf(res))
	}
	res := s.call(t, "edit_document", map[string]any{"document": "Plan", "old": "two", "new": "2"})
	if !strings.HasPrefix(textOf(res), "Proposed [Plan](") {
		t.Errorf("review mode's answer: %q", textOf(res))
	}
	v, _ := viewOf(t, res)
	if v.Proposal != 1 || v.Version != 1 || v.Undo || v.ChangeLink != appsBase+"/document/"+v.Document+"/proposal/1" {
		t.Errorf("a proposal's view: %+v", v)
	}
	if len(v.Hunks) != 1 || strings.Join(v.Hunks[0].Lines, "|") != " one|-two|+2" {
		t.Errorf("a proposal's diff: %+v", v.Hunks)
	}
}

// A rewrite of 1 MB puts about 100 KB in the view's data, not 2 MB, and says what it left
// out; so does a text of one 1 MB line.
func TestViewDataIsBounded(t *testing.T) {
	db := kvtest.Open(t)
	s := newAppsSession(t, db, tools.Config{Agent: "north", For: "ana", LinkBase: appsBase}, true)
	// Every third line kept, the others rewritten: 6,667 changed places in 1 MB.
	text := func(c string) string {
		var b strings.Builder
		for i := range 20000 {
			if i%3 == 0 {
				b.WriteString("kept line\n")
			} else {
				b.WriteString(strings.Repeat(c, 49) + "\n")
			}
		}
		return b.String()
	}
	s.call(t, "write_document", map[string]any{"title": "Big", "text": text("x")})
	res := s.call(t, "write_document", map[string]any{"document": "Big", "text": text("y")})
	v, n := viewOf(t, res)
	if n > 150<<10 {
		t.Errorf("a 1 MB rewrite's result is %d bytes", n)
	}
	if !strings.Contains(v.Note, "more changed places are not shown") || v.Added != 13333 || v.Removed != 13333 {
		t.Errorf("the rewrite's view: %d hunks, note %q, +%d -%d", len(v.Hunks), v.Note, v.Added, v.Removed)
	}
	t.Logf("a 1 MB rewrite: %d bytes of result, %d hunks, %q", n, len(v.Hunks), v.Note)

	one := strings.Repeat("é", 500_000)
	res = s.call(t, "write_document", map[string]any{"document": "Big", "text": one})
	v, n = viewOf(t, res)
	if n > 150<<10 || !strings.Contains(v.Note, "folded") || !strings.Contains(v.Note, "cut") {
		t.Errorf("a 1 MB line: %d bytes, note %q", n, v.Note)
	}
	for _, h := range v.Hunks {
		for _, l := range h.Lines {
			if len(l) > 310 || !json.Valid([]byte(`"`+strings.ReplaceAll(l, `"`, `\"`)+`"`)) {
				t.Errorf("a line of %d bytes", len(l))
			}
		}
	}
	t.Logf("a 1 MB line: %d bytes of result, %q", n, v.Note)
}

func TestDeclaresApps(t *testing.T) {
	for _, c := range []struct {
		ext  string
		want bool
	}{
		{`{}`, false},
		{`{"io.modelcontextprotocol/ui":{}}`, true},
		{`{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`, true},
		{`{"io.modelcontextprotocol/ui":{"mimeTypes":["text/uri-list"]}}`, false},
		{`{"io.modelcontextprotocol/ui":{"mimeTypes":"text/html;profile=mcp-app"}}`, false},
		{`{"io.modelcontextprotocol/ui":true}`, true},
		{`{"io.modelcontextprotocol/ui":false}`, false},
		{`{"io.modelcontextprotocol/ui":null}`, false},
		{`{"io.modelcontextprotocol/ui":"yes"}`, false},
		{`{"io.modelcontextprotocol/uix":{}}`, false},
	} {
		var ext map[string]any
		if err := json.Unmarshal([]byte(c.ext), &ext); err != nil {
			t.Fatal(err)
		}
		if got := tools.DeclaresApps(ext); got != c.want {
			t.Errorf("DeclaresApps(%s) = %v, want %v", c.ext, got, c.want)
		}
	}
}

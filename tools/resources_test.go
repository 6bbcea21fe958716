package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// resourceFixture is a data file with documents in the space "personal" (and one in
// "elsewhere"), and an in-process client of a server on "personal".
type resourceFixture struct {
	db      kv.DB
	c       *client.Client
	docs    *docstore.Store
	plan    docstore.Document // "Launch plan", 3 versions, saved last
	foreign docstore.Document // "Secret plan", in the space "elsewhere"
}

func newResourceFixture(t *testing.T, extra int) *resourceFixture {
	t.Helper()
	db := kvtest.Open(t)
	ctx := t.Context()
	at := time.Date(2026, 11, 8, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { at = at.Add(time.Minute); return at }
	f := &resourceFixture{db: db, docs: docstore.New(db, "personal").WithClock(clock)}
	ana := docstore.Author{By: "person:ana"}
	for i := range extra {
		if _, err := f.docs.Create(ctx, fmt.Sprintf("Note %03d", i), fmt.Sprintf("note %d\n", i), docstore.KindWrite, ana); err != nil {
			t.Fatal(err)
		}
	}
	saved, err := f.docs.Create(ctx, "Launch plan", "Record the trailer.\n", docstore.KindWrite, ana)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.docs.Append(ctx, saved.Document.ID, "Book the studio.", ana); err != nil {
		t.Fatal(err)
	}
	last, err := f.docs.Edit(ctx, saved.Document.ID, "trailer", "teaser", docstore.Author{By: "agent:north", For: "person:ana"})
	if err != nil {
		t.Fatal(err)
	}
	f.plan = last.Document
	other, err := docstore.New(db, "elsewhere").WithClock(clock).Create(ctx, "Secret plan", "not yours\n", docstore.KindWrite, ana)
	if err != nil {
		t.Fatal(err)
	}
	f.foreign = other.Document

	srv, err := New(db, Config{Space: "personal", For: "ana", Thread: "here"})
	if err != nil {
		t.Fatal(err)
	}
	f.c, err = client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.c.Close() })
	if err := f.c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "resources-test", Version: "1"}
	res, err := f.c.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	if res.Capabilities.Resources == nil || res.Capabilities.Completions == nil || res.Capabilities.Logging == nil {
		t.Fatalf("capabilities lack resources, completions or logging: %+v", res.Capabilities)
	}
	return f
}

func (f *resourceFixture) read(t *testing.T, uri string) (*mcp.ReadResourceResult, error) {
	t.Helper()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	return f.c.ReadResource(context.Background(), req)
}

func (f *resourceFixture) complete(t *testing.T, ref any, arg, value string, known map[string]string) []string {
	t.Helper()
	req := mcp.CompleteRequest{}
	req.Params.Ref = ref
	req.Params.Argument = mcp.CompleteArgument{Name: arg, Value: value}
	req.Params.Context = mcp.CompleteContext{Arguments: known}
	res, err := f.c.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("completing %s=%q: %v", arg, value, err)
	}
	return res.Completion.Values
}

func TestResourcesListLatestFirst(t *testing.T) {
	f := newResourceFixture(t, 2)
	res, err := f.c.ListResources(context.Background(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res.Resources {
		names = append(names, r.Name)
	}
	if want := []string{"Launch plan", "Note 001", "Note 000"}; !slices.Equal(names, want) {
		t.Fatalf("resources/list gave %q, want %q (newest made first, no other space's)", names, want)
	}
	r := res.Resources[0]
	if r.URI != "compass://document/"+f.plan.ID || r.MIMEType != "text/markdown" || r.Size == nil || *r.Size != int64(f.plan.Bytes) {
		t.Errorf("the first resource is %+v", r)
	}
	if want := "Version 3, saved by north for ana " + when(f.plan.Saved) + ". Opens: Record the teaser."; r.Description != want {
		t.Errorf("its description says %q, want %q", r.Description, want)
	}
	if r.Annotations == nil || r.Annotations.LastModified == "" {
		t.Errorf("it has no lastModified: %+v", r.Annotations)
	}
	if res.NextCursor != "" {
		t.Errorf("one page of 3 has a next cursor %q", res.NextCursor)
	}
}

// Pages of resources/list, with documents saved, made and deleted between them: every
// document there from the first page to the last is listed once, none skipped.
func TestResourcesListPages(t *testing.T) {
	f := newResourceFixture(t, 2*ResourcePage+4)
	ctx := t.Context()
	var uris []string
	var cursor mcp.Cursor
	pages := 0
	var deleted string
	ana := docstore.Author{By: "person:ana"}
	for {
		req := mcp.ListResourcesRequest{}
		req.Params.Cursor = cursor
		res, err := f.c.ListResourcesByPage(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
		if pages == 1 {
			// Between pages: the oldest documents are saved (to the front of "latest saved
			// first"), one is made, and one not yet listed is deleted.
			for i := range 5 {
				if _, err := f.docs.Append(ctx, fmt.Sprintf("Note %03d", i), "saved between pages", ana); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.docs.Create(ctx, "Made between pages", "new\n", docstore.KindWrite, ana); err != nil {
				t.Fatal(err)
			}
			d, err := f.docs.Delete(ctx, "Note 010", ana)
			if err != nil {
				t.Fatal(err)
			}
			deleted = DocumentURI(d.ID)
		}
	}
	if total := 2*ResourcePage + 4; len(uris) != total || pages != 3 {
		t.Fatalf("listed %d resources in %d pages, want %d (all but the one deleted meanwhile) in 3", len(uris), pages, total)
	}
	if uris[0] != DocumentURI(f.plan.ID) {
		t.Errorf("the first page doesn't start with the newest document")
	}
	if slices.Contains(uris, DocumentURI(f.foreign.ID)) || slices.Contains(uris, deleted) {
		t.Errorf("another space's document, or one deleted before its page, was listed")
	}
	for i := range 5 {
		d, err := view(t, f.docs, func(r *docstore.Reader) (docstore.Document, error) { return r.Find(fmt.Sprintf("Note %03d", i)) })
		if err != nil || !slices.Contains(uris, DocumentURI(d.ID)) {
			t.Errorf("Note %03d, saved between pages, was skipped (%v)", i, err)
		}
	}
	slices.Sort(uris)
	if len(slices.Compact(uris)) != len(uris) {
		t.Errorf("a document was listed twice")
	}

	// A cursor this server didn't give is refused, not answered with an empty page.
	req := mcp.ListResourcesRequest{}
	req.Params.Cursor = mcp.Cursor("c29tZW9uZSBlbHNlJ3M=") // base64, not ours
	if res, err := f.c.ListResourcesByPage(ctx, req); err == nil || !strings.Contains(err.Error(), "not one this server gave") {
		t.Errorf("another's cursor: %+v, %v; want it refused", res, err)
	}
}

func TestResourcesEmptySpace(t *testing.T) {
	db := kvtest.Open(t)
	srv, err := New(db, Config{Space: "personal"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	res, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Resources == nil || len(res.Resources) != 0 {
		t.Errorf("an empty space lists %#v, want []", res.Resources)
	}
}

func TestResourceTemplates(t *testing.T) {
	f := newResourceFixture(t, 0)
	res, err := f.c.ListResourceTemplates(context.Background(), mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rt := range res.ResourceTemplates {
		got = append(got, rt.URITemplate.Raw()+" "+rt.MIMEType)
	}
	slices.Sort(got)
	want := []string{"compass://document/{id} text/markdown", "compass://document/{id}/v/{n} text/markdown"}
	if !slices.Equal(got, want) {
		t.Errorf("templates are %q, want %q", got, want)
	}
}

func TestReadDocumentResource(t *testing.T) {
	f := newResourceFixture(t, 1)
	for _, tc := range []struct{ uri, text string }{
		{DocumentURI(f.plan.ID), "Record the teaser.\n\nBook the studio.\n"},
		{DocumentURI(f.plan.ID) + "/v/1", "Record the trailer.\n"},
		{DocumentURI(f.plan.ID) + "/v/3", "Record the teaser.\n\nBook the studio.\n"},
	} {
		res, err := f.read(t, tc.uri)
		if err != nil {
			t.Errorf("reading %s: %v", tc.uri, err)
			continue
		}
		if len(res.Contents) != 1 {
			t.Errorf("reading %s gave %d contents", tc.uri, len(res.Contents))
			continue
		}
		text, ok := res.Contents[0].(mcp.TextResourceContents)
		if !ok || text.URI != tc.uri || text.MIMEType != "text/markdown" || text.Text != tc.text {
			t.Errorf("reading %s gave %#v, want text/markdown %q", tc.uri, res.Contents[0], tc.text)
		}
	}
}

func TestReadDocumentResourceRefusals(t *testing.T) {
	f := newResourceFixture(t, 0)
	for _, tc := range []struct{ uri, want string }{
		{DocumentURI(f.foreign.ID), `no document "` + f.foreign.ID + `" in this space`},
		{DocumentURI("01JDXAAAAAAAAAAAAAAAAAAAAA"), "no document"},
		{DocumentURI("Launch%20plan"), `no document "Launch plan" in this space`}, // a title is not an id
		{DocumentURI("launch"), "no document"},
		{DocumentURI(f.plan.ID) + "/v/7", "Launch plan has versions 1 to 3: there's no version 7"},
		{DocumentURI(f.plan.ID) + "/v/0", "names no version"},
		{DocumentURI(f.plan.ID) + "/v/x", "names no version"},
		{DocumentURI(""), "names no document"},
		{"compass://elsewhere/" + f.plan.ID, "not found"},
	} {
		res, err := f.read(t, tc.uri)
		if err == nil {
			t.Errorf("reading %s gave %v, want an error", tc.uri, res)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("reading %s: %v, want it to say %q", tc.uri, err, tc.want)
		}
	}
	// The server is still there.
	if _, err := f.read(t, DocumentURI(f.plan.ID)); err != nil {
		t.Errorf("after the refusals: %v", err)
	}
}

func TestCompletions(t *testing.T) {
	f := newResourceFixture(t, 3)
	ctx := t.Context()
	convs := threads.New(f.db, "personal")
	for _, c := range []struct{ id, title string }{{"pricing", "Pricing"}, {"here", "This one"}, {"launch-talk", "Launch talk"}} {
		if _, err := convs.Say(ctx, c.id, c.title, threads.Message{From: "person:ana", Text: "hello"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := threads.New(f.db, "elsewhere").Say(ctx, "private", "Private", threads.Message{From: "person:ana", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	latest := mcp.ResourceReference{Type: "ref/resource", URI: "compass://document/{id}"}
	version := mcp.ResourceReference{Type: "ref/resource", URI: "compass://document/{id}/v/{n}"}
	prompt := mcp.PromptReference{Type: "ref/prompt", Name: "charter"}
	for _, tc := range []struct {
		name  string
		ref   any
		arg   string
		value string
		known map[string]string
		want  []string
	}{
		{"ids by title words", latest, "id", "plan launch", nil, []string{f.plan.ID}},
		{"ids by id prefix", latest, "id", strings.ToLower(f.plan.ID[:20]), nil, []string{f.plan.ID}},
		{"no other space's", latest, "id", "secret", nil, []string{}},
		{"versions latest first", version, "n", "", map[string]string{"id": f.plan.ID}, []string{"3", "2", "1"}},
		{"versions by prefix", version, "n", "2", map[string]string{"id": f.plan.ID}, []string{"2"}},
		{"versions of another space's", version, "n", "", map[string]string{"id": f.foreign.ID}, []string{}},
		{"titles, prefix first", prompt, "document", "note", nil, []string{"Note 002", "Note 001", "Note 000"}},
		{"titles by words", prompt, "document", "plan", nil, []string{"Launch plan"}},
		{"conversations, not this one", prompt, "conversation", "", nil, []string{"launch-talk", "pricing"}},
		{"conversations by title", prompt, "conversation", "pric", nil, []string{"pricing"}},
		{"other arguments", prompt, "topic", "x", nil, []string{}},
		{"another's prompt", mcp.PromptReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"}, "arg1", "test", nil, []string{}},
		{"another template", mcp.ResourceReference{Type: "ref/resource", URI: "test://template/{id}/data"}, "id", "", nil, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := f.complete(t, tc.ref, tc.arg, tc.value, tc.known)
			if !slices.Equal(got, tc.want) {
				t.Errorf("completing %s=%q gave %q, want %q", tc.arg, tc.value, got, tc.want)
			}
		})
	}
}

func TestCompletionsAtMostAHundred(t *testing.T) {
	f := newResourceFixture(t, 120)
	req := mcp.CompleteRequest{}
	req.Params.Ref = mcp.PromptReference{Type: "ref/prompt", Name: "charter"}
	req.Params.Argument = mcp.CompleteArgument{Name: "document", Value: "note"}
	res, err := f.c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Completion; len(c.Values) != 100 || !c.HasMore || c.Total != 120 {
		t.Errorf("120 matches gave %d values, hasMore %v, total %d; want 100, true, 120", len(c.Values), c.HasMore, c.Total)
	}
}

func TestParseCursor(t *testing.T) {
	for _, id := range []string{"01JDX0000000000000000000000", "x"} {
		if got, ok := parseCursor(string(makeCursor(id))); !ok || got != id {
			t.Errorf("makeCursor(%q) reads back as %q, %v", id, got, ok)
		}
	}
	for _, bad := range []string{"!", "bm90IG91cnM=", string(makeCursor("x"))[:4], string(makeCursor(""))} {
		if _, ok := parseCursor(bad); ok {
			t.Errorf("parseCursor(%q) took it", bad)
		}
	}
}

// A resources/list or resources/read the client canceled is no failure of the server's: it
// is said as canceled, and logged at debug only, as a canceled tool call is (define).
func TestCanceledResourceIsNoFailure(t *testing.T) {
	db := kvtest.Open(t)
	var logged bytes.Buffer
	s := &Server{cfg: Config{Space: "personal", For: "ana"}, db: db, docs: docstore.New(db, "personal"), threads: threads.New(db, "personal"),
		log: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo})), pages: new(sync.Map)}
	saved, err := s.docs.Create(t.Context(), "Plan", "x\n", docstore.KindWrite, docstore.Author{By: "person:ana"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	listErr := s.prepareResources(ctx, 1, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`))
	req := mcp.ReadResourceRequest{}
	req.Params.URI = DocumentURI(saved.Document.ID)
	_, readErr := s.readResource(ctx, req)
	for what, err := range map[string]error{"resources/list": listErr, "resources/read": readErr} {
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "canceled") || strings.Contains(err.Error(), "failed inside the server") {
			t.Errorf("%s on a canceled context: %v, want it said as canceled", what, err)
		}
	}
	if logged.Len() > 0 {
		t.Errorf("a canceled listing and read logged, at info and above:\n%s", logged.String())
	}
	// The same calls on a live context are answered.
	if err := s.prepareResources(t.Context(), 2, json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"resources/list"}`)); err != nil {
		t.Errorf("resources/list: %v", err)
	}
	if _, err := s.readResource(t.Context(), req); err != nil {
		t.Errorf("resources/read: %v", err)
	}
}

// A URI that names nothing here is a resource not found in both protocol eras (SEP-2164):
// the era's code (-32002 before 2026-07-28, -32602 from it), the URI asked for in
// data.uri, and a message saying what to do; never an internal error. That holds for a
// document URI naming no document or version and for a URI no template matches.
func TestResourceNotFoundBothEras(t *testing.T) {
	f := newResourceFixture(t, 0)
	srv, err := New(f.db, Config{Space: "personal", For: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	for _, uri := range []string{
		DocumentURI("01JDXAAAAAAAAAAAAAAAAAAAAA"),
		DocumentURI(f.foreign.ID),
		DocumentURI(f.plan.ID) + "/v/7",
		DocumentURI(""),
		"test://nonexistent-resource-for-conformance-testing",
		"ui://compass/nothing",
		"",
	} {
		for _, era := range []struct {
			name, meta string
			code       int
		}{
			{"2025-11-25", "", mcp.RESOURCE_NOT_FOUND},
			{"2026-07-28", modernMeta + ",", mcp.INVALID_PARAMS},
		} {
			uriJSON, _ := json.Marshal(uri)
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{%s"uri":%s}}`, era.meta, uriJSON)
			raw, _ := json.Marshal(srv.HandleMessage(t.Context(), json.RawMessage(msg)))
			var got struct {
				Error *struct {
					Code    int
					Message string
					Data    struct{ URI *string }
				}
			}
			if err := json.Unmarshal(raw, &got); err != nil || got.Error == nil {
				t.Errorf("%s: reading %q: %s, want an error", era.name, uri, raw)
				continue
			}
			if got.Error.Code != era.code || got.Error.Data.URI == nil || *got.Error.Data.URI != uri {
				t.Errorf("%s: reading %q: %s, want code %d with data.uri", era.name, uri, raw, era.code)
			}
			if !strings.Contains(got.Error.Message, "resources/list") && !strings.Contains(got.Error.Message, "there's no version") {
				t.Errorf("%s: reading %q: %q says nothing of what to do", era.name, uri, got.Error.Message)
			}
		}
	}
}

package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/charter"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// isolation is a data file with a document and a conversation in the space "launch" (the
// other space) and in "personal" (ours), and a client of a server on "personal".
type isolation struct {
	db               kv.DB
	c                *client.Client
	secret           docstore.Document // "Secret plan" in launch, 2 versions
	secretText       string
	secretConv       string // "launch-chat" in launch
	secretMsgs       []threads.Message
	ourConv, ourText string
}

func newIsolation(t *testing.T) *isolation {
	t.Helper()
	db := kvtest.Open(t)
	ctx := t.Context()
	ana := docstore.Author{By: "person:ana"}
	launch := docstore.New(db, "launch")
	if _, err := launch.Create(ctx, "Secret plan", "launch only\n", docstore.KindWrite, ana); err != nil {
		t.Fatal(err)
	}
	saved, err := launch.Append(ctx, "Secret plan", "Keep it quiet.", ana)
	if err != nil {
		t.Fatal(err)
	}
	is := &isolation{db: db, secret: saved.Document, secretConv: "launch-chat"}
	launch.View(ctx, func(r *docstore.Reader) error {
		_, v, _ := r.Read(is.secret.ID, 0)
		is.secretText = v.Text
		return nil
	})
	lt := threads.New(db, "launch")
	for _, text := range []string{"The launch is on the 12th.", "Tell nobody outside launch."} {
		m, err := lt.Say(ctx, is.secretConv, "Launch chat", threads.Message{From: "person:ana", Text: text})
		if err != nil {
			t.Fatal(err)
		}
		is.secretMsgs = append(is.secretMsgs, m)
	}
	// Ours: a document and a conversation, so that answers aren't empty for want of any.
	if _, err := docstore.New(db, "personal").Create(ctx, "Public notes", "nothing secret\n", docstore.KindWrite, ana); err != nil {
		t.Fatal(err)
	}
	is.ourConv, is.ourText = "chat", "Hello from personal."
	if _, err := threads.New(db, "personal").Say(ctx, is.ourConv, "Chat", threads.Message{From: "person:ana", Text: is.ourText}); err != nil {
		t.Fatal(err)
	}
	srv, err := tools.New(db, tools.Config{Space: "personal", Agent: "north", For: "ana", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	is.c, err = client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { is.c.Close() })
	if err := is.c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "isolation", Version: "1"}
	if _, err := is.c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return is
}

func (is *isolation) call(t *testing.T, tool string, args map[string]any) (string, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := is.c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// secrets are what of the other space no answer may show.
func (is *isolation) secrets() []string {
	s := []string{is.secret.ID, "Secret plan", "launch only", "Keep it quiet", is.secretConv, "Launch chat"}
	for _, m := range is.secretMsgs {
		s = append(s, m.ID, m.Text)
	}
	return s
}

// shows returns the first secret that text shows, other than those it was given (named).
func (is *isolation) shows(text string, named ...string) string {
	for _, s := range is.secrets() {
		given := false
		for _, n := range named {
			given = given || strings.Contains(n, s)
		}
		if !given && strings.Contains(text, s) {
			return s
		}
	}
	return ""
}

// Every way of naming another space's document or conversation, through all seven tools,
// the resources and the completions, is "not found" (as if it did not exist), shows nothing
// of it, and changes nothing of it.
func TestAnotherSpaceIsInvisible(t *testing.T) {
	is := newIsolation(t)
	id := is.secret.ID
	names := []string{id, strings.ToLower(id), " " + id + " ", "Secret plan", "SECRET PLAN", "secret", "plan secret", "Secret", "plan"}
	for _, name := range names {
		for _, tc := range []struct {
			tool string
			args map[string]any
		}{
			{"read_document", map[string]any{"document": name}},
			{"read_document", map[string]any{"document": name, "version": 1}},
			{"read_document", map[string]any{"document": name, "version": 2}},
			{"read_document", map[string]any{"document": name, "since": 1}},
			{"read_document", map[string]any{"document": name, "lines": "1-"}},
			{"write_document", map[string]any{"document": name, "text": "overwritten\n"}},
			{"write_document", map[string]any{"document": name, "text": "merged\n", "version": 1}},
			{"write_document", map[string]any{"document": name, "title": "Stolen", "text": "renamed\n"}},
			{"append_document", map[string]any{"document": name, "text": "appended"}},
			{"edit_document", map[string]any{"document": name, "old": "launch only", "new": "edited"}},
		} {
			text, isError := is.call(t, tc.tool, tc.args)
			want := fmt.Sprintf("No document %q in this space", name)
			if !isError || !strings.HasPrefix(text, want) {
				t.Errorf("%s %v = %q (isError %v), want %q", tc.tool, tc.args, text, isError, want)
			}
			if s := is.shows(text, name); s != "" {
				t.Errorf("%s %v shows %q of the other space: %q", tc.tool, tc.args, s, text)
			}
		}
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"list_documents", nil, "Public notes"},
		{"list_documents", map[string]any{"limit": 500}, "Public notes"},
		{"list_conversations", nil, is.ourText},
		{"list_conversations", map[string]any{"limit": 500}, is.ourText},
		{"read_conversation", map[string]any{"conversation": is.secretConv}, `No conversation "launch-chat" in this space`},
		{"read_conversation", map[string]any{"conversation": "LAUNCH-CHAT"}, "No conversation"},
		{"read_conversation", map[string]any{"conversation": is.secretConv, "limit": 1}, "No conversation"},
		{"read_conversation", map[string]any{"conversation": is.secretConv, "before": is.secretMsgs[1].ID}, "No conversation"},
		{"read_conversation", map[string]any{"conversation": is.secretMsgs[0].ID}, "No conversation"},
		{"read_conversation", map[string]any{"conversation": is.ourConv, "before": is.secretMsgs[1].ID}, "before must be the id of a message"},
	} {
		text, _ := is.call(t, tc.tool, tc.args)
		if !strings.Contains(text, tc.want) {
			t.Errorf("%s %v = %q, want %q in it", tc.tool, tc.args, text, tc.want)
		}
		var given []string
		for _, v := range tc.args {
			given = append(given, fmt.Sprint(v))
		}
		if s := is.shows(text, given...); s != "" {
			t.Errorf("%s %v shows %q of the other space: %q", tc.tool, tc.args, s, text)
		}
	}

	// Resources: named by id only, and only this space's.
	ctx := t.Context()
	for _, uri := range []string{
		tools.DocumentURI(id),
		tools.DocumentURI(id) + "/v/1",
		tools.DocumentURI(id) + "/v/2",
		tools.DocumentURI(strings.ToLower(id)),
		tools.DocumentURI(url.PathEscape("Secret plan")),
		tools.DocumentURI("secret") + "/v/1",
		tools.DocumentURI(url.PathEscape(id+"/../"+id)) + "/v/1",
	} {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := is.c.ReadResource(ctx, req)
		if err == nil {
			t.Errorf("resources/read %s: %v, want not found", uri, res)
			continue
		}
		if !strings.Contains(err.Error(), "no document") && !strings.Contains(err.Error(), "names no") {
			t.Errorf("resources/read %s: %v, want not found", uri, err)
		}
		unescaped, _ := url.PathUnescape(uri)
		if s := is.shows(err.Error(), unescaped); s != "" {
			t.Errorf("resources/read %s shows %q of the other space: %v", uri, s, err)
		}
	}
	list, err := is.c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(list); is.shows(string(raw)) != "" {
		t.Errorf("resources/list shows %q of the other space", is.shows(string(raw)))
	}
	for _, tc := range []struct {
		ref   any
		arg   string
		value string
		known map[string]string
	}{
		{mcp.ResourceReference{Type: "ref/resource", URI: "compass://document/{id}"}, "id", id[:6], nil},
		{mcp.ResourceReference{Type: "ref/resource", URI: "compass://document/{id}"}, "id", "secret", nil},
		{mcp.ResourceReference{Type: "ref/resource", URI: "compass://document/{id}/v/{n}"}, "n", "", map[string]string{"id": id}},
		{mcp.PromptReference{Type: "ref/prompt", Name: charter.PromptName}, "document", "Secret", nil},
		{mcp.PromptReference{Type: "ref/prompt", Name: charter.PromptName}, "conversation", "launch", nil},
	} {
		req := mcp.CompleteRequest{}
		req.Params.Ref = tc.ref
		req.Params.Argument = mcp.CompleteArgument{Name: tc.arg, Value: tc.value}
		req.Params.Context = mcp.CompleteContext{Arguments: tc.known}
		res, err := is.c.Complete(ctx, req)
		if err != nil {
			continue // refusing to complete shows nothing either
		}
		if len(res.Completion.Values) > 0 && (tc.arg == "n" || is.shows(strings.Join(res.Completion.Values, "\n")) != "") {
			t.Errorf("completing %s=%q offers %q", tc.arg, tc.value, res.Completion.Values)
		}
	}

	// Our own document may take the other's title: it is free here.
	if text, isError := is.call(t, "write_document", map[string]any{"title": "Secret plan", "text": "ours\n"}); isError || strings.Contains(text, id) {
		t.Errorf("write_document of the other space's title here: %q", text)
	}

	// Nothing of the other space changed.
	var (
		d     docstore.Document
		v     docstore.Version
		total int
	)
	err = docstore.New(is.db, "launch").View(ctx, func(r *docstore.Reader) (err error) {
		if d, v, err = r.Read(id, 0); err != nil {
			return err
		}
		_, total, err = r.List(10)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != "Secret plan" || d.Version != 2 || v.Text != is.secretText {
		t.Errorf("the other space's document is now %q, version %d: %q", d.Title, d.Version, v.Text)
	}
	if total != 1 {
		t.Errorf("the other space has %d documents, want 1", total)
	}
	var msgs []threads.Message
	err = threads.New(is.db, "launch").View(ctx, func(r *threads.Reader) (err error) {
		msgs, _, err = r.Page(is.secretConv, 100, "")
		return err
	})
	if err != nil || len(msgs) != len(is.secretMsgs) {
		t.Errorf("the other space's conversation has %d messages (%v), want %d", len(msgs), err, len(is.secretMsgs))
	}
}

package tools_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/tools"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// list_documents sign_in asks Config.SignIn for a link to the document it names (a title,
// an id or a link; / for the list) and gives it as it is; a server without SignIn, or one
// whose SignIn says no, refuses, saying how the person signs in instead.
func TestSignInLinkOnlyWhereAllowed(t *testing.T) {
	db := kvtest.Open(t)
	saved, err := docstore.New(db, "personal").Create(t.Context(), "Launch plan", "one\n", docstore.KindWrite, docstore.Author{By: "person:ana"})
	if err != nil {
		t.Fatal(err)
	}
	id := saved.Document.ID
	review := false
	call := func(signIn func(context.Context, string) (string, error), name string) (string, bool) {
		t.Helper()
		srv, err := tools.New(db, tools.Config{Space: "personal", Agent: "north", For: "ana", SignIn: signIn, Review: review, Logger: slog.New(slog.DiscardHandler)})
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
		init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
		if _, err := c.Initialize(ctx, init); err != nil {
			t.Fatal(err)
		}
		req := mcp.CallToolRequest{}
		req.Params.Name = "list_documents"
		req.Params.Arguments = map[string]any{"sign_in": name}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(mcp.TextContent).Text, res.IsError
	}
	var asked []string
	link := func(_ context.Context, next string) (string, error) {
		asked = append(asked, next)
		return "http://127.0.0.1:7411/signin?code=c0de", nil
	}
	for name, want := range map[string]string{"Launch plan": "/document/" + id, id: "/document/" + id, "http://127.0.0.1:7411/document/" + id: "/document/" + id, "/": "/"} {
		asked = nil
		text, isErr := call(link, name)
		if isErr || !strings.Contains(text, "http://127.0.0.1:7411/signin?code=c0de") || len(asked) != 1 || asked[0] != want {
			t.Errorf("sign_in %q: %v %q, asked for %v, want %s", name, isErr, text, asked, want)
		}
	}
	if text, isErr := call(link, "No such plan"); !isErr || !strings.Contains(text, "No document") {
		t.Errorf("sign_in of a document that isn't: %v %q", isErr, text)
	}
	no := func(context.Context, string) (string, error) { return "", tools.ErrNoSignIn }
	for what, signIn := range map[string]func(context.Context, string) (string, error){"no SignIn": nil, "SignIn says no": no} {
		if text, isErr := call(signIn, "/"); !isErr || strings.Contains(text, "signin?code") || !strings.Contains(text, "compass-mcp open") {
			t.Errorf("%s: %v %q", what, isErr, text)
		}
	}
	// In review mode, nothing: a link signs in as the person, who decides on the agent's
	// proposals (issue 34). SignIn isn't even asked.
	review = true
	asked = nil
	if text, isErr := call(link, "/"); !isErr || strings.Contains(text, "signin?code") || !strings.Contains(text, "compass-mcp open") || len(asked) != 0 {
		t.Errorf("review mode: %v %q, SignIn asked %v", isErr, text, asked)
	}
}

package browser

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// agentIn calls a tool as an MCP client of /spaces/{space}/mcp with token, over HTTP, as a
// teammate's editor does, and returns the answer's text.
func (s *server) agentIn(t *testing.T, space, token, tool string, args map[string]any) string {
	t.Helper()
	c, err := client.NewStreamableHttpClient(s.URL+"/spaces/"+space+"/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "north", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize on /spaces/%s/mcp: %v", space, err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s on /spaces/%s/mcp: %v", tool, space, err)
	}
	var b strings.Builder
	for _, content := range res.Content {
		if tc, ok := content.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		t.Fatalf("%s on /spaces/%s/mcp: %s", tool, space, b.String())
	}
	return b.String()
}

// A link from an answer given on /spaces/launch/mcp opens that document for Ana, whose
// configured space is personal but who is a member of launch; the header says launch and
// offers her spaces. Ben, not a member of launch, is told there is no such document.
func TestALinkFromAnotherSpacesAnswer(t *testing.T) {
	s := startServer(t)
	s.run(t, "people", "set", "ben", "Ben")
	s.run(t, "members", "add", "launch", "ana")
	s.run(t, "members", "add", "design", "ben")
	token := strings.TrimSpace(s.run(t, "tokens", "add", "--for", "ana", "--agent", "north"))
	answer := s.agentIn(t, "launch", token, "write_document", map[string]any{"title": "Launch checklist", "text": "# Launch checklist\n\nBook the studio for the trailer.\n"})
	m := linkInAnswer.FindStringSubmatch(answer)
	if m == nil {
		t.Fatalf("no page link in the answer: %s", answer)
	}
	link := m[1]

	// compass-mcp open takes the link (Ana's configured space is personal) and leads to it.
	ctx := newBrowser(t)
	navigate(t, ctx, strings.TrimSpace(s.run(t, "open", "--browser=false", link)))
	waitText(t, ctx, "Book the studio for the trailer.")
	navigate(t, ctx, s.URL+"/")
	waitText(t, ctx, "Documents")
	navigate(t, ctx, link)
	waitText(t, ctx, "Book the studio for the trailer.")
	got := pageText(t, ctx)
	for _, want := range []string{"Launch checklist", "version 1 of 1", "north for Ana"} {
		if !strings.Contains(got, want) {
			t.Errorf("the document page lacks %q:\n%s", want, got)
		}
	}
	if sp := eval[string](t, ctx, `document.querySelector(".spaces summary").textContent`); sp != "launch" {
		t.Errorf("the header's space is %q, want launch", sp)
	}
	// The switcher leads to launch's documents, where the link's document is listed.
	click(t, ctx, ".spaces summary")
	shot(t, ctx, "spaces")
	click(t, ctx, `.spaces a[href="/?space=launch"]`)
	waitText(t, ctx, "Launch checklist")
	if got := pageText(t, ctx); strings.Contains(got, "No documents in this space") {
		t.Errorf("launch's list:\n%s", got)
	}

	ben := newBrowser(t)
	navigate(t, ben, strings.TrimSpace(s.run(t, "open", "--browser=false", "--for", "ben", "--space", "design")))
	waitText(t, ben, "Documents")
	navigate(t, ben, link)
	got = pageText(t, ben)
	if !strings.Contains(got, "No such document") || strings.Contains(got, "Book the studio") || strings.Contains(got, "Launch checklist") || strings.Contains(got, "launch") {
		t.Fatalf("Ben, not a member of launch, opening its link sees:\n%s", got)
	}
}

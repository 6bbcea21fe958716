package interop

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) { testbin.Main(m) }

const (
	// oldest is the first protocol version there was, and the oldest the server negotiates.
	oldest = "2024-11-05"
	// newestLegacy is the newest version negotiated in initialize, what most clients use.
	newestLegacy = "2025-11-25"
	// newest is the stateless protocol (server/discover, no initialize), which the server
	// negotiates with a client that asks for the latest it knows.
	newest = "2026-07-28"
	// clientName is what versions made through this client are signed with.
	clientName = "go-sdk-interop"
)

func serverEnv(data string) []string {
	return append(os.Environ(), "COMPASS_DATA="+data, "COMPASS_ME=ana", "COMPASS_SPACE=personal", "COMPASS_LOG=info", "TZ=UTC")
}

// seeded returns a fresh data file holding testdata's conversations, imported with the
// testbin.Path as a person would.
func seeded(t *testing.T) string {
	t.Helper()
	data := kvtest.Data(t, t.TempDir(), "compass.db")
	cmd := exec.Command(testbin.Path, "import", "../../testdata/import/pricing.jsonl")
	cmd.Env = serverEnv(data)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compass-mcp import: %v\n%s", err, out)
	}
	return data
}

// connectStdio starts the testbin.Path the way an MCP host does, on a seeded data file, and
// connects to it.
func connectStdio(t *testing.T, version string) *mcp.ClientSession {
	t.Helper()
	return stdioOn(t, seeded(t), version)
}

// stdioOn is connectStdio on data.
func stdioOn(t *testing.T, data, version string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(testbin.Path, "serve")
	cmd.Env = serverEnv(data)
	cmd.Stderr = &logWriter{t: t}
	return connect(t, &mcp.CommandTransport{Command: cmd}, version)
}

// connectHTTP starts the testbin.Path serving streamable HTTP on a free loopback port, on a
// seeded data file, and connects to its endpoint.
func connectHTTP(t *testing.T, version string) *mcp.ClientSession {
	t.Helper()
	return httpOn(t, seeded(t), version)
}

// httpOn is connectHTTP on data.
func httpOn(t *testing.T, data, version string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(testbin.Path, "serve", "--http", "127.0.0.1:0")
	cmd.Env = serverEnv(data)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the HTTP server ended with %v after SIGINT", err)
			}
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			t.Errorf("the HTTP server did not stop within 15s of SIGINT")
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := regexp.MustCompile(`url=(http://\S+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case url := <-urls:
		return connect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, version)
	case <-time.After(20 * time.Second):
		t.Fatal("the HTTP server said no URL within 20s")
	}
	return nil
}

func connect(t *testing.T, transport mcp.Transport, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1.0.0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting with protocol %s: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// logWriter passes the server's stderr to the test log, so a failure shows it.
type logWriter struct {
	t  *testing.T
	mu sync.Mutex
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.t.Logf("server: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestGoSDK(t *testing.T) {
	for _, transport := range []struct {
		name    string
		connect func(*testing.T, string) *mcp.ClientSession
	}{{"stdio", connectStdio}, {"http", connectHTTP}} {
		for _, version := range []string{oldest, newestLegacy, newest} {
			t.Run(transport.name+"/"+version, func(t *testing.T) {
				t.Parallel()
				cs := transport.connect(t, version)
				checkSession(t, cs, version)
			})
		}
	}
}

func checkSession(t *testing.T, cs *mcp.ClientSession, version string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	init := cs.InitializeResult()
	if init.ProtocolVersion != version {
		t.Errorf("asked for protocol %s, the server negotiated %s", version, init.ProtocolVersion)
	}
	if init.ServerInfo == nil || init.ServerInfo.Name != "compass-mcp" {
		t.Errorf("serverInfo is %+v, want compass-mcp", init.ServerInfo)
	} else if si := init.ServerInfo; si.Title != "Compass" || len(si.Icons) != 2 || !strings.HasPrefix(si.Icons[0].Source, "data:image/svg+xml;base64,") || !strings.HasPrefix(si.Icons[1].Source, "data:image/png;base64,") {
		t.Errorf("serverInfo's title %q and icons %d (want Compass, an SVG and a PNG as data URIs)", si.Title, len(si.Icons))
	}
	if !strings.Contains(init.Instructions, "read_document") || !strings.Contains(init.Instructions, "list_conversations") {
		t.Errorf("the instructions don't name the tools: %q", init.Instructions)
	}
	if caps := init.Capabilities; caps == nil || caps.Tools == nil || caps.Prompts == nil || caps.Resources == nil || caps.Completions == nil {
		t.Errorf("capabilities lack tools, prompts, resources or completions: %+v", caps)
	}

	checkTools(ctx, t, cs, version)
	id := checkRoundTrip(ctx, t, cs)
	checkRefusals(ctx, t, cs)
	checkConversations(ctx, t, cs)
	checkResources(ctx, t, cs, id)
	checkPromptAndCompletion(ctx, t, cs, id)
	// The stateless protocol (2026-07-28) has no ping or logging/setLevel (the SDK sends
	// them without its per-request _meta, and servers refuse them): older ones only.
	if version < newest {
		if err := cs.Ping(ctx, nil); err != nil {
			t.Errorf("ping: %v", err)
		}
		// Logging is deprecated from 2026-07-28 (SEP-2577), but clients of the older protocols
		// send logging/setLevel, and the server accepts it: checked on purpose.
		//lint:ignore SA1019 the deprecated logging feature is what is being checked, for older clients
		if init.Capabilities.Logging == nil {
			t.Errorf("the capabilities lack logging, which clients of %s may use", version)
		}
		//lint:ignore SA1019 as above
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Errorf("logging/setLevel: %v", err)
		}
	}
}

// hints are a tool's annotations as the contract wants them: every tool works on this space
// only (a closed world).
type hints struct{ readOnly, destructive, idempotent bool }

var theTools = map[string]hints{
	"list_documents":     {readOnly: true, idempotent: true},
	"read_document":      {readOnly: true, idempotent: true},
	"write_document":     {destructive: true, idempotent: true},
	"append_document":    {},
	"edit_document":      {destructive: true},
	"comment_document":   {},
	"list_conversations": {readOnly: true, idempotent: true},
	"read_conversation":  {readOnly: true, idempotent: true},
}

// checkTools checks tools/list: annotations.title repeats the title before 2026-07-28,
// whose clients read title alone (the repeat is left out).
func checkTools(ctx context.Context, t *testing.T, cs *mcp.ClientSession, version string) {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
		want, ok := theTools[tool.Name]
		if !ok {
			continue
		}
		a := tool.Annotations
		if a == nil {
			t.Errorf("%s has no annotations", tool.Name)
			continue
		}
		got := hints{readOnly: a.ReadOnlyHint, destructive: a.DestructiveHint != nil && *a.DestructiveHint, idempotent: a.IdempotentHint}
		if got != want || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s's annotations are readOnly %v, destructive %v, idempotent %v, openWorld %v; want %+v in a closed world",
				tool.Name, a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint, want)
		}
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("%s has no description or input schema", tool.Name)
		}
		if wantTitle := tool.Title; tool.Title == "" || version >= "2026-07-28" && a.Title != "" || version < "2026-07-28" && a.Title != wantTitle {
			t.Errorf("%s (%s): title %q, annotations' %q: want one title, repeated in the annotations before 2026-07-28", tool.Name, version, tool.Title, a.Title)
		}
	}
	// In the order a model should meet them: the documents (list, read, write, append,
	// edit, comment), then the conversations.
	want := []string{"list_documents", "read_document", "write_document", "append_document", "edit_document", "comment_document", "list_conversations", "read_conversation"}
	if !slices.Equal(names, want) {
		t.Errorf("tools/list gave %q, want the eight in this order: %q", names, want)
	}
}

// call calls a tool and returns its text and whether it was an error result.
func call(ctx context.Context, t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Errorf("%s answered with %T content, want text", tool, c)
			continue
		}
		b.WriteString(tc.Text)
	}
	return b.String(), res.IsError
}

func mustCall(ctx context.Context, t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, want string) string {
	t.Helper()
	text, isError := call(ctx, t, cs, tool, args)
	if isError || !strings.Contains(text, want) {
		t.Errorf("%s %v gave (isError %v):\n%s\nwant it to say %q", tool, args, isError, text, want)
	}
	return text
}

var idInLink = regexp.MustCompile(`/document/([0-9A-Z]{26})\)`)

// checkRoundTrip writes, appends to, edits and reads a document, and returns its id.
func checkRoundTrip(ctx context.Context, t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	mustCall(ctx, t, cs, "list_documents", map[string]any{}, "No documents in this space yet.")
	saved := mustCall(ctx, t, cs, "write_document", map[string]any{"title": "Launch plan", "text": "Record the trailer, then review the course page.\n"}, "as version 1: +1 \u22120 lines.")
	m := idInLink.FindStringSubmatch(saved)
	if m == nil {
		t.Fatalf("write_document's answer links no document id: %q", saved)
	}
	id := m[1]
	mustCall(ctx, t, cs, "append_document", map[string]any{"document": "Launch plan", "text": "- Book the studio for Tuesday."}, "as version 2: +2 \u22120 lines.")
	mustCall(ctx, t, cs, "edit_document", map[string]any{"document": "launch", "old": "Tuesday", "new": "Wednesday"}, "as version 3: +1 \u22121 lines.")
	want := "[Launch plan](/document/" + id + ") · version 3 of 3 · saved by " + clientName + " for ana "
	text := mustCall(ctx, t, cs, "read_document", map[string]any{"document": id}, want)
	if !strings.HasSuffix(text, "\n\nRecord the trailer, then review the course page.\n\n- Book the studio for Wednesday.\n") {
		t.Errorf("read_document's text is %q", text)
	}
	mustCall(ctx, t, cs, "read_document", map[string]any{"document": "Launch plan", "version": 1}, "version 1 of 3")
	mustCall(ctx, t, cs, "list_documents", map[string]any{"limit": 5}, "Documents here (1), latest saved first:\n- [Launch plan](/document/"+id+") · id "+id+" · version 3")
	return id
}

// checkRefusals makes mistakes a model makes, and wants error results that say what to do.
func checkRefusals(ctx context.Context, t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"edit_document", map[string]any{"document": "Launch plan", "old": "Record the podcast", "new": "x"}, "The text to replace isn't in [Launch plan]"},
		{"read_document", map[string]any{"document": "Lanch plan"}, `No document "Lanch plan" in this space: list_documents shows what's here.`},
		{"read_document", map[string]any{"document": "Launch plan", "version": 7}, "Launch plan has versions 1 to 3: there's no version 7."},
		{"edit_document", map[string]any{"document": "Launch plan", "old_text": "x", "new": "y"}, "edit_document takes document, old, new; it got old_text"},
	} {
		text, isError := call(ctx, t, cs, tc.tool, tc.args)
		if !isError || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v gave (isError %v) %q; want an error result saying %q", tc.tool, tc.args, isError, text, tc.want)
		}
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}}); err == nil {
		t.Errorf("calling a tool that doesn't exist didn't fail")
	}
}

// checkConversations reads the imported conversations: what was said, never the agents'
// private steps.
func checkConversations(ctx context.Context, t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	list := mustCall(ctx, t, cs, "list_conversations", map[string]any{}, "- pricing “Pricing” · 2 messages · last 2026-11-08 10:42")
	if !strings.Contains(list, "- trailer “Trailer”") {
		t.Errorf("list_conversations doesn't list the trailer conversation:\n%s", list)
	}
	page := mustCall(ctx, t, cs, "read_conversation", map[string]any{"conversation": "pricing"},
		"[2026-11-08 10:42] ana → north: Pricing: we settled on 12 a month.\n[2026-11-08 10:42] north: You said: Ana: Pricing: we settled on 12 a month.")
	if strings.Contains(page, "list_documents →") {
		t.Errorf("read_conversation shows a private step:\n%s", page)
	}
	text, isError := call(ctx, t, cs, "read_conversation", map[string]any{"conversation": "nowhere"})
	if want := `No conversation "nowhere" in this space that you can read.`; !isError || !strings.Contains(text, want) {
		t.Errorf("read_conversation of none gave (isError %v) %q, want %q", isError, text, want)
	}
}

func checkResources(ctx context.Context, t *testing.T, cs *mcp.ClientSession, id string) {
	t.Helper()
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		uris = append(uris, r.URI)
		if r.Name != "Launch plan" || r.MIMEType != "text/markdown" {
			t.Errorf("resource %s is named %q, of type %q", r.URI, r.Name, r.MIMEType)
		}
	}
	uri := "compass://document/" + id
	if !slices.Equal(uris, []string{uri}) {
		t.Errorf("resources/list gave %q, want %q", uris, []string{uri})
	}
	var templates []string
	for rt, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/templates/list: %v", err)
		}
		templates = append(templates, rt.URITemplate)
	}
	slices.Sort(templates)
	if want := []string{"compass://document/{id}", "compass://document/{id}/v/{n}"}; !slices.Equal(templates, want) {
		t.Errorf("resource templates are %q, want %q", templates, want)
	}
	for _, tc := range []struct{ uri, text string }{
		{uri, "Record the trailer, then review the course page.\n\n- Book the studio for Wednesday.\n"},
		{uri + "/v/1", "Record the trailer, then review the course page.\n"},
	} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tc.uri})
		if err != nil {
			t.Errorf("reading %s: %v", tc.uri, err)
			continue
		}
		if len(res.Contents) != 1 || res.Contents[0].Text != tc.text || res.Contents[0].MIMEType != "text/markdown" {
			t.Errorf("reading %s gave %+v, want text/markdown %q", tc.uri, res.Contents, tc.text)
		}
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "compass://document/01JDXAAAAAAAAAAAAAAAAAAAAA"}); err == nil || !strings.Contains(err.Error(), "no document") {
		t.Errorf("reading a document that isn't there gave %v, want an error saying so", err)
	}
}

func checkPromptAndCompletion(ctx context.Context, t *testing.T, cs *mcp.ClientSession, id string) {
	t.Helper()
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "charter"})
	if err != nil {
		t.Fatalf("prompts/get charter: %v", err)
	}
	if len(p.Messages) != 1 || p.Messages[0].Role != "user" {
		t.Errorf("the charter prompt is %+v, want one user message", p.Messages)
	} else if tc, ok := p.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "Read a document before you edit it") {
		t.Errorf("the charter prompt's message is %+v", p.Messages[0].Content)
	}
	res, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "compass://document/{id}"},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "launch"},
	})
	if err != nil {
		t.Fatalf("completion/complete: %v", err)
	}
	if !slices.Equal(res.Completion.Values, []string{id}) {
		t.Errorf("completing id=launch gave %q, want [%s]", res.Completion.Values, id)
	}
}

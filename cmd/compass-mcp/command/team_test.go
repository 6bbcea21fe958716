package command

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// team is a data file shared by two people, Ana and Ben, with three spaces: personal
// (Ana's, the server's configured space, no member rows), launch (Ana and Ben) and design
// (Ben). Each space has a document "<Space> plan" whose text says marker-<space>, and a
// conversation <space>-chat saying talk-<space>.
type team struct {
	data   string
	docIDs map[string]string // space → its plan's id
	tokens map[string]string // name → secret
}

var teamSpaces = []string{"personal", "launch", "design"}

func title(space string) string { return strings.ToUpper(space[:1]) + space[1:] + " plan" }

func newTeam(t *testing.T) *team {
	t.Helper()
	tm := &team{data: newData(t), docIDs: map[string]string{}, tokens: map[string]string{}}
	cli(t, tm.data, "people", "set", "ana", "Ana")
	cli(t, tm.data, "people", "set", "ben", "Ben")
	cli(t, tm.data, "members", "add", "launch", "ana")
	cli(t, tm.data, "members", "add", "launch", "ben")
	cli(t, tm.data, "members", "add", "design", "ben")
	for _, sp := range teamSpaces {
		if out, err := cliResult(tm.data, "marker-"+sp+"\n", "docs", "save", "--new", title(sp), "--space", sp); err != nil {
			t.Fatalf("saving %s's plan: %v\n%s", sp, err, out)
		}
		cli(t, tm.data, "say", sp+"-chat", "talk-"+sp, "--space", sp, "--title", sp+" chat")
		id := ulidRE.FindString(cli(t, tm.data, "docs", "list", "--space", sp))
		if id == "" {
			t.Fatalf("no id in docs list of %s", sp)
		}
		tm.docIDs[sp] = id
	}
	return tm
}

// addToken makes a token with tokens add and keeps its secret under name.
func (tm *team) addToken(t *testing.T, name string, args ...string) {
	t.Helper()
	out := strings.TrimSpace(cli(t, tm.data, append([]string{"tokens", "add"}, args...)...))
	if !strings.HasPrefix(out, "cmp_") || strings.Contains(out, "\n") {
		t.Fatalf("tokens add %v printed %q, want the token alone", args, out)
	}
	tm.tokens[name] = out
}

// addExpiredToken makes a token for person that expired: made an hour ago, for a minute,
// on the store's clock set back (access.Store.WithClock; tokens add takes no expiry in the
// past, and one a second ahead would have the test wait for it).
func (tm *team) addExpiredToken(t *testing.T, name, person string) {
	t.Helper()
	db := kvtest.OpenData(t, tm.data)
	defer db.Close()
	then := time.Now().Add(-time.Hour)
	secret, _, err := access.New(db).WithClock(func() time.Time { return then }).AddToken(t.Context(), access.NewToken{Person: person, Expires: then.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	tm.tokens[name] = secret
}

// tokenClient is an MCP client of url sending token (if any) as its bearer token.
func tokenClient(t *testing.T, url, token, name string) *client.Client {
	t.Helper()
	opts := []transport.StreamableHTTPCOption{transport.WithHTTPTimeout(60 * time.Second)}
	if token != "" {
		opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	}
	c, err := client.NewStreamableHttpClient(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	initialize(t, c, name)
	return c
}

// Two people, three spaces, five tokens against one server: every endpoint × token ×
// tool, checking the answer or the refusal, that no answer shows anything of a space the
// token does not allow, and (from the file, after) that nothing there changed.
func TestTeamEndpointsTokensTools(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	tm.addToken(t, "ana", "--for", "ana", "--agent", "north")
	tm.addToken(t, "ben-read-only", "--for", "ben", "--read-only")
	tm.addExpiredToken(t, "ana-expired", "ana")
	tm.addToken(t, "ben-revoked", "--for", "ben", "--agent", "gone")
	tm.addToken(t, "ben-launch", "--for", "ben", "--space", "launch")
	var revokedID string
	for _, line := range strings.Split(cli(t, tm.data, "tokens", "list", "--for", "ben"), "\n") {
		if strings.Contains(line, " · for ben · agent gone") {
			revokedID = strings.Fields(line)[0]
		}
	}
	cli(t, tm.data, "tokens", "revoke", revokedID)

	url, stop := httpServer(t, tm.data)
	base := strings.TrimSuffix(url, "/mcp")
	endpoints := []struct{ path, space string }{
		{"/mcp", "personal"},
		{"/spaces/personal/mcp", "personal"},
		{"/spaces/launch/mcp", "launch"},
		{"/spaces/design/mcp", "design"},
		{"/spaces/nowhere/mcp", "nowhere"},
	}
	// What each token gets at each endpoint, in the order above: 200 (read-write), 'r'
	// (200, read-only), 401 or 403.
	const rw, ro = 200, 'r'
	table := []struct {
		token  string
		want   [5]int
		person string // display name its versions are for
		agent  string // the agent its versions are by
	}{
		{"", [5]int{401, 401, 401, 401, 401}, "", ""},
		{"cmp_notatoken", [5]int{401, 401, 401, 401, 401}, "", ""},
		{"ana", [5]int{rw, rw, rw, 403, 403}, "Ana", "north"},
		{"ben-read-only", [5]int{403, 403, ro, ro, 403}, "Ben", ""},
		{"ana-expired", [5]int{401, 401, 401, 401, 401}, "", ""},
		{"ben-revoked", [5]int{401, 401, 401, 401, 401}, "", ""},
		{"ben-launch", [5]int{403, 403, rw, 403, 403}, "Ben", "ben-editor"}, // no --agent: the client's name
	}
	writes := map[string]int{} // space → versions the plan should have gained
	for _, row := range table {
		for i, ep := range endpoints {
			name := fmt.Sprintf("%s at %s", row.token, ep.path)
			if row.token == "" {
				name = "no token at " + ep.path
			}
			t.Run(name, func(t *testing.T) {
				secret := tm.tokens[row.token]
				if secret == "" {
					secret = row.token
				}
				header := map[string]string{}
				if secret != "" {
					header["Authorization"] = "Bearer " + secret
				}
				res, body := post(t, base+ep.path, strings.NewReader(initBody), header)
				want := row.want[i]
				status := want
				if want == ro {
					status = 200
				}
				if res.StatusCode != status {
					t.Fatalf("initialize: %d %q, want %d", res.StatusCode, body, status)
				}
				challenge := res.Header.Get("WWW-Authenticate")
				switch {
				case status == 401 && !strings.HasPrefix(challenge, `Bearer realm="compass-mcp"`),
					status == 401 && secret != "" && !strings.Contains(challenge, `error="invalid_token"`),
					status == 403 && !strings.Contains(challenge, `error="insufficient_scope"`):
					t.Errorf("%d with WWW-Authenticate %q", status, challenge)
				}
				for _, other := range teamSpaces {
					if strings.Contains(body, "marker-"+other) || strings.Contains(body, title(other)) {
						t.Errorf("a refusal shows %s's plan: %q", other, body)
					}
				}
				if status != 200 {
					return
				}
				c := tokenClient(t, base+ep.path, secret, "ben-editor")
				tm.toolsIn(t, c, ep.space, want == ro, row.person, row.agent)
				if want == rw {
					writes[ep.space]++
				}
			})
		}
	}
	stop()

	// From the file: each plan gained exactly the appends of the tokens that may write its
	// space, and each version says whose it was.
	db := kvtest.OpenData(t, tm.data)
	for _, sp := range teamSpaces {
		vs, err := view(t, docstore.New(db, sp), versionsOf(tm.docIDs[sp]))
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 1+writes[sp] {
			t.Errorf("%s's plan has %d versions, want %d", sp, len(vs), 1+writes[sp])
		}
		for _, v := range vs {
			if v.Number == 1 {
				continue
			}
			allowed := map[string][]string{"personal": {"agent:north for person:ana"}, "launch": {"agent:north for person:ana", "agent:ben-editor for person:ben"}}[sp]
			if got := v.Author.By + " for " + v.Author.For; !slices.Contains(allowed, got) {
				t.Errorf("%s's plan version %d is by %s, who may not write there", sp, v.Number, got)
			}
		}
	}
	list := cli(t, tm.data, "tokens", "list")
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		used := !strings.Contains(line, "never used")
		if want := strings.Contains(line, "agent north") || strings.Contains(line, "spaces launch") || strings.Contains(line, "read-only"); used != want {
			t.Errorf("tokens list: %q: used %v, want %v", line, used, want)
		}
	}
}

// toolsIn calls every tool in a session on space, checking each answer or refusal, and
// that nothing of another space shows.
func (tm *team) toolsIn(t *testing.T, c *client.Client, space string, readOnly bool, person, agent string) {
	t.Helper()
	ctx := context.Background()
	listed, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range listed.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	want := []string{"append_document", "comment_document", "edit_document", "list_conversations", "list_documents", "read_conversation", "read_document", "write_document"}
	if readOnly {
		want = []string{"list_conversations", "list_documents", "read_conversation", "read_document"}
	}
	if !slices.Equal(names, want) {
		t.Errorf("tools offered: %v, want %v", names, want)
	}
	// seen fails the test if a shows something of another space (beyond the names the
	// call itself gave, which a refusal quotes back).
	seen := func(tool string, args map[string]any, a answer) {
		t.Helper()
		for _, other := range teamSpaces {
			if other == space {
				continue
			}
			for _, s := range []string{"marker-" + other, "talk-" + other, title(other), tm.docIDs[other]} {
				given := false
				for _, v := range args {
					given = given || strings.Contains(fmt.Sprint(v), s)
				}
				if !given && strings.Contains(a.text, s) {
					t.Errorf("%s in %s shows %q, of %s: %q", tool, space, s, other, a.text)
				}
			}
		}
	}
	expect := func(tool string, args map[string]any, isError bool, has string) answer {
		t.Helper()
		a := callTool(t, c, tool, args)
		seen(tool, args, a)
		if a.isError != isError || !strings.Contains(a.text, has) {
			t.Errorf("%s %v in %s: isError %v %q; want isError %v and %q", tool, args, space, a.isError, a.text, isError, has)
		}
		return a
	}
	// Documents as resources: this space's only.
	resources, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range resources.Resources {
		uris = append(uris, r.URI)
	}
	if !slices.Contains(uris, "compass://document/"+tm.docIDs[space]) {
		t.Errorf("resources/list in %s: %v, without its plan", space, uris)
	}
	for _, other := range teamSpaces {
		if other == space {
			continue
		}
		if slices.Contains(uris, "compass://document/"+tm.docIDs[other]) {
			t.Errorf("resources/list in %s lists %s's plan", space, other)
		}
		req := mcp.ReadResourceRequest{}
		req.Params.URI = "compass://document/" + tm.docIDs[other]
		if res, err := c.ReadResource(ctx, req); err == nil {
			t.Errorf("reading %s's plan as a resource in %s: %+v", other, space, res.Contents)
		}
	}
	expect("list_documents", nil, false, title(space))
	expect("read_document", map[string]any{"document": title(space)}, false, "marker-"+space)
	expect("list_conversations", nil, false, "talk-"+space)
	expect("read_conversation", map[string]any{"conversation": space + "-chat"}, false, "talk-"+space)
	for _, other := range teamSpaces {
		if other == space {
			continue
		}
		expect("read_document", map[string]any{"document": tm.docIDs[other]}, true, "No document")
		expect("read_document", map[string]any{"document": title(other)}, true, "No document")
		expect("read_conversation", map[string]any{"conversation": other + "-chat"}, true, "No conversation")
		if !readOnly {
			expect("append_document", map[string]any{"document": tm.docIDs[other], "text": "x"}, true, "No document")
			expect("edit_document", map[string]any{"document": title(other), "old": "marker", "new": "x"}, true, "No document")
			expect("write_document", map[string]any{"document": tm.docIDs[other], "text": "x"}, true, "No document")
		}
	}
	plan := map[string]any{"document": title(space), "text": "appended by " + agent}
	note := map[string]any{"title": fmt.Sprintf("Note by %s %d", agent, time.Now().UnixNano()), "text": "a note\n"}
	if readOnly {
		for tool, args := range map[string]map[string]any{"write_document": note, "append_document": plan, "edit_document": {"document": title(space), "old": "marker", "new": "changed"}} {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = tool, args
			if res, err := c.CallTool(ctx, req); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Errorf("%s with a read-only token: %+v, %v; want it refused as an unknown tool", tool, res, err)
			}
		}
		return
	}
	byLine := fmt.Sprintf("saved by %s for %s", agent, person)
	expect("append_document", plan, false, "Saved")
	expect("read_document", map[string]any{"document": title(space)}, false, byLine)
	expect("write_document", note, false, "Saved")
	expect("edit_document", map[string]any{"document": note["title"], "old": "a note", "new": "an edited note"}, false, "Saved")
	expect("read_document", map[string]any{"document": note["title"]}, false, byLine)
}

// Beyond loopback, a server needs --token or a token row. (Tests bind loopback only, so
// the address check is asked directly once the refusal is seen end to end.)
func TestTeamTokenRowsLetServeBeyondLoopback(t *testing.T) {
	t.Parallel()
	data := newData(t)
	if out, err := cliResult(data, "", "serve", "--http", "0.0.0.0:0"); err == nil || !strings.Contains(out, "tokens add") {
		t.Fatalf("no token at all, beyond loopback: %v %q; want it refused, naming tokens add", err, out)
	}
	hasRows := func() bool {
		db := openForTest(t, data)
		defer db.Close()
		return access.New(db).Guarded(t.Context(), "")
	}
	if hasRows() {
		t.Fatal("a fresh file has token rows")
	}
	cli(t, data, "tokens", "add", "--for", "ana")
	if !hasRows() {
		t.Fatal("after tokens add, no token rows")
	}
	if _, err := bindAddress("0.0.0.0:7410", hasRows()); err != nil {
		t.Errorf("with a token row: %v", err)
	}
	url, stop := httpServer(t, data)
	defer stop()
	if res, _ := post(t, url, strings.NewReader(initBody), nil); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("with a token row, a request without a token: %d, want 401", res.StatusCode)
	}
}

// 16 clients with 4 tokens over 2 spaces append to their space's plan at once: no append
// is lost, and every version says the agent and person of the token that made it.
func TestTeamConcurrentTokens(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	cli(t, tm.data, "members", "add", "design", "ana")
	// launch and design: both people are members of both.
	tokens := []struct{ name, by, forWhom string }{
		{"ana-north", "agent:north", "person:ana"},
		{"ana-east", "agent:east", "person:ana"},
		{"ben-west", "agent:west", "person:ben"},
		{"ben-south", "agent:south", "person:ben"},
	}
	for _, tok := range tokens {
		person, agent, _ := strings.Cut(tok.name, "-")
		tm.addToken(t, tok.name, "--for", person, "--agent", agent, "--space", "launch", "--space", "design")
	}
	url, stop := httpServer(t, tm.data)
	base := strings.TrimSuffix(url, "/mcp")
	const clients, appends = 16, 8
	twoSpaces := []string{"launch", "design"}
	errs := make(chan error, clients)
	for i := range clients {
		tok, space := tokens[i%4], twoSpaces[(i/4)%2]
		c := tokenClient(t, base+"/spaces/"+space+"/mcp", tm.tokens[tok.name], "editor")
		go func() {
			for j := range appends {
				req := mcp.CallToolRequest{}
				req.Params.Name = "append_document"
				req.Params.Arguments = map[string]any{"document": title(space), "text": fmt.Sprintf("client %d line %d", i, j)}
				res, err := c.CallTool(context.Background(), req)
				if err == nil && res.IsError {
					err = fmt.Errorf("%v", res.Content)
				}
				if err != nil {
					errs <- fmt.Errorf("client %d append %d: %w", i, j, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	stop()
	db := kvtest.OpenData(t, tm.data)
	for s, space := range twoSpaces {
		docs := docstore.New(db, space)
		d, err := view(t, docs, func(r *docstore.Reader) (docstore.Document, error) { return r.Find(title(space)) })
		if err != nil {
			t.Fatal(err)
		}
		var vs []docstore.Version // every text: each version's line is checked against the one before
		if err := docs.Walk(t.Context(), d.ID, func(v docstore.Version) error { vs = append(vs, v); return nil }); err != nil {
			t.Fatal(err)
		}
		if want := 1 + clients/2*appends; len(vs) != want {
			t.Errorf("%s's plan has %d versions, want %d", space, len(vs), want)
		}
		slices.SortFunc(vs, func(a, b docstore.Version) int { return a.Number - b.Number })
		latest := vs[len(vs)-1].Text
		for i := range clients {
			if (i/4)%2 != s {
				continue
			}
			for j := range appends {
				if n := strings.Count(latest, fmt.Sprintf("client %d line %d\n", i, j)); n != 1 {
					t.Errorf("%s: client %d's line %d is there %d times, want once", space, i, j, n)
				}
			}
		}
		for k := 1; k < len(vs); k++ {
			added := strings.TrimPrefix(vs[k].Text, vs[k-1].Text)
			var i, j int
			if _, err := fmt.Sscanf(strings.TrimSpace(added), "client %d line %d", &i, &j); err != nil {
				t.Errorf("%s version %d added %q, not one client's line after the last version", space, vs[k].Number, added)
				continue
			}
			if want := tokens[i%4]; vs[k].Author.By != want.by || vs[k].Author.For != want.forWhom {
				t.Errorf("%s version %d (client %d) is by %s for %s, want %s for %s", space, vs[k].Number, i, vs[k].Author.By, vs[k].Author.For, want.by, want.forWhom)
			}
		}
	}
}

// A session stays with the token that began it: another token that may see the space
// gets 404 for it, as for a session that doesn't exist, and can't end it.
func TestTeamSessionsStayWithTheirToken(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	tm.addToken(t, "ana", "--for", "ana")
	tm.addToken(t, "ben", "--for", "ben")
	url, _ := httpServer(t, tm.data)
	launch := strings.TrimSuffix(url, "/mcp") + "/spaces/launch/mcp"
	res, body := post(t, launch, strings.NewReader(initBody), map[string]string{"Authorization": "Bearer " + tm.tokens["ana"]})
	session := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != 200 || session == "" {
		t.Fatalf("initialize: %d %q, session %q", res.StatusCode, body, session)
	}
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	as := func(who string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + tm.tokens[who], "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
	}
	if res, body := post(t, launch, strings.NewReader(list), as("ben")); res.StatusCode != http.StatusNotFound {
		t.Errorf("Ben's token with Ana's session: %d %q, want 404", res.StatusCode, body)
	}
	req, _ := http.NewRequest(http.MethodDelete, launch, nil)
	for k, v := range as("ben") {
		req.Header.Set(k, v)
	}
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusNotFound {
		t.Errorf("Ben's token ending Ana's session: %v %v, want 404", res.StatusCode, err)
	}
	if res, body := post(t, launch, strings.NewReader(list), as("ana")); res.StatusCode != 200 || !strings.Contains(body, "write_document") {
		t.Errorf("Ana's token with her session: %d %q", res.StatusCode, body)
	}
}

// Within one session: taking Ben out of launch refuses his next call there (403). Nothing
// is kept from when the session began. (A token that expires while its session is open
// gets 401 from then on: access's TestOpenSessionLosesWhatItsTokenLoses, on a clock;
// TestTeamEndpointsTokensTools has a token expire through the binary.)
func TestTeamSessionLosesWhatItsTokenLoses(t *testing.T) {
	t.Parallel()
	tm := newTeam(t)
	tm.addToken(t, "ben", "--for", "ben")
	tm.addToken(t, "ana", "--for", "ana")
	url, _ := httpServer(t, tm.data)
	launch := strings.TrimSuffix(url, "/mcp") + "/spaces/launch/mcp"
	const read = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_documents","arguments":{}}}`
	session := func(who string) func() (int, string) {
		res, body := post(t, launch, strings.NewReader(initBody), map[string]string{"Authorization": "Bearer " + tm.tokens[who]})
		id := res.Header.Get("Mcp-Session-Id")
		if res.StatusCode != 200 || id == "" {
			t.Fatalf("%s's initialize: %d %q", who, res.StatusCode, body)
		}
		return func() (int, string) {
			res, body := post(t, launch, strings.NewReader(read), map[string]string{"Authorization": "Bearer " + tm.tokens[who], "Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"})
			return res.StatusCode, body
		}
	}
	ben, ana := session("ben"), session("ana")
	for who, call := range map[string]func() (int, string){"ben": ben, "ana": ana} {
		if status, body := call(); status != 200 || !strings.Contains(body, "Launch plan") {
			t.Fatalf("%s in launch: %d %q", who, status, body)
		}
	}
	cli(t, tm.data, "members", "remove", "launch", "ben")
	if status, body := ben(); status != http.StatusForbidden || strings.Contains(body, "Launch plan") {
		t.Errorf("Ben, taken out of launch, in his open session: %d %q, want 403", status, body)
	}
	if status, body := ana(); status != 200 || !strings.Contains(body, "Launch plan") {
		t.Errorf("Ana, still in launch, in her open session: %d %q", status, body)
	}
}

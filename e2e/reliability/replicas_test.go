package reliability

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/internal/testkit/roundrobin"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/pg"
	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Replicas: two compass-mcp serve --http processes on one PostgreSQL database (a fresh
// schema of $COMPASS_TEST_DATA), every client's requests spread over both in turn, as a
// load balancer without session affinity would send them. These tests skip without
// COMPASS_TEST_DATA (and fail without it when CI=true).
//
//	COMPASS_TEST_DATA=postgres://... go test -run Replica -v ./e2e/reliability

// team is the people and tokens of a replicas test: Ana's token names no agent (versions
// say the client's name), Ben's says the agent is scribe.
type team struct {
	data       string
	ana, ben   string // the tokens' secrets
	sharedDocs []string
}

func newTeam(t *testing.T) *team {
	t.Helper()
	tm := &team{data: kvtest.URL(t)}
	run(t, tm.data, "", "people", "set", "ana", "Ana")
	run(t, tm.data, "", "people", "set", "ben", "Ben")
	run(t, tm.data, "", "members", "add", "personal", "ben")
	tm.ana = secret(t, run(t, tm.data, "", "tokens", "add", "--for", "ana"))
	tm.ben = secret(t, run(t, tm.data, "", "tokens", "add", "--for", "ben", "--agent", "scribe"))
	return tm
}

// secret is the token tokens add printed (its output has the logs beside it).
func secret(t *testing.T, out string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "cmp_") {
			return strings.TrimSpace(line)
		}
	}
	t.Fatalf("tokens add printed no token: %q", out)
	return ""
}

// replicaClient is an initialized MCP client (mcp-go's) of the given protocol version with
// token, whose requests go to hosts in turn: a 2025-11-25 session begun on one is used on
// the other.
func replicaClient(ctx context.Context, hosts []string, token, name, version string) (*client.Client, error) {
	return spreadClient(ctx, &roundrobin.Transport{Hosts: hosts}, token, name, version)
}

// spreadClient is replicaClient through rr.
func spreadClient(ctx context.Context, rr *roundrobin.Transport, token, name, version string) (*client.Client, error) {
	rr.Base = &http.Transport{MaxIdleConnsPerHost: 4}
	c, err := client.NewStreamableHttpClient("http://"+rr.Hosts[0]+"/mcp",
		transport.WithHTTPBasicClient(&http.Client{Transport: rr, Timeout: 60 * time.Second}),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}),
		transport.WithHTTPLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func hostOf(t testing.TB, endpoint string) string {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// openStore opens the test's database as a third process would, to read what the servers
// wrote.
func openStore(t testing.TB, data string) kv.DB {
	t.Helper()
	db, err := pg.Open(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// ackedWrite is one acknowledged write: which client it was answered to, by what call.
type ackedWrite struct {
	client, call string
	kind         docstore.Kind
	author       docstore.Author
}

// Sixteen clients over two replicas, half on protocol 2025-11-25 (a session, begun on
// one replica, used on both) and half on 2026-07-28 (no session), with two tokens, append
// to and edit the same three documents at once. Then, read from the database: no update
// lost (every appended line, every marker at its last acknowledged value), each
// document's versions 1..n with no gap and no version answered twice, every version
// answered to one call of the kind it has, and every version's author the one its call's
// token and client make.
func TestReplicasSixteenClients(t *testing.T) {
	tm := newTeam(t)
	a, b := startHTTP(t, tm.data), startHTTP(t, tm.data)
	hosts := []string{hostOf(t, a.url), hostOf(t, b.url)}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	setup, err := replicaClient(ctx, hosts, tm.ana, "setup", mcp.ProtocolVersion20251125)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		ack = map[string]map[int]ackedWrite{} // doc → version → the call it was answered to
	)
	record := func(doc string, n int, w ackedWrite) error {
		mu.Lock()
		defer mu.Unlock()
		if ack[doc] == nil {
			ack[doc] = map[int]ackedWrite{}
		}
		if other, ok := ack[doc][n]; ok {
			return fmt.Errorf("version %d of %s was answered to two calls: %s (%s), and %s (%s)", n, doc, other.call, other.client, w.call, w.client)
		}
		ack[doc][n] = w
		return nil
	}
	for i := range 3 {
		title := fmt.Sprintf("Shared %d", i)
		res := mustCall(t, setup, "write_document", map[string]any{"title": title, "text": "# " + title + "\n"})
		id, n, ok := saved(res)
		if !ok {
			t.Fatal(res.text)
		}
		tm.sharedDocs = append(tm.sharedDocs, id)
		must(t, record(id, n, ackedWrite{client: "setup", call: "create " + title, kind: docstore.KindWrite, author: docstore.Author{By: "agent:setup", For: "person:ana"}}))
	}
	setup.Close()

	const clients, steps = 16, 24
	type writer struct {
		name    string
		lines   map[string][]string // doc → lines appended and acknowledged
		markers map[string]int      // doc → its marker line's last acknowledged value
	}
	writers := make([]*writer, clients)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range writers {
		w := &writer{name: fmt.Sprintf("c%02d", i), lines: map[string][]string{}, markers: map[string]int{}}
		writers[i] = w
		version, token, author := mcp.ProtocolVersion20251125, tm.ana, docstore.Author{By: "agent:" + w.name, For: "person:ana"}
		if i%2 == 1 {
			version = mcp.ProtocolVersion20260728
		}
		if i%4 >= 2 {
			token, author = tm.ben, docstore.Author{By: "agent:scribe", For: "person:ben"}
		}
		order := hosts
		if i/4%2 == 1 {
			order = []string{hosts[1], hosts[0]}
		}
		c, err := replicaClient(ctx, order, token, w.name, version)
		if err != nil {
			t.Fatalf("%s (%s): %v", w.name, version, err)
		}
		defer c.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range steps {
				doc := tm.sharedDocs[(i+k)%3]
				m, has := w.markers[doc]
				var (
					tool, line, what string
					args             map[string]any
					kind             docstore.Kind
				)
				switch {
				case !has || k%2 == 0:
					line = fmt.Sprintf("%s line %d", w.name, k)
					if !has {
						line = fmt.Sprintf("%s@%d: 0", w.name, (i+k)%3)
					}
					tool, kind, args = "append_document", docstore.KindAppend, map[string]any{"document": doc, "text": line}
				default:
					old, new := fmt.Sprintf("\n%s@%d: %d\n", w.name, (i+k)%3, m), fmt.Sprintf("\n%s@%d: %d\n", w.name, (i+k)%3, m+1)
					tool, kind, args = "edit_document", docstore.KindEdit, map[string]any{"document": doc, "old": old, "new": new}
				}
				what = fmt.Sprintf("%s %v", tool, args)
				res, err := call(ctx, c, tool, args)
				id, n, ok := saved(res)
				if err != nil || !ok || id != doc {
					t.Errorf("%s (%s): %s: %v %q", w.name, version, what, err, res.text)
					return
				}
				if err := record(doc, n, ackedWrite{client: w.name + " " + version, call: what, kind: kind, author: author}); err != nil {
					t.Error(err)
					return
				}
				switch {
				case kind == docstore.KindEdit:
					w.markers[doc] = m + 1
				case !has:
					w.markers[doc] = 0
				default:
					w.lines[doc] = append(w.lines[doc], line)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if t.Failed() {
		t.FailNow()
	}

	s := docstore.New(openStore(t, tm.data), "personal")
	writes := 0
	for _, doc := range tm.sharedDocs {
		d, vs, err := history(t, s, doc)
		if err != nil {
			t.Fatal(err)
		}
		_, v, err := read(t, s, doc, 0)
		if err != nil {
			t.Fatal(err)
		}
		writes += len(vs)
		if len(vs) != len(ack[doc]) {
			t.Errorf("%s has %d versions; %d writes to it were answered", d.Title, len(vs), len(ack[doc]))
		}
		for i, v := range vs {
			if v.Number != d.Version-i {
				t.Errorf("%s's versions are not 1..%d without a gap or a double: %d at %d", d.Title, d.Version, v.Number, i)
				break
			}
			w, ok := ack[doc][v.Number]
			switch {
			case !ok:
				t.Errorf("version %d of %s was answered to no call", v.Number, d.Title)
			case v.Kind != w.kind:
				t.Errorf("version %d of %s is a %s, but was answered to %s", v.Number, d.Title, v.Kind, w.call)
			case v.Author.By != w.author.By || v.Author.For != w.author.For || v.Author.Accepted != "":
				t.Errorf("version %d of %s is by %s for %s, but was answered to %s (%s), whose versions are by %s for %s", v.Number, d.Title, v.Author.By, v.Author.For, w.call, w.client, w.author.By, w.author.For)
			case v.Author.Door != docstore.DoorMCP || v.Author.Session == "":
				// Every write here came through MCP, each client in a session of its own.
				t.Errorf("version %d of %s came in through door %q, session %q, but was answered to %s (%s) over MCP", v.Number, d.Title, v.Author.Door, v.Author.Session, w.call, w.client)
			}
		}
		latest := v.Text
		for _, w := range writers {
			for _, line := range w.lines[doc] {
				if !strings.Contains(latest, "\n"+line+"\n") {
					t.Errorf("%q was appended to %s and acknowledged, but is not in its latest text", line, d.Title)
				}
			}
			if m, ok := w.markers[doc]; ok && !strings.Contains(latest, fmt.Sprintf("\n%s@%d: %d\n", w.name, slices.Index(tm.sharedDocs, doc), m)) {
				t.Errorf("%s's latest text has not %s's marker at %d, its last acknowledged edit", d.Title, w.name, m)
			}
		}
	}
	t.Logf("%d clients (8 on 2025-11-25, 8 on 2026-07-28), two replicas, two tokens: %d versions of 3 shared documents in %s (%.0f writes/s), none lost, 1..n without gaps or doubles, every author right",
		clients, writes, elapsed.Round(time.Millisecond), float64(clients*steps)/elapsed.Seconds())
}

// SIGKILL one replica (in turn) while clients write through both, 10 rounds: every write
// that was answered "Saved ... as version N" is in the database afterwards with its text,
// and the clients go on through the other replica meanwhile (2025-11-25 sessions begun on
// the killed one included), their round robin passing over the replica that stopped
// answering as a load balancer's health check would. The writers are the crash test's
// (crashWriter): each writes, appends to and edits its own document and the shared Log.
//
//	COMPASS_TEST_DATA=postgres://... go test -run TestReplicaKilled -v ./e2e/reliability
func TestReplicaKilledKeepsAcknowledgedWrites(t *testing.T) {
	const rounds = 10
	rng, l, writers := crashSetup(t)
	tm := newTeam(t)
	started := 0
	start := func() *server { // each replica with a name of its own in pg_stat_activity
		started++
		return startHTTP(t, named(t, tm.data, fmt.Sprintf("replica-%d", started)))
	}
	servers := []*server{start(), start()}
	{
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		c, err := replicaClient(ctx, []string{hostOf(t, servers[0].url)}, tm.ana, "setup", mcp.ProtocolVersion20251125)
		if err != nil {
			t.Fatal(err)
		}
		a := mustCall(t, c, "write_document", map[string]any{"title": "Log", "text": "# Log\n"})
		id, n, ok := saved(a)
		if !ok {
			t.Fatalf("creating Log: %q", a.text)
		}
		must(t, l.add(promise{doc: id, n: n, call: "create Log", kind: docstore.KindWrite, exact: "# Log\n"}))
		for _, w := range writers {
			w.log = id
		}
		c.Close()
		cancel()
	}
	db := openStore(t, tm.data)
	failed, afterKill, orphaned, began := 0, 0, 0, time.Now()
	for round := range rounds {
		from := len(l.promises)
		hosts := []string{hostOf(t, servers[0].url), hostOf(t, servers[1].url)}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		writing, stopWriting := context.WithCancel(ctx)
		settled := make(chan struct{}) // closed once the database has let go of the killed replica
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, w := range writers {
			w.round = round
			version := mcp.ProtocolVersion20251125
			if w.i%2 == 1 {
				version = mcp.ProtocolVersion20260728
			}
			order := hosts
			if w.i%4 >= 2 {
				order = []string{hosts[1], hosts[0]}
			}
			rr := &roundrobin.Transport{Hosts: order, Eject: time.Minute}
			c, err := spreadClient(ctx, rr, tm.ana, fmt.Sprintf("writer-%d", w.i), version)
			if err != nil {
				t.Fatalf("round %d, writer %d: %v", round, w.i, err)
			}
			if err := w.sync(ctx, c); err != nil {
				t.Fatalf("round %d, writer %d, before the writes: %v", round, w.i, err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				for writing.Err() == nil {
					if err := w.write(writing, c); err != nil {
						t.Errorf("round %d, writer %d: %v", round, w.i, err)
						return
					}
					// A call failed (its replica was killed, or the round ended): its outcome is
					// unknown, so read what is there again, through whichever replica answers;
					// but only once the database has done all the killed replica sent it (see
					// gone), or its last commit could land after the read.
					mu.Lock()
					failed++
					mu.Unlock()
					select {
					case <-settled:
					case <-writing.Done():
					}
					for writing.Err() == nil && w.sync(writing, c) != nil {
						time.Sleep(10 * time.Millisecond)
					}
				}
			}()
		}
		// Kill one replica, sometimes before the first commit, mostly in the thick of it,
		// and write on through the other for a while.
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		victim := round % 2
		servers[victim].kill()
		l.mu.Lock()
		killedAt := len(l.promises)
		l.mu.Unlock()
		took := gone(t, tm.data, servers[victim])
		close(settled)
		time.Sleep(300 * time.Millisecond)
		stopWriting()
		wg.Wait()
		cancel()
		if t.Failed() {
			t.FailNow()
		}
		verifyIn(t, db, l.promises[from:], nil, nil)
		if t.Failed() {
			t.FailNow()
		}
		after := l.promises[killedAt:]
		for _, w := range writers {
			// A session, 2025-11-25, begun on the killed replica: its initialize went there.
			if w.i%2 == 0 && (w.i%4 >= 2) == (victim == 1) {
				for _, p := range after {
					if strings.Contains(p.call, fmt.Sprintf("(writer %d,", w.i)) {
						orphaned++
					}
				}
			}
		}
		afterKill += len(after)
		t.Logf("round %d: replica %d killed (its connections gone from the database %s after); %d writes acknowledged (%d after the kill), all there", round+1, victim, took.Round(time.Millisecond), len(l.promises)-from, len(after))
		servers[victim] = start()
	}
	counters := map[string]int{}
	for _, w := range writers {
		counters[fmt.Sprintf("counter %d: ", w.i)] = w.counter
	}
	docs := verifyIn(t, db, l.promises, l.logLines, counters)
	if orphaned == 0 {
		t.Errorf("no write was acknowledged, after the kill, to a session begun on the killed replica")
	}
	t.Logf("%d rounds, one of two replicas SIGKILLed in each: %d acknowledged writes to %d documents all in the database, %d of them after the kill (%d in sessions begun on the killed replica); %d calls failed or were cut short, their outcome unknown to their clients; in %s",
		rounds, len(l.promises), docs, afterKill, orphaned, failed, time.Since(began).Round(time.Millisecond))
}

// named is the database URL data with application_name set, so that pg_stat_activity tells
// one server's connections from another's.
func named(t testing.TB, data, name string) string {
	t.Helper()
	u, err := url.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// gone waits until the database has no connection left of the killed server s, and says
// how long that took. A killed process's connections outlive it for as long as PostgreSQL
// takes to do what they had already sent: a transaction's last writes and its COMMIT go in
// one round trip, so a write whose client was told nothing (the process died waiting for
// the answer) may still commit after the client, through another replica, read the
// document. Only once they are gone is a write cut off by the kill settled either way.
func gone(t testing.TB, data string, s *server) time.Duration {
	t.Helper()
	var name string
	for _, e := range s.cmd.Env {
		if v, ok := strings.CutPrefix(e, "COMPASS_DATA="); ok {
			u, _ := url.Parse(v)
			name = u.Query().Get("application_name")
		}
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", name).Scan(&n); err != nil {
			t.Fatalf("counting %s's connections: %v", name, err)
		}
		if n == 0 {
			return time.Since(start)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

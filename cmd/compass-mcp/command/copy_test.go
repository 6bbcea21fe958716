package command

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"github.com/compass-mcp/compass-mcp/kv/stores"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

// fillForCopy writes, through the binary as a person and their agents would, a store with
// something of every kind compass-mcp keeps, and returns a token's secret it minted.
func fillForCopy(t *testing.T, data string) (secret string) {
	t.Helper()
	run := func(stdin string, args ...string) string {
		t.Helper()
		out, err := cliResult(data, stdin, args...)
		if err != nil {
			t.Fatalf("compass-mcp %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	// Documents: versions of every kind (write, edit, append, the person's save, rename,
	// restore), by agents for ana and for bob, and by ana herself.
	run("", "call", "--agent", "north", "write_document", "title=Plan", "text=# Plan\n\n- one\n- two\n")
	run("", "call", "--agent", "north", "edit_document", "document=Plan", "old=- two", "new=- two, done")
	run("", "call", "--agent", "scout", "--for", "bob", "append_document", "document=Plan", "text=- three (bob's)\n")
	run("# Plan\n\n- one\n- two, done\n- three (bob's)\n- four, by ana\n", "docs", "save", "Plan")
	run("", "docs", "rename", "Plan", "The plan")
	run("", "docs", "restore", "The plan", "2")
	run("# Notes\n\nümlauts, emoji 🧭, and a long line "+strings.Repeat("x", 5000)+"\n", "docs", "save", "--new", "Notes")
	run("", "docs", "delete", "Notes")
	run("", "docs", "undelete", "Notes")
	run("", "call", "--agent", "north", "write_document", "title=Scratch", "text=gone soon")
	run("", "docs", "delete", "Scratch")
	run("", "call", "--space", "team", "--agent", "north", "write_document", "title=Team charter", "text=# Charter\n\nWe ship.\n")
	run("", "call", "--space", "team", "--for", "bob", "--agent", "scout", "edit_document", "document=Team charter", "old=We ship.", "new=We ship, weekly.")
	// Conversations: messages of a person and agents, one addressed, private steps.
	run("", "say", "planning", "Shall we plan the launch?", "--title", "Launch planning")
	run("", "say", "planning", "Reading the plan first.", "--from", "agent:north", "--private")
	run("", "say", "planning", "The plan has four items.", "--from", "agent:north")
	run("", "say", "planning", "Which is first?", "--to", "agent:north")
	run("", "say", "other", "A second conversation.", "--from", "person:bob")
	run("", "say", "other", "only a private step", "--from", "agent:scout", "--private")
	run("", "say", "--space", "team", "standup", "Team standup notes", "--from", "person:bob")
	// People, members, a token.
	run("", "people", "set", "ana", "Ana")
	run("", "people", "set", "bob", "Bob B.")
	run("", "members", "add", "team", "bob")
	run("", "members", "add", "team", "cy")
	run("", "members", "remove", "team", "cy")
	out := run("", "tokens", "add", "--for", "bob", "--agent", "scout", "--space", "team", "--expires", "90d")
	secret = strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
	if !strings.HasPrefix(secret, "cmp_") {
		t.Fatalf("tokens add printed no secret first:\n%s", out)
	}
	run("", "tokens", "add", "--for", "ana", "--read-only")
	return secret
}

var copiedRE = regexp.MustCompile(`^Copied (\d+) buckets, (\d+) keys, (\d+) bytes from (.+) to (.+); checked: both hold the same bytes \(sha256 ([0-9a-f]{64})\)\.\n$`)

// copyVia runs compass-mcp copy and returns the digest it reports, checked against the
// digest of from read here.
func copyVia(t *testing.T, from, to string) string {
	t.Helper()
	want := digestOf(t, from)
	out := cli(t, "", "copy", "--from", from, "--to", to)
	m := copiedRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("copy said %q", out)
	}
	if m[6] != want.sum || m[1] != fmt.Sprint(want.n.Buckets) || m[2] != fmt.Sprint(want.n.Keys) || m[3] != fmt.Sprint(want.n.Bytes) {
		t.Fatalf("copy said %q; %s holds %d buckets, %d keys, %d bytes, sha256 %s", out, from, want.n.Buckets, want.n.Keys, want.n.Bytes, want.sum)
	}
	if strings.Contains(out, ":compass@") || strings.Contains(out, "password") {
		t.Errorf("copy's message shows a password: %q", out)
	}
	if got := digestOf(t, to); got != want {
		t.Fatalf("%s holds %+v after the copy, %s holds %+v", to, got, from, want)
	}
	return want.sum
}

type digest struct {
	sum string
	n   kv.Counts
}

func digestOf(t *testing.T, data string) digest {
	t.Helper()
	db := openForTest(t, data)
	defer db.Close()
	sum, n, err := kv.Digest(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	return digest{sum, n}
}

func openForTest(t *testing.T, data string) store {
	t.Helper()
	db, err := stores.Open(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// contents is everything the stores give of data, read through their own APIs (not the
// bytes): every document's every version, every conversation's messages, people, members,
// tokens; as JSON, so that two stores compare as text.
func contents(t *testing.T, data string) string {
	t.Helper()
	ctx := t.Context()
	db := openForTest(t, data)
	defer db.Close()
	var b strings.Builder
	put := func(what string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %s: %v", data, what, err)
		}
		j, _ := json.Marshal(v)
		fmt.Fprintf(&b, "%s: %s\n", what, j)
	}
	versions := 0
	for _, space := range []string{"personal", "team"} {
		ds := docstore.New(db, space)
		docs, err := view(t, ds, (*docstore.Reader).Documents)
		put(space+" documents", docs, err)
		for _, d := range docs {
			var vs []docstore.Version
			err := ds.Walk(ctx, d.ID, func(v docstore.Version) error {
				vs = append(vs, v)
				return nil
			})
			versions += len(vs)
			put(space+" versions of "+d.ID, vs, err)
		}
		th := threads.New(db, space)
		convs, err := view(t, th, func(r *threads.Reader) ([]threads.Conversation, error) { return r.Recent(1000, "") })
		put(space+" conversations", convs, err)
		for _, c := range convs {
			var more bool
			msgs, err := view(t, th, func(r *threads.Reader) (msgs []threads.Message, err error) {
				msgs, more, err = r.Page(c.ID, 10000, "")
				return msgs, err
			})
			put(space+" messages of "+c.ID, msgs, err)
			if more {
				t.Fatalf("%s: conversation %s has more than 10000 messages", data, c.ID)
			}
		}
		// Get reads a conversation's summary whether Recent lists it or not.
		other, err := view(t, th, func(r *threads.Reader) (threads.Conversation, error) { return r.Get("other") })
		put(space+" conversation other", fmt.Sprint(other, err), nil)
		members, err := access.New(db).Members(ctx, space)
		put(space+" members", members, err)
	}
	people, err := spaces.People(ctx, db)
	put("people", people, err)
	tokens, err := access.New(db).Tokens(ctx, "")
	put("tokens", tokens, err)
	if versions < 10 {
		t.Fatalf("%s holds %d versions: the fill went wrong", data, versions)
	}
	return b.String()
}

// serverAnswers is what a server on data answers to list_documents and to read_document of
// every version of every document.
func serverAnswers(t *testing.T, data string) string {
	t.Helper()
	c := stdioClient(t, data)
	var b strings.Builder
	for _, space := range []string{"personal", "team"} {
		db := openForTest(t, data)
		docs, err := view(t, docstore.New(db, space), (*docstore.Reader).Documents)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if space != "personal" { // the server's space is personal: team is read through its own server
			c = stdioClient(t, data, "--space", space)
		}
		a := callTool(t, c, "list_documents", map[string]any{})
		fmt.Fprintf(&b, "%s list_documents (isError %v):\n%s\n", space, a.isError, a.text)
		for _, d := range docs {
			for n := 1; n <= d.Version; n++ {
				a := callTool(t, c, "read_document", map[string]any{"document": d.ID, "version": n})
				fmt.Fprintf(&b, "%s read_document %s %d (isError %v):\n%s\n", space, d.ID, n, a.isError, a.text)
			}
		}
	}
	return b.String()
}

// TestCopy fills a bbolt file through the binary, copies it with compass-mcp copy to
// another bbolt file and (with COMPASS_TEST_DATA) to PostgreSQL and back to a new bbolt
// file, and checks each copy byte for byte (digests), through the stores (every version,
// message, person, member and token), and through a server's answers.
func TestCopy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.db")
	secret := fillForCopy(t, orig)
	want := contents(t, orig)
	wantDigest := digestOf(t, orig)

	check := func(t *testing.T, data string) {
		t.Helper()
		if got := digestOf(t, data); got != wantDigest {
			t.Errorf("%s: %+v, the original %+v", data, got, wantDigest)
		}
		if got := contents(t, data); got != want {
			t.Errorf("%s reads otherwise than the original (-original +copy):\n%s", data, lineDiff(want, got))
		}
	}

	t.Run("bbolt to bbolt", func(t *testing.T) {
		to := filepath.Join(t.TempDir(), "sub", "copy.db")
		copyVia(t, orig, to)
		check(t, to)
		// Copying again into what is no longer empty is refused, and changes nothing.
		out, err := cliResult("", "", "copy", "--from", orig, "--to", to)
		if err == nil || !strings.Contains(out, "is not empty") || !strings.Contains(out, "nothing was copied") {
			t.Errorf("a copy into a store that is not empty: err %v, said %q", err, out)
		}
		check(t, to)
		if out, err := cliResult("", "", "copy", "--from", orig, "--to", filepath.Join(filepath.Dir(orig), ".", "orig.db")); err == nil || !strings.Contains(out, "the same data") {
			t.Errorf("a copy onto itself: err %v, said %q", err, out)
		}
		missing := filepath.Join(t.TempDir(), "missing.db")
		if out, err := cliResult("", "", "copy", "--from", missing, "--to", filepath.Join(t.TempDir(), "x.db")); err == nil || !strings.Contains(out, "no such file") {
			t.Errorf("a copy from a file that is not there: err %v, said %q", err, out)
		}
	})

	t.Run("bbolt to PostgreSQL to bbolt", func(t *testing.T) {
		url := kvtest.URL(t)
		copyVia(t, orig, url)
		check(t, url)
		out, err := cliResult("", "", "copy", "--from", orig, "--to", url)
		if err == nil || !strings.Contains(out, "is not empty") {
			t.Errorf("a copy into a database that is not empty: err %v, said %q", err, out)
		}
		back := filepath.Join(t.TempDir(), "back.db")
		copyVia(t, url, back)
		check(t, back)

		// A server answers the same on the original, on PostgreSQL and on the copy back.
		wantAnswers := serverAnswers(t, orig)
		if !strings.Contains(wantAnswers, "Team charter") || !strings.Contains(wantAnswers, "four, by ana") {
			t.Fatalf("the original's server answers lack documents:\n%s", wantAnswers)
		}
		for _, data := range []string{url, back} {
			if got := serverAnswers(t, data); got != wantAnswers {
				t.Errorf("a server on %s answers otherwise (-original +copy):\n%s", data, lineDiff(wantAnswers, got))
			}
		}
		// The token minted on the original works on the copies.
		for _, data := range []string{url, back} {
			db := openForTest(t, data)
			p, err := access.New(db).Verify(t.Context(), secret)
			db.Close()
			if err != nil || p.Person != "bob" || p.Agent != "scout" {
				t.Errorf("%s: the token verifies as %+v, %v", data, p, err)
			}
		}
	})
	if _, err := os.Stat(orig); err != nil {
		t.Fatal(err)
	}
}

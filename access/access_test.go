package access_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
	"go.etcd.io/bbolt"
)

// openDB is a fresh store on whichever store the tests run on (kvtest.Open).
func openDB(t testing.TB) kv.DB { return kvtest.Open(t) }

// openBolt is a bbolt file held open, for the benchmarks, which measure bbolt.
func openBolt(t testing.TB) *bbolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "compass.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestMembers(t *testing.T) {
	ctx := t.Context()
	s := access.New(openDB(t)).WithOwner("personal", "ana")
	for _, m := range [][2]string{{"launch", "ana"}, {"launch", "ben"}, {"design", "ben"}} {
		if added, err := s.AddMember(ctx, m[0], m[1]); err != nil || !added {
			t.Fatalf("AddMember%v: %v %v", m, added, err)
		}
	}
	if added, err := s.AddMember(ctx, "launch", "ana"); err != nil || added {
		t.Errorf("adding ana to launch again: added %v, %v; want false, nil", added, err)
	}
	for _, bad := range [][2]string{{"no space", "ana"}, {"launch", "a:b"}, {"launch", ""}, {"launch", "two words"}, {"launch", "ana\x1b[2J"}, {"launch", "an\u202ea"}, {"launch", "a\u200bna"}, {"launch", "ana\u00a0"}} {
		if _, err := s.AddMember(ctx, bad[0], bad[1]); err == nil {
			t.Errorf("AddMember%q was accepted", bad)
		}
	}
	check := func(person string, want ...string) {
		t.Helper()
		got, err := s.SpacesOf(ctx, person)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("SpacesOf(%s) = %v, %v; want %v", person, got, err, want)
		}
	}
	check("ana", "launch", "personal") // personal as the owner, without a row
	check("ben", "design", "launch")
	check("cyd")
	if removed, err := s.RemoveMember(ctx, "launch", "ben"); err != nil || !removed {
		t.Fatalf("RemoveMember: %v %v", removed, err)
	}
	if removed, err := s.RemoveMember(ctx, "launch", "ben"); err != nil || removed {
		t.Errorf("removing ben again: %v %v", removed, err)
	}
	check("ben", "design")
	ms, err := s.Members(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.Space+"/"+m.Person)
	}
	if want := []string{"design/ben", "launch/ana", "personal/ana"}; !slices.Equal(got, want) {
		t.Errorf("Members(\"\") = %v, want %v", got, want)
	}
}

func TestTokens(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	db := openDB(t)
	s := access.New(db).WithOwner("personal", "ana").WithClock(clock)
	s.AddMember(ctx, "launch", "ana")
	s.AddMember(ctx, "launch", "ben")
	s.AddMember(ctx, "design", "ben")

	all, tAll, err := s.AddToken(ctx, access.NewToken{Person: "ana", Agent: "north"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != access.SecretLen || !strings.HasPrefix(all, "cmp_") {
		t.Errorf("secret %q: want cmp_ and %d characters", all, access.SecretLen)
	}
	limited, _, _ := s.AddToken(ctx, access.NewToken{Person: "ben", Spaces: []string{"launch", "personal"}, ReadOnly: true, Expires: now.Add(time.Hour)})
	revoked, tRevoked, _ := s.AddToken(ctx, access.NewToken{Person: "ben"})
	if _, err := s.Revoke(ctx, tRevoked.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Revoke(ctx, "nope"); !errors.Is(err, access.ErrNoToken) {
		t.Errorf("Revoke(nope): %v, want ErrNoToken", err)
	}

	p, err := s.Verify(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	if p.Person != "ana" || p.Agent != "north" || p.ReadOnly || p.TokenID != tAll.ID || !slices.Equal(p.Spaces, []string{"launch", "personal"}) {
		t.Errorf("ana's token: %+v", p)
	}
	if !p.MayWrite("launch") || p.MaySee("design") {
		t.Errorf("ana's token may write launch: %v; may see design: %v", p.MayWrite("launch"), p.MaySee("design"))
	}
	// ben's token names personal, where ben is no member: it reaches launch only.
	p, err = s.Verify(ctx, limited)
	if err != nil || !slices.Equal(p.Spaces, []string{"launch"}) || !p.ReadOnly || p.MayWrite("launch") || !p.MaySee("launch") {
		t.Errorf("ben's read-only token: %+v, %v", p, err)
	}
	if _, err := s.Verify(ctx, revoked); !errors.Is(err, access.ErrRevokedToken) {
		t.Errorf("revoked token: %v", err)
	}
	// A changed character fails the checksum; a right checksum of another secret is unknown.
	flipped := all[:10] + string(all[10]^1) + all[11:]
	for _, bad := range []string{"", "cmp_", flipped, "ghp_" + all[4:], all + "x"} {
		if _, err := s.Verify(ctx, bad); !errors.Is(err, access.ErrUnknownToken) {
			t.Errorf("Verify(%q): %v, want ErrUnknownToken", bad, err)
		}
	}
	other, _, _ := access.New(openDB(t)).AddToken(ctx, access.NewToken{Person: "ana"})
	if _, err := s.Verify(ctx, other); !errors.Is(err, access.ErrUnknownToken) {
		t.Errorf("another store's token: %v", err)
	}

	now = now.Add(time.Hour)
	if _, err := s.Verify(ctx, limited); !errors.Is(err, access.ErrExpiredToken) {
		t.Errorf("an hour later, the one-hour token: %v", err)
	}
	// Removing ben from launch takes it from his tokens at once.
	s.RemoveMember(ctx, "launch", "ben")
	now = now.Add(-2 * time.Hour)
	if p, err := s.Verify(ctx, limited); err != nil || len(p.Spaces) != 0 {
		t.Errorf("ben out of launch: %+v %v", p, err)
	}

	ts, err := s.Tokens(ctx, "")
	if err != nil || len(ts) != 3 {
		t.Fatalf("Tokens: %d, %v", len(ts), err)
	}
	for _, tok := range ts {
		if strings.Contains(fmt.Sprintf("%+v", tok), "cmp_") {
			t.Errorf("a listed token shows its secret: %+v", tok)
		}
	}
	if ben, _ := s.Tokens(ctx, "ben"); len(ben) != 2 {
		t.Errorf("ben's tokens: %d, want 2", len(ben))
	}
}

// Last used is written on first use, then not again within the minute.
func TestLastUsedAtMostOnceAMinute(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := access.New(openDB(t)).WithOwner("personal", "ana").WithClock(func() time.Time { return now })
	secret, tok, _ := s.AddToken(ctx, access.NewToken{Person: "ana"})
	lastUsed := func() time.Time {
		ts, _ := s.Tokens(ctx, "ana")
		return ts[0].LastUsed
	}
	if !lastUsed().IsZero() {
		t.Fatalf("a new token has been used")
	}
	first := now
	for range 3 {
		if _, err := s.Verify(ctx, secret); err != nil {
			t.Fatal(err)
		}
		now = now.Add(10 * time.Second)
	}
	if got := lastUsed(); !got.Equal(first) {
		t.Errorf("after three uses in 30 s, last used %v, want the first, %v", got, first)
	}
	now = first.Add(time.Minute)
	s.Verify(ctx, secret)
	if got := lastUsed(); !got.Equal(now) {
		t.Errorf("a minute later, last used %v, want %v (token %s)", got, now, tok.ID)
	}
}

// The gate: 401 with a challenge for missing, unknown, expired and revoked tokens; 403
// for a space not allowed; the static token and an open server act as the owner.
func TestGate(t *testing.T) {
	ctx := t.Context()
	db := openDB(t)
	s := access.New(db).WithOwner("personal", "ana")
	s.AddMember(ctx, "launch", "ben")
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := access.FromContext(r.Context())
		space, _ := access.SpaceOf(r.Context())
		fmt.Fprintf(w, "%s in %s", p.Person, space)
	})
	do := func(g *access.Gate, path, auth string) (int, string, string) {
		mux := http.NewServeMux()
		mux.Handle("/spaces/{space}/mcp", g.Require(g.RequireSpace(access.PathSpace, ok)))
		req := httptest.NewRequest("POST", path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		return w.Code, w.Header().Get("WWW-Authenticate"), strings.TrimSpace(w.Body.String())
	}
	open := &access.Gate{Store: s}
	if code, _, body := do(open, "/spaces/personal/mcp", ""); code != 200 || body != "ana in personal" {
		t.Errorf("open server: %d %q", code, body)
	}
	if code, _, _ := do(open, "/spaces/launch/mcp", ""); code != 403 {
		t.Errorf("open server, a space ana is not in: %d, want 403", code)
	}
	static := &access.Gate{Store: s, Static: "s3cret"}
	if code, _, body := do(static, "/spaces/personal/mcp", "bearer s3cret"); code != 200 || body != "ana in personal" {
		t.Errorf("static token: %d %q", code, body)
	}
	if code, ch, _ := do(static, "/spaces/personal/mcp", ""); code != 401 || ch != `Bearer realm="compass-mcp"` {
		t.Errorf("static token missing: %d %q", code, ch)
	}
	secret, _, _ := s.AddToken(ctx, access.NewToken{Person: "ben"})
	// Once a token row exists, an open server asks for tokens too.
	if code, _, _ := do(open, "/spaces/personal/mcp", ""); code != 401 {
		t.Errorf("open server with a token row, no token: %d, want 401", code)
	}
	if code, _, body := do(open, "/spaces/launch/mcp", "Bearer "+secret); code != 200 || body != "ben in launch" {
		t.Errorf("ben's token in launch: %d %q", code, body)
	}
	code, ch, _ := do(open, "/spaces/personal/mcp", "Bearer "+secret)
	if code != 403 || !strings.Contains(ch, `error="insufficient_scope"`) {
		t.Errorf("ben's token in personal: %d %q, want 403 insufficient_scope", code, ch)
	}
	code, ch, _ = do(open, "/spaces/launch/mcp", "Bearer s3cret")
	if code != 401 || !strings.Contains(ch, `error="invalid_token"`) {
		t.Errorf("a wrong token: %d %q, want 401 invalid_token", code, ch)
	}
	if code, _, _ := do(open, "/spaces/no%20such/mcp", "Bearer "+secret); code != 404 {
		t.Errorf("a space no space can be called: %d, want 404", code)
	}
}

// BenchmarkVerify is the cost a token adds to a request, with tokens rows in the store:
// go test -run '^$' -bench Verify ./access
func BenchmarkVerify(b *testing.B) {
	for _, n := range []int{1, 10000} {
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			ctx := b.Context()
			raw := openBolt(b)
			raw.NoSync = true
			s := access.New(bolt.Wrap(raw)).WithOwner("personal", "ana")
			s.AddMember(ctx, "launch", "ana")
			var secret string
			for i := range n {
				sec, _, err := s.AddToken(ctx, access.NewToken{Person: fmt.Sprintf("p%d", i%100), Spaces: []string{"launch"}})
				if err != nil {
					b.Fatal(err)
				}
				if i == n/2 {
					secret = sec
				}
			}
			s.Verify(ctx, secret) // its last-used write, once a minute, is not what is measured
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Verify(ctx, secret); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGateRequest is a whole HTTP request over loopback through the gate (Require,
// then RequireSpace) on the data file as a server holds it: open (no token asked for),
// then with a token among 1 or 10,000 rows. The difference is what tokens add to a request:
// go test -run '^$' -bench GateRequest ./access
func BenchmarkGateRequest(b *testing.B) {
	for _, n := range []int{0, 1, 10000} {
		name := fmt.Sprintf("tokens=%d", n)
		if n == 0 {
			name = "open"
		}
		b.Run(name, func(b *testing.B) {
			ctx := b.Context()
			path := filepath.Join(b.TempDir(), "compass.db")
			fast, err := bolt.Open(path, time.Second)
			if err != nil {
				b.Fatal(err)
			}
			fast.NoSync = true // making the rows is not what is measured
			s := access.New(bolt.Wrap(fast)).WithOwner("launch", "ana")
			var secret string
			for i := range n {
				sec, _, err := s.AddToken(ctx, access.NewToken{Person: "ana", Spaces: []string{"launch"}})
				if err != nil {
					b.Fatal(err)
				}
				if i == n/2 {
					secret = sec
				}
			}
			fast.Close()
			db, err := bolt.OpenFile(path, bolt.DefaultTimeout, bolt.DefaultIdle)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			g := &access.Gate{Store: access.New(db).WithOwner("launch", "ana")}
			mux := http.NewServeMux()
			mux.Handle("/spaces/{space}/mcp", g.Require(g.RequireSpace(access.PathSpace, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte("ok"))
			}))))
			srv := httptest.NewServer(mux)
			defer srv.Close()
			req, _ := http.NewRequest("POST", srv.URL+"/spaces/launch/mcp", nil)
			if secret != "" {
				req.Header.Set("Authorization", "Bearer "+secret)
			}
			do := func() {
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Fatalf("status %d", res.StatusCode)
				}
			}
			do() // the token's last-used write, once a minute, is not what is measured
			b.ResetTimer()
			for b.Loop() {
				do()
			}
		})
	}
}

// Rotate (an OAuth refresh) gives a row a new secret and expiry: the old secret stops
// working, the row stays one row, and a revoked row can't be rotated.
func TestRotate(t *testing.T) {
	ctx := t.Context()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s := access.New(openDB(t)).WithOwner("personal", "ana").WithClock(func() time.Time { return now })
	old, tok, err := s.AddToken(ctx, access.NewToken{Person: "ana", Agent: "claude", Client: "Claude (claude.ai)", Expires: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := s.Rotate(ctx, tok.ID, now.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(ctx, old); !errors.Is(err, access.ErrUnknownToken) {
		t.Errorf("the old secret after a rotation: %v, want ErrUnknownToken", err)
	}
	now = now.Add(90 * time.Minute)
	p, err := s.Verify(ctx, fresh)
	if err != nil || p.TokenID != tok.ID || p.Agent != "claude" || p.Client != "Claude (claude.ai)" {
		t.Errorf("the new secret, past the old expiry: %+v, %v", p, err)
	}
	if ts, _ := s.Tokens(ctx, ""); len(ts) != 1 || !ts[0].Expires.Equal(now.Add(30*time.Minute)) {
		t.Errorf("after a rotation, tokens: %+v", ts)
	}
	s.Revoke(ctx, tok.ID)
	if _, err := s.Rotate(ctx, tok.ID, now.Add(time.Hour)); !errors.Is(err, access.ErrRevokedToken) {
		t.Errorf("rotating a revoked token: %v, want ErrRevokedToken", err)
	}
	if _, err := s.Rotate(ctx, "nope", now); !errors.Is(err, access.ErrNoToken) {
		t.Errorf("rotating an unknown id: %v, want ErrNoToken", err)
	}
}

// A token cut short or mistyped (its checksum doesn't match) is said to be so, not "not
// known": the person copies it again rather than asking for a new one. A whole token that
// no row has is still unknown.
func TestMistypedToken(t *testing.T) {
	ctx := t.Context()
	s := access.New(openDB(t)).WithOwner("personal", "ana")
	secret, _, err := s.AddToken(ctx, access.NewToken{Person: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	typo := []byte(secret)
	if typo[10] = 'a'; secret[10] == 'a' {
		typo[10] = 'b'
	}
	for name, bad := range map[string]string{"cut short": secret[:len(secret)-3], "a typo": string(typo), "a space in it": secret[:20] + " " + secret[21:]} {
		_, err := s.Verify(ctx, bad)
		if !errors.Is(err, access.ErrMistypedToken) || !errors.Is(err, access.ErrUnknownToken) {
			t.Errorf("%s: Verify = %v, want ErrMistypedToken (an ErrUnknownToken)", name, err)
		}
		g := &access.Gate{Store: s}
		req := httptest.NewRequest("POST", "/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+bad)
		w := httptest.NewRecorder()
		g.Require(http.NotFoundHandler()).ServeHTTP(w, req)
		if w.Code != 401 || !strings.Contains(w.Body.String(), "incomplete or mistyped") {
			t.Errorf("%s: %d %s, want 401 saying it is incomplete or mistyped", name, w.Code, w.Body.String())
		}
	}
	s2 := access.New(openDB(t))
	if _, err := s2.Verify(ctx, secret); !errors.Is(err, access.ErrUnknownToken) || errors.Is(err, access.ErrMistypedToken) {
		t.Errorf("a whole token of another server: %v, want only ErrUnknownToken", err)
	}
}

func TestParseExpiry(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{"": {}, "never": {}, "90d": now.AddDate(0, 0, 90), "12h": now.Add(12 * time.Hour), "30m": now.Add(30 * time.Minute)} {
		if got, err := access.ParseExpiry(in, now); err != nil || !got.Equal(want) {
			t.Errorf("ParseExpiry(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"90", "d", "-1d", "0h", "99999999999d", "soon"} {
		if _, err := access.ParseExpiry(bad, now); err == nil {
			t.Errorf("ParseExpiry(%q) took it", bad)
		}
	}
}

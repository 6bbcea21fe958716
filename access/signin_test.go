package access_test

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/kv"
)

// A code signs one browser in, once; the browser stays signed in until it signs out.
func TestSignInCodeIsUsedOnce(t *testing.T) {
	ctx := t.Context()
	s := access.New(openDB(t)).WithOwner("personal", "ana")
	code, err := s.NewSignInCode(ctx, "ana", "personal", "/document/01J")
	if err != nil {
		t.Fatal(err)
	}
	cookie, g, err := s.RedeemCode(ctx, code)
	if err != nil || g.Person != "ana" || g.Space != "personal" || g.Next != "/document/01J" {
		t.Fatalf("redeeming: %+v, %v", g, err)
	}
	if _, _, err := s.RedeemCode(ctx, code); !errors.Is(err, access.ErrBadCode) {
		t.Errorf("the same code again: %v, want ErrBadCode", err)
	}
	if in, ok, err := s.SignedIn(ctx, cookie); err != nil || !ok || in.Person != "ana" || in.Space != "personal" {
		t.Fatalf("the browser: %+v %v %v", in, ok, err)
	}
	if err := s.SignOut(ctx, cookie); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.SignedIn(ctx, cookie); ok || err != nil {
		t.Errorf("after signing out: %v %v, want not signed in", ok, err)
	}
}

// The clock ends codes after CodeLife and browsers after SignedInLife; the next write
// forgets their rows.
func TestSignInsExpire(t *testing.T) {
	ctx := t.Context()
	db := openDB(t)
	c := &clock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := access.New(db).WithOwner("personal", "ana").WithClock(c.Now)
	stale, err := s.NewSignInCode(ctx, "ana", "personal", "/")
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := s.NewSignInCode(ctx, "ana", "personal", "/")
	if err != nil {
		t.Fatal(err)
	}
	cookie, _, err := s.RedeemCode(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	c.Add(access.CodeLife + time.Second)
	if _, _, err := s.RedeemCode(ctx, stale); !errors.Is(err, access.ErrBadCode) {
		t.Errorf("a code past CodeLife: %v, want ErrBadCode", err)
	}
	if _, ok, _ := s.SignedIn(ctx, cookie); !ok {
		t.Error("a browser signed in a quarter of an hour ago is signed out")
	}
	c.Add(access.SignedInLife)
	if _, ok, _ := s.SignedIn(ctx, cookie); ok {
		t.Error("a browser past SignedInLife is still signed in")
	}
	if n := signInRows(t, db, "codes"); n != 0 {
		t.Errorf("%d code rows after the stale one was tried, want 0", n)
	}
	// A new sign-in sweeps the expired browser.
	again, _ := s.NewSignInCode(ctx, "ana", "personal", "/")
	if _, _, err := s.RedeemCode(ctx, again); err != nil {
		t.Fatal(err)
	}
	if n := signInRows(t, db, "sessions"); n != 1 {
		t.Errorf("%d signed-in browsers after the sweep, want the new one", n)
	}
}

// A code made for a space its person is no longer a member of signs nobody in, and is
// used up.
func TestSignInCodeNeedsMembership(t *testing.T) {
	ctx := t.Context()
	s := access.New(openDB(t)).WithOwner("personal", "ana")
	if _, err := s.AddMember(ctx, "launch", "ben"); err != nil {
		t.Fatal(err)
	}
	code, err := s.NewSignInCode(ctx, "ben", "launch", "/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RemoveMember(ctx, "launch", "ben"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.RedeemCode(ctx, code); !errors.Is(err, access.ErrBadCode) {
		t.Errorf("a code of a space ben left: %v, want ErrBadCode", err)
	}
	if _, err := s.AddMember(ctx, "launch", "ben"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.RedeemCode(ctx, code); !errors.Is(err, access.ErrBadCode) {
		t.Errorf("the refused code, tried again: %v, want ErrBadCode (used up)", err)
	}
}

// A code leads only to a path of the page: not to another site (//host, /\host), and not
// to a URL.
func TestSignInCodeLeadsToAPath(t *testing.T) {
	ctx := t.Context()
	s := access.New(openDB(t)).WithOwner("personal", "ana")
	for _, next := range []string{"", "https://evil.example/", "//evil.example/", `/\evil.example`, "document/x"} {
		code, err := s.NewSignInCode(ctx, "ana", "personal", next)
		if err != nil {
			t.Fatal(err)
		}
		if _, g, err := s.RedeemCode(ctx, code); err != nil || g.Next != "/" {
			t.Errorf("next %q: %q, %v, want /", next, g.Next, err)
		}
	}
}

// Codes and cookies are kept by hash, in the rows an older compass-mcp's page wrote
// (web/codes, web/sessions: {person, space, next, expires}); a row it wrote works here.
func TestSignInRowsKeepTheirLayout(t *testing.T) {
	ctx := t.Context()
	db := openDB(t)
	s := access.New(db).WithOwner("personal", "ana")
	code, err := s.NewSignInCode(ctx, "ana", "personal", "/")
	if err != nil {
		t.Fatal(err)
	}
	if len(code) != 64 {
		t.Errorf("a code of %d characters, want 64", len(code))
	}
	var keys, values []string
	db.View(ctx, func(tx kv.Tx) error {
		keys, values = nil, nil // the View may run again
		return tx.Bucket([]byte("web")).Bucket([]byte("codes")).ForEach(func(k, v []byte) error {
			keys, values = append(keys, string(k)), append(values, string(v))
			return nil
		})
	})
	if h := sha256.Sum256([]byte(code)); len(keys) != 1 || keys[0] != string(h[:]) || strings.Contains(values[0], code) {
		t.Fatalf("the code's row: keys %q, values %q; want one, under the code's SHA-256", keys, values)
	}

	// As an older page kept them: a code, and a browser it signed in.
	const oldCode, oldCookie = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	err = db.Update(ctx, func(tx kv.Tx) error {
		web, err := tx.CreateBucketIfNotExists([]byte("web"))
		if err != nil {
			return err
		}
		for bucket, row := range map[string][2]string{
			"codes":    {oldCode, `{"person":"ana","space":"personal","next":"/new","expires":"` + later + `"}`},
			"sessions": {oldCookie, `{"person":"ana","space":"personal","expires":"` + later + `"}`},
		} {
			b, err := web.CreateBucketIfNotExists([]byte(bucket))
			if err != nil {
				return err
			}
			h := sha256.Sum256([]byte(row[0]))
			if err := b.Put(h[:], []byte(row[1])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if in, ok, err := s.SignedIn(ctx, oldCookie); !ok || err != nil || in.Person != "ana" {
		t.Errorf("a browser an older page signed in: %+v %v %v", in, ok, err)
	}
	cookie, g, err := s.RedeemCode(ctx, oldCode)
	if err != nil || g.Next != "/new" {
		t.Fatalf("an older page's code: %+v %v", g, err)
	}
	// And the row this one writes is the older page's shape, for an older replica.
	db.View(ctx, func(tx kv.Tx) error {
		h := sha256.Sum256([]byte(cookie))
		raw := tx.Bucket([]byte("web")).Bucket([]byte("sessions")).Get(h[:])
		var row map[string]any
		if err := json.Unmarshal(raw, &row); err != nil || row["person"] != "ana" || row["space"] != "personal" || row["expires"] == nil {
			t.Errorf("the browser's row: %s (%v)", raw, err)
		}
		return nil
	})
}

// What a browser or a link sends is the stranger's: a huge or malformed code or cookie is
// refused without harm.
func TestSignInRefusesStrangeInput(t *testing.T) {
	ctx := t.Context()
	s := access.New(openDB(t)).WithOwner("personal", "ana")
	for _, code := range []string{"", "nope", strings.Repeat("a", 64), strings.Repeat("\x00", 1<<20)} {
		if _, _, err := s.RedeemCode(ctx, code); !errors.Is(err, access.ErrBadCode) {
			t.Errorf("code %.20q: %v, want ErrBadCode", code, err)
		}
	}
	for _, cookie := range []string{"", strings.Repeat("a", 64), strings.Repeat("\xff", 1<<20)} {
		if _, ok, err := s.SignedIn(ctx, cookie); ok || err != nil {
			t.Errorf("cookie %.20q: %v %v, want not signed in", cookie, ok, err)
		}
		if err := s.SignOut(ctx, cookie); err != nil {
			t.Errorf("signing out %.20q: %v", cookie, err)
		}
	}
}

// signInRows counts the rows of web/<bucket>.
func signInRows(t *testing.T, db kv.DB, bucket string) int {
	t.Helper()
	n := 0
	err := db.View(t.Context(), func(tx kv.Tx) error {
		n = 0 // the View may run again
		if w := tx.Bucket([]byte("web")); w != nil && w.Bucket([]byte(bucket)) != nil {
			return w.Bucket([]byte(bucket)).ForEach(func(_, _ []byte) error { n++; return nil })
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// CodeFor says whom a code signs in without using it up (the page asks before it signs a
// browser in from another site), and refuses what RedeemCode would.
func TestCodeForReadsWithoutUsingUp(t *testing.T) {
	ctx := t.Context()
	c := &clock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	s := access.New(openDB(t)).WithOwner("personal", "ana").WithClock(c.Now)
	code, err := s.NewSignInCode(ctx, "ana", "personal", "/")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if g, err := s.CodeFor(ctx, code); err != nil || g.Person != "ana" || g.Space != "personal" {
			t.Fatalf("CodeFor: %+v %v", g, err)
		}
	}
	if _, _, err := s.RedeemCode(ctx, code); err != nil {
		t.Fatalf("redeeming after CodeFor: %v", err)
	}
	if _, err := s.CodeFor(ctx, code); !errors.Is(err, access.ErrBadCode) {
		t.Errorf("a used code: %v, want ErrBadCode", err)
	}
	stale, _ := s.NewSignInCode(ctx, "ana", "personal", "/")
	c.Add(access.CodeLife + time.Second)
	for _, bad := range []string{stale, "nope", strings.Repeat("0", 64)} {
		if _, err := s.CodeFor(ctx, bad); !errors.Is(err, access.ErrBadCode) {
			t.Errorf("CodeFor(%.10s…): %v, want ErrBadCode", bad, err)
		}
	}
}

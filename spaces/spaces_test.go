package spaces

import (
	"errors"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

func TestValid(t *testing.T) {
	for _, ok := range []string{"personal", "launch-2026", "a.b_c", "X"} {
		if err := Valid(ok); err != nil {
			t.Errorf("Valid(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "with space", "slash/y", "é", string(make([]byte, 65))} {
		if err := Valid(bad); !errors.Is(err, ErrBadSpace) {
			t.Errorf("Valid(%q) = %v, want ErrBadSpace", bad, err)
		}
	}
}

func TestParseActor(t *testing.T) {
	for in, want := range map[string]Actor{"person:ana": Person("ana"), "agent:north": Agent("north"), "ana": Person("ana")} {
		if got, err := ParseActor(in); err != nil || got != want {
			t.Errorf("ParseActor(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "person:", "robot:x", "agent:a\nb"} {
		if _, err := ParseActor(bad); !errors.Is(err, ErrBadActor) {
			t.Errorf("ParseActor(%q) = %v, want ErrBadActor", bad, err)
		}
	}
}

func TestNames(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	if err := SetName(ctx, db, "ana", "  Ana Lima "); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "   ", "two\nlines"} {
		if err := SetName(ctx, db, "bo", bad); !errors.Is(err, ErrBadName) {
			t.Errorf("SetName(%q) = %v, want ErrBadName", bad, err)
		}
	}
	if err := SetName(ctx, db, "cy", "Cy"); err != nil {
		t.Fatal(err)
	}
	var of Names // NamesOf, read in the View, shown after it
	db.View(ctx, func(tx kv.Tx) error {
		n := NamesIn(tx)
		for in, want := range map[string]string{"person:ana": "Ana Lima", "person:bo": "bo", "agent:north": "north", "ana": "Ana Lima", "weird:x": "weird:x"} {
			if got := n.ShowString(in); got != want {
				t.Errorf("ShowString(%q) = %q, want %q", in, got, want)
			}
		}
		of = NamesOf(tx, "person:ana", "agent:cy", "person:bo", "weird:x")
		return nil
	})
	// The actors NamesOf read show by name; any other by its id, a named one not asked for too.
	for in, want := range map[string]string{"person:ana": "Ana Lima", "person:bo": "bo", "agent:cy": "cy", "person:cy": "cy", "weird:x": "weird:x"} {
		if got := of.ShowString(in); got != want {
			t.Errorf("NamesOf's ShowString(%q) = %q, want %q", in, got, want)
		}
	}
}

// A space's buckets are apart from another's: what is made in one isn't in the other.
func TestBucketsAreApart(t *testing.T) {
	db := kvtest.Open(t)
	err := db.Update(t.Context(), func(tx kv.Tx) error {
		b, err := CreateSub(tx, "launch", "docs")
		if err != nil {
			return err
		}
		if err := b.Put([]byte("k"), []byte("v")); err != nil {
			return err
		}
		if Sub(tx, "personal", "docs") != nil || Bucket(tx, "personal") != nil {
			t.Error("another space sees the bucket")
		}
		_, err = CreateSub(tx, "bad space", "docs")
		if !errors.Is(err, ErrBadSpace) {
			t.Errorf("CreateSub in a bad space = %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

package command

import (
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// People with no display name say how to give one; a name given is said trimmed and listed
// after the person's id; a name that can't be one is refused, and nothing is said.
func TestPeopleOnATerminal(t *testing.T) {
	ctx := t.Context()
	db := kvtest.Open(t)
	var out, errs strings.Builder
	if err := ListPeople(ctx, db, &out, &errs); err != nil || out.Len() != 0 || !strings.Contains(errs.String(), "people set ID NAME") {
		t.Fatalf("no names: %q, %q, %v", out.String(), errs.String(), err)
	}
	errs.Reset()
	if err := SetPersonName(ctx, db, "ana", "  Ana Lindqvist ", &out); err != nil || out.String() != "person:ana shows as Ana Lindqvist.\n" {
		t.Fatalf("set: %q, %v", out.String(), err)
	}
	out.Reset()
	if err := SetPersonName(ctx, db, "bob", "", &out); err == nil || out.Len() != 0 {
		t.Errorf("an empty name: said %q, %v; want refused", out.String(), err)
	}
	if err := ListPeople(ctx, db, &out, &errs); err != nil || out.String() != "person:ana\tAna Lindqvist\n" || errs.Len() != 0 {
		t.Errorf("list: %q, %q, %v", out.String(), errs.String(), err)
	}
}

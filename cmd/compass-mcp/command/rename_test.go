package command

import (
	"strings"
	"testing"
)

// TestRenameSaysTheLinks: docs rename says which texts it rewrote ([[Old]] → [[New]]).
func TestRenameSaysTheLinks(t *testing.T) {
	data := newData(t)
	run := func(args ...string) (string, error) { return cliResult(data, "", append(args, "--for", "ana")...) }
	for _, doc := range [][2]string{{"Budget", "Ten.\n"}, {"Plan", "See [[Budget]].\n"}, {"Notes", "[[budget|the budget]]\n"}} {
		if _, err := run("call", "--agent", "north", "write_document", "title="+doc[0], "text="+doc[1]); err != nil {
			t.Fatal(err)
		}
	}
	out, err := run("docs", "rename", "Budget", "Costs")
	if err != nil || !strings.HasSuffix(out, "as version 2: +0 \u22120 lines, and updated links in 2 documents.\n") {
		t.Fatalf("docs rename: %v %q", err, out)
	}
	if out, err := run("docs", "show", "Notes"); err != nil || out != "[[Costs|the budget]]\n" {
		t.Errorf("Notes after the rename: %v %q", err, out)
	}
}

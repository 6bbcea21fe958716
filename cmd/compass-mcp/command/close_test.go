package command

import (
	"strings"
	"testing"
)

// The person's docs commands, like the tools, name the close titles of a name that names
// nothing (issue 23.15); undelete and purge, the close deleted ones.
func TestDocsSuggestCloseTitles(t *testing.T) {
	data := newData(t)
	out, err := cliResult(data, "a\n", "docs", "save", "--new", "Launch plan")
	if err != nil {
		t.Fatal(out)
	}
	id := strings.TrimSpace(cli(t, data, "call", "list_documents"))
	id = id[strings.Index(id, "· id ")+len("· id "):]
	id = id[:strings.IndexByte(id, ' ')]
	refused := func(want string, args ...string) {
		t.Helper()
		out, err := cliResult(data, "", args...)
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("compass-mcp %s: err %v, said %q; want a refusal with %q", strings.Join(args, " "), err, out, want)
		}
	}
	close := `; close: "Launch plan" (` + id + ")"
	refused(`no document "Lanch plan" in space personal (docs list shows them; docs list --deleted the deleted ones)`+close+"\n", "docs", "show", "Lanch plan")
	refused(close, "docs", "history", "Lanch plan")
	refused(close, "docs", "diff", "Lanch plan", "1")
	refused(`no document "Lanch plan"`, "docs", "restore", "Lanch plan", "1") // the name, though restore's refusal is worked out without it
	refused(close, "docs", "rename", "Lanch plan", "Plan")
	refused(close, "docs", "delete", "Lanch plan")
	refused(`No document "Lanch plan" in this space: list_documents shows what's here. Close: [Launch plan](`, "call", "read_document", "document=Lanch plan")
	refused(`no document "Roadmap" in space personal (docs list shows them; docs list --deleted the deleted ones)`+"\n", "docs", "show", "Roadmap")
	cli(t, data, "docs", "delete", "Launch plan")
	refused(`no document "Launch plan" in space personal (docs list shows them; docs list --deleted the deleted ones)`+"\n", "docs", "show", "Launch plan") // deleted: not suggested
	refused(close, "docs", "undelete", "Lanch plan")
	refused(close, "docs", "purge", "Lanch plan")
}

package filesync

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// world is a plan's input built by hand: the state's entries, the folder's files, the
// space's documents, as a pass would have read them.
type world struct {
	in *input
}

func newWorld() *world {
	return &world{in: &input{
		st:       &State{Docs: map[string]*Entry{}},
		files:    map[string]*file{},
		texts:    map[string][]byte{},
		unread:   map[string]error{},
		docs:     map[string]docstore.Document{},
		noted:    map[string]*Entry{},
		writable: true,
		look:     seen{claimed: map[string]string{}, moved: map[string]string{}, postponed: map[string]bool{}},
	}}
}

// entry notes that document id's file was at rel, in step with version v, with text.
func (w *world) entry(id, rel string, v int, text string) *world {
	w.in.st.Docs[id] = &Entry{Path: rel, Title: TitleFor(rel), Version: v, Hash: hashOf([]byte(text))}
	return w
}

// file puts a file at rel with text.
func (w *world) file(rel, text string) *world {
	w.in.files[rel] = &file{rel: rel, size: int64(len(text)), mtime: time.Unix(1, 0), hash: hashOf([]byte(text))}
	w.in.texts[rel] = []byte(text)
	return w
}

// doc puts a document in the space's listing.
func (w *world) doc(id, title string, v int) *world {
	w.in.docs[id] = docstore.Document{ID: id, Title: title, Version: v}
	return w
}

// deleted puts a deleted document in the listing.
func (w *world) deleted(id, title string, v int) *world {
	w.in.docs[id] = docstore.Document{ID: id, Title: title, Version: v, Deleted: &docstore.Deletion{At: time.Unix(2, 0)}}
	return w
}

// moved says the look found document id's file at rel.
func (w *world) moved(id, rel string) *world {
	w.in.look.moved[id] = rel
	return w
}

// plan looks as match would (each entry's file claimed where it is, or where it moved)
// and plans.
func (w *world) plan() plan {
	in := w.in
	in.look.ids = sortedIDs(in.st)
	for id, e := range in.st.Docs {
		if in.files[e.Path] != nil {
			in.look.claimed[e.Path] = id
		}
	}
	for id, rel := range in.look.moved {
		in.look.claimed[rel] = id
	}
	return makePlan(in)
}

// planRow is one rule of docs/SYNC.md ("What a pass does, rule by rule"): the entry, the
// file and the document, and the steps the plan makes of them.
type planRow struct {
	rule  string
	world *world
	want  []string
	wait  bool
}

func planRows() []planRow {
	return []planRow{
		{"in step", newWorld().entry("A", "a.md", 3, "x").file("a.md", "x").doc("A", "a", 3),
			[]string{"record A a.md"}, false},
		{"file edited", newWorld().entry("A", "a.md", 3, "x").file("a.md", "y").doc("A", "a", 3),
			[]string{"save A a.md"}, false},
		{"both changed", newWorld().entry("A", "a.md", 3, "x").file("a.md", "y").doc("A", "a", 5),
			[]string{"save A a.md"}, false},
		{"document changed", newWorld().entry("A", "a.md", 3, "x").file("a.md", "x").doc("A", "a", 5),
			[]string{"write A a.md"}, false},
		{"file moved", newWorld().entry("A", "a.md", 3, "x").file("b/c.md", "x").moved("A", "b/c.md").doc("A", "a", 3),
			[]string{"rename A b/c.md title b/c", "entry A b/c.md", "write A b/c.md if behind"}, false},
		{"file moved, document changed", newWorld().entry("A", "a.md", 3, "x").file("c.md", "x").moved("A", "c.md").doc("A", "a", 4),
			[]string{"rename A c.md title c", "entry A c.md", "write A c.md"}, false},
		{"file moved to its title's name", newWorld().entry("A", "a.md", 3, "x").file("b.md", "x").moved("A", "b.md").doc("A", "b", 4),
			[]string{"entry A b.md", "write A b.md"}, false},
		{"document renamed", newWorld().entry("A", "a.md", 3, "x").file("a.md", "x").doc("A", "Plans/Q3", 4),
			[]string{"move A a.md to Plans/Q3.md", "write A a.md"}, false},
		{"document renamed, same file name", newWorld().entry("A", "a-b.md", 3, "x").file("a-b.md", "x").doc("A", "a:b", 3),
			[]string{"entry A", "record A a-b.md"}, false},
		{"document renamed to an ignored name", ignoring("drafts/").entry("A", "a.md", 3, "x").file("a.md", "x").doc("A", "drafts/a", 4),
			[]string{"entry A", "say A", "write A a.md"}, false},
		{"file deleted", newWorld().entry("A", "a.md", 3, "x").doc("A", "a", 3),
			[]string{"delete A a.md"}, false},
		{"file deleted, document changed since", newWorld().entry("A", "a.md", 3, "x").doc("A", "a", 4),
			[]string{"write A a.md"}, false},
		{"document deleted", newWorld().entry("A", "a.md", 3, "x").file("a.md", "x").deleted("A", "a", 3),
			[]string{"remove A a.md"}, false},
		{"document deleted, file edited", newWorld().entry("A", "a.md", 3, "x").file("a.md", "y").deleted("A", "a", 3),
			[]string{"undelete A a.md", "save A a.md"}, false},
		{"document deleted, file gone", newWorld().entry("A", "a.md", 3, "x").deleted("A", "a", 3),
			[]string{"forget A"}, false},
		{"document purged, file edited", newWorld().entry("A", "a.md", 3, "x").file("a.md", "y"),
			[]string{"forget A a.md", "create a.md title a"}, false},
		{"document purged, file unchanged", newWorld().entry("A", "a.md", 3, "x").file("a.md", "x"),
			[]string{"remove A a.md"}, false},
		{"new file", newWorld().file("a.md", "x"),
			[]string{"create a.md title a"}, false},
		{"new document", newWorld().doc("A", "Plans/Q3", 1),
			[]string{"write new A Plans/Q3.md"}, false},
		{"new document, its name taken", newWorld().entry("B", "a-b.md", 1, "x").file("a-b.md", "x").doc("B", "a-b", 1).doc("A", "a:b", 1),
			[]string{"record B a-b.md", "write new A a-b (A).md"}, false},
		{"new documents, one name", newWorld().doc("A", "a:b", 1).doc("B", "a*b", 1),
			[]string{"write new A a-b.md", "write new B a-b (B).md"}, false},
		{"new document, a name the scan skips", newWorld().doc("A", "#tags", 1),
			[]string{"write new A _tags.md"}, false},
		{"new document, a name git or Windows can't take", newWorld().doc("A", "GIT~1/config", 1).doc("B", "aux", 1),
			[]string{"write new A _GIT~1/config.md", "write new B _aux.md"}, false},
		{"new document, its file ignored", ignoring("drafts/").doc("A", "drafts/x", 1),
			[]string{"say A"}, false},
		{"first run, same title", newWorld().file("Plan.md", "x").doc("A", "plan", 2),
			[]string{"join A Plan.md"}, false},
		{"new file, its title another file's", newWorld().entry("A", "Plan.md", 1, "x").file("Plan.md", "x").file("plan.md", "y").doc("A", "Plan", 1),
			[]string{"record A Plan.md", "say plan.md"}, false},
		{"new file, no title", newWorld().file("a\tb.md", "x"),
			[]string{"say a\tb.md"}, false},
		{"file the space can't hold", newWorld().file("a.md", "x\x00y"),
			[]string{"say a.md"}, false},
		{"file unreadable", unreadable(newWorld().entry("A", "a.md", 3, "x").file("a.md", "y").doc("A", "a", 3), "a.md"),
			[]string{"say a.md"}, false},
		{"file no longer synced", postponed(newWorld().entry("A", "a.md", 3, "x").doc("A", "a", 4), "A"),
			nil, false},
		{"folder changed while read", waiting(newWorld().entry("A", "a.md", 3, "x").file("a.md", "x").file("b.md", "y").doc("A", "a", 3).doc("C", "c", 1)),
			[]string{"record A a.md"}, true},
		{"read-only: file edited", onlyReads(newWorld().entry("A", "a.md", 3, "x").file("a.md", "y").doc("A", "a", 3)),
			[]string{"say a.md"}, false},
		{"read-only: file edited, document changed", onlyReads(newWorld().entry("A", "a.md", 3, "x").file("a.md", "y").doc("A", "a", 5)),
			[]string{"catch up A a.md"}, false},
		{"read-only: document changed", onlyReads(newWorld().entry("A", "a.md", 3, "x").file("a.md", "x").doc("A", "a", 5)),
			[]string{"write A a.md"}, false},
		{"read-only: file deleted", onlyReads(newWorld().entry("A", "a.md", 3, "x").doc("A", "a", 3)),
			[]string{"say a.md"}, false},
		{"read-only: file moved", onlyReads(newWorld().entry("A", "a.md", 3, "x").file("b.md", "x").moved("A", "b.md").doc("A", "a", 3)),
			[]string{"say b.md"}, false},
		{"read-only: new file", onlyReads(newWorld().file("a.md", "x")),
			[]string{"say a.md"}, false},
		{"read-only: document deleted, file edited", onlyReads(newWorld().entry("A", "a.md", 3, "x").file("a.md", "y").deleted("A", "a", 3)),
			[]string{"say a.md"}, false},
		{"moves, then saves and writes, then deletes", newWorld().
			entry("A", "a.md", 1, "x").doc("A", "a", 1).
			entry("B", "b.md", 1, "x").file("b.md", "y").doc("B", "b", 1).
			entry("C", "c.md", 1, "x").file("c.md", "x").doc("C", "z", 1).
			entry("D", "d.md", 1, "x").file("d.md", "x").deleted("D", "d", 1).
			file("e.md", "e").doc("F", "f", 1),
			[]string{"move C c.md to z.md", "save B b.md", "record C c.md", "delete A a.md", "remove D d.md", "create e.md title e", "write new F f.md"}, false},
	}
}

func ignoring(pattern string) *world {
	w := newWorld()
	w.in.ig.patterns = []string{pattern}
	return w
}

func onlyReads(w *world) *world { w.in.writable = false; return w }

func unreadable(w *world, rel string) *world {
	w.in.unread[rel] = os.ErrPermission
	return w
}

func postponed(w *world, id string) *world { w.in.look.postponed[id] = true; return w }

func waiting(w *world) *world { w.in.look.freshWait = true; return w }

// TestPlanRules: each rule of docs/SYNC.md, a row: the entry, the file and the document,
// and the steps the pure plan makes of them, in the order apply does them.
func TestPlanRules(t *testing.T) {
	for _, r := range planRows() {
		t.Run(r.rule, func(t *testing.T) {
			pl := r.world.plan()
			var got []string
			for _, s := range pl.steps {
				got = append(got, s.String())
			}
			if !slices.Equal(got, r.want) || pl.wait != r.wait {
				t.Errorf("steps %q (wait %v), want %q (wait %v)", got, pl.wait, r.want, r.wait)
			}
		})
	}
}

// TestPlanRulesAreSYNCmd: the rules docs/SYNC.md lists are the rows of TestPlanRules, one
// a rule, both ways.
func TestPlanRulesAreSYNCmd(t *testing.T) {
	raw, err := os.ReadFile("../docs/SYNC.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "<!-- plan rules -->")
	end := strings.Index(doc, "<!-- end of plan rules -->")
	if start < 0 || end < start {
		t.Fatal("docs/SYNC.md has no table of the plan's rules between <!-- plan rules --> and <!-- end of plan rules -->")
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| ([^|`]+?) \\|").FindAllStringSubmatch(doc[start:end], -1) {
		if m[1] != "rule" && !strings.HasPrefix(m[1], "---") {
			listed[m[1]] = true
		}
	}
	rows := map[string]bool{}
	for _, r := range planRows() {
		if rows[r.rule] {
			t.Errorf("two rows are %q", r.rule)
		}
		rows[r.rule] = true
		if !listed[r.rule] {
			t.Errorf("row %q is no rule docs/SYNC.md lists", r.rule)
		}
	}
	for rule := range listed {
		if !rows[rule] {
			t.Errorf("docs/SYNC.md's rule %q has no row in TestPlanRules", rule)
		}
	}
}

// The plan decides from what it is given, and changes none of it: planned twice, the
// same steps, and the state as it was.
func TestPlanIsPure(t *testing.T) {
	for _, r := range planRows() {
		if r.world.in.st.Docs["A"] == nil {
			continue
		}
		before := *r.world.in.st.Docs["A"]
		first := r.world.plan()
		second := r.world.plan()
		if !slices.EqualFunc(first.steps, second.steps, func(a, b step) bool { return a.String() == b.String() }) {
			t.Errorf("%s: planned twice, %v then %v", r.rule, first.steps, second.steps)
		}
		if after := *r.world.in.st.Docs["A"]; after.Path != before.Path || after.Title != before.Title || after.Version != before.Version || after.Hash != before.Hash {
			t.Errorf("%s: the plan changed the entry %+v to %+v", r.rule, before, after)
		}
	}
}

// plan.go reads nothing and writes nothing: it imports no package that reaches the file
// system, the network, the clock or the space (docstore for its pure title and text rules
// and the Document type), and none of its functions is a pass's, which has them.
func TestPlanDoesNoIO(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "plan.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{`"fmt"`: true, `"slices"`: true, `"github.com/compass-mcp/compass-mcp/docstore"`: true}
	for _, imp := range f.Imports {
		if !allowed[imp.Path.Value] {
			t.Errorf("plan.go imports %s", imp.Path.Value)
		}
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil {
			continue
		}
		if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
			if id, ok := star.X.(*ast.Ident); ok && id.Name == "pass" {
				t.Errorf("plan.go has (*pass).%s", fd.Name.Name)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if sel.Sel.Name == "space" || sel.Sel.Name == "Space" || sel.Sel.Name == "y" {
				t.Errorf("plan.go reaches the Sync or its space: %s", fset.Position(sel.Pos()))
			}
		}
		return true
	})
}

package style

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sleepsAllowed are the only places of the tests (outside e2e/) and of their helpers where
// a test may wait for time to pass, each with why nothing else can do: at most three, one
// sleep each, with a comment above it. Everywhere else a test waits for what it actually
// waits for: a channel, a condition on a ticker with a deadline (internal/testkit/wait), a
// process's line, synctest.Wait, a file's time set with os.Chtimes, a row aged in SQL.
var sleepsAllowed = []struct {
	file, fn string // the file, relative to the module, and the function (Type.Method for a method)
	why      string
}{
	{"threads/claudecode/bench_test.go", "followAtRest",
		"the benchmark measures the CPU the follower uses over a span of wall time in which nothing happens: the time passing is the measurement"},
	{"internal/testkit/pgproxy/pgproxy.go", "Proxy.forward",
		"the proxy delays each read by what the test asks, as a slower network would: the delay is what it is for"},
	{"filesync/torture_test.go", "torturePause",
		"the torture's actors act at random moments against a real sync that is killed at random moments: the moments are the input, nothing is waited for"},
}

// sleepHelpers are the folders of test helpers that are not _test.go files: a sleep hidden
// in one is a test's sleep all the same.
var sleepHelpers = []string{"internal/testkit/", "kv/kvtest/"}

// A sleep is where a test waits for time to pass instead of for an event or a condition:
// time.Sleep, or a receive from time.After, time.Tick or a new timer's channel made a
// statement of its own (a sleep by another name). A receive in a select, beside what is
// waited for, is a deadline, and is no sleep.
type sleep struct {
	line int
	fn   string // the enclosing function, Type.Method for a method; "" at the top level
	what string
	why  bool // a comment ends on the line above it or is on its line
}

// sleepsIn are the sleeps of a parsed file.
func sleepsIn(fset *token.FileSet, f *ast.File) []sleep {
	timeName := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			timeName = "time"
			if imp.Name != nil {
				timeName = imp.Name.Name
			}
		}
	}
	if timeName == "" || timeName == "_" {
		return nil
	}
	isTime := func(e ast.Expr, names ...string) bool {
		call, ok := e.(*ast.CallExpr)
		if !ok {
			return false
		}
		if timeName == "." {
			id, ok := call.Fun.(*ast.Ident)
			return ok && slices.Contains(names, id.Name)
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && x.Name == timeName && slices.Contains(names, sel.Sel.Name)
	}
	commented := map[int]bool{} // lines a comment ends on
	for _, g := range f.Comments {
		commented[fset.Position(g.End()).Line] = true
	}
	var out []sleep
	check := func(fn string, n ast.Node) {
		var visit func(n ast.Node) bool
		visit = func(n ast.Node) bool {
			what := ""
			switch n := n.(type) {
			case *ast.CommClause: // a select's case: what it receives is no statement of its own
				for _, st := range n.Body {
					ast.Inspect(st, visit)
				}
				return false
			case *ast.CallExpr:
				if isTime(n, "Sleep") {
					what = "time.Sleep"
				}
			case *ast.ExprStmt:
				if u, ok := n.X.(*ast.UnaryExpr); ok && u.Op == token.ARROW {
					switch x := u.X.(type) {
					case *ast.CallExpr:
						if isTime(x, "After", "Tick") {
							what = "a receive from time.After or time.Tick as a statement"
						}
					case *ast.SelectorExpr:
						if x.Sel.Name == "C" && isTime(x.X, "NewTimer", "NewTicker") {
							what = "a receive from a new timer as a statement"
						}
					}
				}
			}
			if what != "" {
				line := fset.Position(n.Pos()).Line
				out = append(out, sleep{line: line, fn: fn, what: what, why: commented[line-1] || commented[line]})
			}
			return true
		}
		ast.Inspect(n, visit)
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			check("", d)
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			t := fd.Recv.List[0].Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			if g, ok := t.(*ast.IndexExpr); ok {
				t = g.X
			}
			if id, ok := t.(*ast.Ident); ok {
				name = id.Name + "." + name
			}
		}
		check(name, fd)
	}
	return out
}

// The tests (outside e2e/, whose tests drive whole processes) and their helpers sleep only
// in the places sleepsAllowed names, each once, with a comment saying why.
func TestNoSleeps(t *testing.T) {
	if len(sleepsAllowed) > 3 {
		t.Errorf("%d places may sleep: at most 3", len(sleepsAllowed))
	}
	root := filepath.Join("..", "..")
	found := map[string][]sleep{} // by file
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" || rel == "e2e") {
				return filepath.SkipDir
			}
			return nil
		}
		helper := slices.ContainsFunc(sleepHelpers, func(p string) bool { return strings.HasPrefix(rel, p) })
		if !strings.HasSuffix(rel, ".go") || !strings.HasSuffix(rel, "_test.go") && !helper {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if s := sleepsIn(fset, f); len(s) > 0 {
			found[rel] = s
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range sleepsAllowed {
		var at []sleep
		for _, s := range found[a.file] {
			if s.fn == a.fn {
				at = append(at, s)
			}
		}
		switch {
		case len(at) == 0:
			t.Errorf("%s's %s may sleep (%s), but doesn't: take it out of sleepsAllowed", a.file, a.fn, a.why)
		case len(at) > 1:
			t.Errorf("%s's %s sleeps %d times (lines %v): one allowed sleep is one sleep", a.file, a.fn, len(at), lines(at))
		case !at[0].why:
			t.Errorf("%s:%d: %s's allowed sleep has no comment above it saying why nothing else can do (%s)", a.file, at[0].line, a.fn, a.why)
		}
	}
	for file, ss := range found {
		for _, s := range ss {
			if slices.ContainsFunc(sleepsAllowed, func(a struct{ file, fn, why string }) bool { return a.file == file && a.fn == s.fn }) {
				continue
			}
			t.Errorf("%s:%d: %s in %s: wait for what the test waits for (a channel, wait.Until on a condition, a process's line, synctest.Wait, os.Chtimes); a sleep nothing else can replace goes in sleepsAllowed, with why (at most 3)", file, s.line, s.what, s.fn)
		}
	}
}

func lines(ss []sleep) []int {
	var out []int
	for _, s := range ss {
		out = append(out, s.line)
	}
	return out
}

// The check finds what it is for: time.Sleep under another import name, a receive from
// time.After or a new timer made a statement, in a method or a function literal; and not a
// deadline in a select, nor a Sleep of another package.
func TestSleepsInFindsThem(t *testing.T) {
	src := `package p

import (
	clock "time"
	"other/time2"
)

type w struct{}

func (*w) loop() {
	for {
		clock.Sleep(clock.Millisecond)
	}
}

func f(ch chan int) {
	go func() {
		// as a comment says
		<-clock.After(clock.Second)
	}()
	<-clock.NewTimer(clock.Second).C
	select {
	case <-ch:
		clock.Sleep(1)
	case <-clock.After(clock.Second):
	}
	time2.Sleep(1)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sleepsIn(fset, f) {
		got = append(got, fmt.Sprintf("%d %s %s %v", s.line, s.fn, s.what, s.why))
	}
	want := []string{
		"12 w.loop time.Sleep false",
		"19 f a receive from time.After or time.Tick as a statement true",
		"21 f a receive from a new timer as a statement false",
		"24 f time.Sleep false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

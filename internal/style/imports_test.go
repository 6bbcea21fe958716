package style

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// eachGoFile parses the imports of every Go file of the module and calls check with each.
func eachGoFile(t *testing.T, check func(path string, fset *token.FileSet, f *ast.File)) {
	t.Helper()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		check(filepath.ToSlash(rel), fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Every Go file groups its imports standard library first: the standard library's packages
// in a group of their own, before any other.
func TestImportsStandardLibraryFirst(t *testing.T) {
	eachGoFile(t, func(path string, fset *token.FileSet, f *ast.File) {
		lastLine, sawOther, groupStd := 0, false, false
		for _, imp := range f.Imports {
			line := fset.Position(imp.Pos()).Line
			if lastLine != 0 && line > lastLine+1 {
				groupStd = false // a blank line: a new group
			}
			lastLine = line
			p := strings.Trim(imp.Path.Value, `"`)
			std := !strings.Contains(strings.Split(p, "/")[0], ".")
			switch {
			case std && sawOther:
				t.Errorf("%s: %s is of the standard library, but comes after other imports", path, p)
			case !std && groupStd:
				t.Errorf("%s: %s is in a group with the standard library's imports", path, p)
			}
			groupStd = groupStd || std
			sawOther = sawOther || !std
		}
	})
}

// Nothing above the store boundary (package kv) names a backend: the stores are written
// once against kv's interfaces. The backends live below kv (kv/bolt, kv/pg, and kvtest for
// tests), cmd chooses the backend, and bench measures both. Tests may open a bbolt file to
// check it. What is linked, not only imported, is TestNothingAboveTheBoundaryLinksABackend's.
func TestOnlyTheBackendsImportAStore(t *testing.T) {
	allowed := []string{"kv/", "cmd/", "internal/cmd/bench/"}
	eachGoFile(t, func(path string, _ *token.FileSet, f *ast.File) {
		if strings.HasSuffix(path, "_test.go") {
			return
		}
		for _, dir := range allowed {
			if strings.HasPrefix(path, dir) {
				return
			}
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			for _, b := range backends {
				if p == b || strings.HasPrefix(p, b+"/") {
					t.Errorf("%s imports %s: above the store boundary, use package kv", path, p)
				}
			}
		}
	})
}

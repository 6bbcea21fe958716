package style

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every Go file groups its imports standard library first: the standard library's packages
// in a group of their own, before any other.
func TestImportsStandardLibraryFirst(t *testing.T) {
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
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

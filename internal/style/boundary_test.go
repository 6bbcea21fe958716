package style

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/compass-mcp/compass-mcp"

// backends are the module paths of the stores' libraries (pgx's covers pgxpool and pgxlisten).
var backends = []string{"go.etcd.io/bbolt", "github.com/jackc/pgx"}

// mayLink are the packages that may link a backend, and why; every other package of the
// module is above the store boundary.
var mayLink = map[string]string{
	"kv/bolt":                  "the bbolt store",
	"kv/pg":                    "the PostgreSQL store",
	"kv/kvtest":                "fresh stores of either kind, for tests",
	"internal/testkit/webtest": "starts servers on the tests' store (kvtest), for tests",
	"internal/testkit/beir":    "writes a BEIR dataset on a bbolt file without fsync, for the search measures",
	"kv/stores":                "opens the store --data names, either backend",
	"cmd/compass-mcp":          "the command: its package, below",
	"cmd/compass-mcp/command":  "opens the store --data names (kv/stores)",
	"internal/cmd/bench":       "measures both stores",
}

// above are packages that must stay above the boundary by name, so that this test cannot
// pass by their being renamed or gone.
var above = []string{"kv", "docstore", "threads", "threads/claudecode", "search", "spaces", "mdscan", "tools", "web", "access", "access/oauth", "internal/charter", "linediff"}

// Nothing above the store boundary links a backend: not by importing it, not through kv
// (the bbolt adapter used to live in package kv, so every store linked bbolt though none
// imported it), not through anything else. The linker's view is go list's Deps, checked for
// each system the release is built for.
func TestNothingAboveTheBoundaryLinksABackend(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		t.Run(goos, func(t *testing.T) {
			imports, ours := importGraph(t, goos)
			for _, p := range above {
				if !slices.Contains(ours, p) {
					t.Errorf("%s is no package of the module (for %s): update this test's list", p, goos)
				}
			}
			for p, why := range mayLink {
				if !slices.Contains(ours, p) {
					t.Errorf("%s (%s) is allowed a backend but is no package of the module: update this test's list", p, why)
				}
			}
			for _, p := range ours {
				chains := linked(imports, module+"/"+p)
				if _, ok := mayLink[p]; ok {
					continue
				}
				if len(chains) > 0 {
					t.Errorf("%s links %d packages of the stores' libraries, above the store boundary (%s); use package kv and its errors, and open stores in cmd",
						p, len(chains), strings.ReplaceAll(strings.Join(chains[0], " → "), module+"/", ""))
				}
			}
			// The check can fail: the stores themselves link their libraries.
			for p, want := range map[string]string{"kv/bolt": "go.etcd.io/bbolt", "kv/pg": "github.com/jackc/pgx/v5"} {
				if !slices.ContainsFunc(linked(imports, module+"/"+p), func(c []string) bool { return c[len(c)-1] == want }) {
					t.Errorf("%s doesn't link %s: this test no longer sees what the linker does", p, want)
				}
			}
		})
	}
}

// importGraph returns every package the module's packages build from (for goos), each with
// its imports, and the module's own packages, relative to the module.
func importGraph(t *testing.T, goos string) (map[string][]string, []string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	imports := map[string][]string{}
	var ours []string
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		imports[f[0]] = f[1:]
		if rel, ok := strings.CutPrefix(f[0], module+"/"); ok {
			ours = append(ours, rel)
		}
	}
	if len(ours) < len(above) {
		t.Fatalf("go list named %d packages of the module:\n%s", len(ours), out)
	}
	return imports, ours
}

// linked returns, for each backend package that p links, the shortest chain of imports from
// p to it.
func linked(imports map[string][]string, p string) [][]string {
	from := map[string]string{p: ""}
	queue := []string{p}
	var chains [][]string
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		if isBackend(q) {
			chain := []string{q}
			for c := from[q]; c != ""; c = from[c] {
				chain = append(chain, c)
			}
			slices.Reverse(chain)
			chains = append(chains, chain)
			continue // what a backend imports is the backend's
		}
		for _, i := range imports[q] {
			if _, seen := from[i]; !seen {
				from[i] = q
				queue = append(queue, i)
			}
		}
	}
	return chains
}

func isBackend(p string) bool {
	return slices.ContainsFunc(backends, func(b string) bool { return strings.HasPrefix(p, b) })
}

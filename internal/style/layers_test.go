package style

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/DESIGN.md's picture of the layers from this file's")

// layer is one floor of the house: its packages import only packages of the floors below
// (the top floor's may also import one another).
type layer struct {
	name     string   // what the floor is, as DESIGN.md's picture names it
	packages []string // relative to the module; a name ending in "/..." is every package under it
}

// layers are the house, drawn from imports, bottom first: the one source of the layers,
// which docs/DESIGN.md's picture shows (TestDesignShowsTheLayers keeps the two in step).
// Data flows one way, front door → domain → kv, and nothing runs back up. The stores'
// backends are imported only from the top and by kv/stores, which opens the one the
// command chooses; mcp-go only by the packages that speak MCP.
var layers = []layer{
	{"the basement: knows no other package of ours", []string{
		"kv", "linediff", "mdscan", "internal/jsonargs", "internal/clientconfig/jsonc",
		"internal/charter", "internal/icon", "internal/version", "internal/mcpb", "internal/inflight"}},
	{"the stores' backends, below the boundary; plain functions and scoping over kv", []string{
		"kv/bolt", "kv/pg", "spaces", "search"}},
	{"the domain, who may do what, and opening the store --data names", []string{
		"docstore", "threads", "access", "kv/stores", "internal/clientconfig"}},
	{"built on the domain: the Claude Code follower, the authorization server, files kept in sync, meaning", []string{
		"threads/claudecode", "access/oauth", "filesync", "semantic"}},
	{"the front doors", []string{"tools", "web"}},
	{"how requests reach the tools", []string{"transport"}},
	{"the top: the command, the repository's own commands, test helpers and test-only packages", []string{
		"cmd/compass-mcp", "cmd/compass-mcp/command", "internal/cmd/...",
		"kv/kvtest", "internal/testkit/...", "internal/style", "e2e/..."}},
}

// choosesStore are the packages that may import the backends: the one that opens
// whichever --data names, and the tests' and benchmarks' helpers. The command is not one:
// it asks kv/stores (options, redaction, IsURL, backup, the default path).
var choosesStore = map[string]bool{"kv/stores": true, "kv/kvtest": true, "internal/cmd/bench": true}

// choosesStoreUnder are folders whose packages may too: test-only helpers and packages.
var choosesStoreUnder = []string{"internal/testkit/", "e2e/"}

// mayChooseStore is whether package rel may import kv/bolt or kv/pg.
func mayChooseStore(rel string) bool {
	return choosesStore[rel] || slices.ContainsFunc(choosesStoreUnder, func(p string) bool { return strings.HasPrefix(rel, p) })
}

// notImports are imports a layer's rule allows that the house does not: the transport
// gets its limits from the command, not from the domain.
var notImports = map[string][]string{"transport": {"docstore"}}

// speaksMCP are the packages below the top that may import mcp-go.
var speaksMCP = map[string]bool{"tools": true, "transport": true}

// layerOf is the floor of package rel, and whether it has one.
func layerOf(rel string) (int, bool) {
	for i, l := range layers {
		for _, p := range l.packages {
			if under, ok := strings.CutSuffix(p, "/..."); ok && strings.HasPrefix(rel, under+"/") || p == rel {
				return i, true
			}
		}
	}
	return 0, false
}

func TestImportsRunOneWay(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/compass-mcp/compass-mcp/"
	top := len(layers) - 1
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := map[string]bool{}
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(p.ImportPath, mod)
		seen[rel] = true
		own, ok := layerOf(rel)
		if !ok {
			t.Errorf("%s has no layer: give it one in internal/style/layers_test.go (then go test ./internal/style -update redraws docs/DESIGN.md's picture; give it a row in the layout there)", rel)
			continue
		}
		for _, imp := range p.Imports {
			switch {
			case strings.HasPrefix(imp, "github.com/mark3labs/mcp-go"):
				if own != top && !speaksMCP[rel] {
					t.Errorf("%s imports %s: below the front doors nothing speaks MCP", rel, imp)
				}
			case strings.HasPrefix(imp, mod):
				dep := strings.TrimPrefix(imp, mod)
				l, _ := layerOf(dep)
				if (dep == "kv/bolt" || dep == "kv/pg") && !mayChooseStore(rel) {
					t.Errorf("%s imports %s: only kv/stores (and tests' helpers) choose a store; the command asks kv/stores", rel, dep)
				}
				if slices.Contains(notImports[rel], dep) {
					t.Errorf("%s imports %s, which it must not (notImports)", rel, dep)
				}
				if l > own || (l == own && own != top) {
					t.Errorf("%s (layer %d) imports %s (layer %d): imports run down, never up or across", rel, own, dep, l)
				}
			}
		}
	}
	for _, l := range layers {
		for _, p := range l.packages {
			if under, ok := strings.CutSuffix(p, "/..."); ok {
				if !slices.ContainsFunc(mapsKeys(seen), func(s string) bool { return strings.HasPrefix(s, under+"/") }) {
					t.Errorf("layers names %s, under which there is no package any more: take it out", p)
				}
			} else if !seen[p] {
				t.Errorf("layers names %s, which is no package any more: take it out", p)
			}
		}
	}
}

func mapsKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// picture is the house as docs/DESIGN.md draws it: the floors top first, each with its
// packages.
func picture() string {
	var b strings.Builder
	for i := len(layers) - 1; i >= 0; i-- {
		l := layers[i]
		fmt.Fprintf(&b, "%d  %s\n", i, l.name)
		fmt.Fprintf(&b, "   %s\n", strings.Join(l.packages, "  "))
	}
	return b.String()
}

const (
	pictureStart = "<!-- layers: drawn by go test ./internal/style -update from internal/style/layers_test.go -->\n```\n"
	pictureEnd   = "```\n<!-- /layers -->"
)

// DESIGN.md shows the layers this file checks, so that the picture a newcomer reads is the
// one the build holds to: go test ./internal/style -update redraws it.
func TestDesignShowsTheLayers(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "DESIGN.md")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, pictureStart)
	end := strings.Index(doc, pictureEnd)
	if start < 0 || end < start {
		t.Fatalf("docs/DESIGN.md has no picture of the layers between %q and %q", pictureStart, pictureEnd)
	}
	body := doc[start+len(pictureStart) : end]
	want := picture()
	if body == want {
		return
	}
	if *update {
		doc = doc[:start+len(pictureStart)] + want + doc[end:]
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/DESIGN.md's picture of the layers is not internal/style/layers_test.go's (go test ./internal/style -update redraws it):\n--- DESIGN.md\n%s--- layers_test.go\n%s", body, want)
}

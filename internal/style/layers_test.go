package style

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The house, drawn from imports: each package of the module has a layer, and a package
// imports only packages of lower layers (the repository's own commands and test helpers,
// the top layer, may also import one another). So data flows one way, front door →
// domain → kv, and nothing runs back up. The stores' backends are imported only from the
// top and by kv/stores, which opens the one the command chooses; mcp-go only by the
// packages that speak MCP.
var layers = map[string]int{
	// What knows no other package of ours.
	"kv": 0, "linediff": 0, "doclink": 0, "charter": 0, "internal/jsonargs": 0,
	"internal/clientconfig/jsonc": 0, "icon": 0, "version": 0, "mdscan": 1,
	// The stores' backends, below the boundary.
	"kv/bolt": 1, "kv/pg": 1,
	// Plain functions and scoping over kv.
	"spaces": 1, "search": 1,
	// Opening the store --data names, either backend, and copying between two.
	"kv/stores": 2,
	// The domain, and who may do what.
	"docstore": 2, "threads": 2, "access": 2,
	// What is built on the domain: the Claude Code follower, the authorization server.
	"claudecode": 3, "oauth": 3,
	// The front doors.
	"tools": 4, "web": 4,
	// How requests reach the tools.
	"transport": 5,
}

// top is the layer of the command, the repository's own commands and the test-only
// packages: whatever is not in layers must be one of these.
const top = 6

func topLevel(rel string) bool {
	return rel == "cmd/compass-mcp" || rel == "kv/kvtest" || strings.HasPrefix(rel, "internal/") || strings.HasPrefix(rel, "e2e/")
}

// choosesStore are the packages below the top that may import the backends: the one that
// opens whichever --data names.
var choosesStore = map[string]bool{"kv/stores": true}

// speaksMCP are the packages below the top that may import mcp-go.
var speaksMCP = map[string]bool{"tools": true, "transport": true}

func TestImportsRunOneWay(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/compass-mcp/compass-mcp/"
	layerOf := func(rel string) (int, bool) {
		if l, ok := layers[rel]; ok {
			return l, true
		}
		return top, topLevel(rel)
	}
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
			t.Errorf("%s has no layer: give it one in internal/style/layers_test.go (and a row in docs/DESIGN.md's layout)", rel)
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
				if (dep == "kv/bolt" || dep == "kv/pg") && own != top && !choosesStore[rel] {
					t.Errorf("%s imports %s: only the command (through kv/stores, and tests' helpers) choose a store", rel, dep)
				}
				if l > own || (l == own && own != top) {
					t.Errorf("%s (layer %d) imports %s (layer %d): imports run down, never up or across", rel, own, dep, l)
				}
			}
		}
	}
	var missing []string
	for rel := range layers {
		if !seen[rel] {
			missing = append(missing, rel)
		}
	}
	sort.Strings(missing)
	for _, rel := range missing {
		t.Errorf("layers names %s, which is no package any more: take it out", rel)
	}
}

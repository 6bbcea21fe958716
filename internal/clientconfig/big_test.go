package clientconfig

import (
	"strings"
	"testing"
)

// BenchmarkLargeFiles: the largest files install reads (MaxFile), made of what costs the
// readers most. go test -run '^$' -bench LargeFiles ./clientconfig
func BenchmarkLargeFiles(b *testing.B) {
	for _, tc := range []struct{ name, client, src string }{
		{"toml-tables", "codex", strings.Repeat("[[x]]\ny = 1\n", 600_000)},
		{"json-members", "vscode", `{"mcpServers": {` + strings.Repeat(`"a": 1, `, 900_000) + `"b": 2}}`},
		{"jsonc-comments", "vscode", "{" + strings.Repeat("// c\n", 1_500_000) + "}"},
		{"json-deep", "vscode", strings.Repeat("[", 5_000_000)},
		{"json-string", "vscode", `{"a": "` + strings.Repeat("x", 7_000_000) + `"}`},
	} {
		src := []byte(tc.src)
		f := Lookup(tc.client).format
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				f.set(src, testServer, true)
			}
		})
	}
}

package linediff

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const ten = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"

var unifiedTests = []struct {
	name    string
	a, b    string
	context int
	want    string
}{
	{"equal", "a\n", "a\n", 3, ""},
	{"both empty", "", "", 3, ""},
	{"one change", "a\nb\nc\n", "a\nB\nc\n", 3, `--- a
+++ b
@@ -1,3 +1,3 @@
 a
-b
+B
 c
`},
	{"newline added at end", "a\nb", "a\nb\n", 3, `--- a
+++ b
@@ -1,2 +1,2 @@
 a
-b
\ No newline at end of file
+b
`},
	{"newline removed at end", "a\nb\n", "a\nb", 3, `--- a
+++ b
@@ -1,2 +1,2 @@
 a
-b
+b
\ No newline at end of file
`},
	{"unterminated context", "a\nb\nc", "A\nb\nc", 3, `--- a
+++ b
@@ -1,3 +1,3 @@
-a
+A
 b
 c
\ No newline at end of file
`},
	{"create", "", "x\n", 3, `--- a
+++ b
@@ -0,0 +1 @@
+x
`},
	{"delete all", "x\ny\n", "", 3, `--- a
+++ b
@@ -1,2 +0,0 @@
-x
-y
`},
	{"insert without context", "a\nb\n", "a\nx\nb\n", 0, `--- a
+++ b
@@ -1,0 +2 @@
+x
`},
	{"delete without context", "a\nx\nb\n", "a\nb\n", 0, `--- a
+++ b
@@ -2 +1,0 @@
-x
`},
	{"two hunks", ten, strings.Replace(strings.Replace(ten, "2\n", "two\n", 1), "9\n", "nine\n", 1), 1, `--- a
+++ b
@@ -1,3 +1,3 @@
 1
-2
+two
 3
@@ -8,3 +8,3 @@
 8
-9
+nine
 10
`},
	{"hunks joined when contexts meet", ten, strings.Replace(strings.Replace(ten, "2\n", "two\n", 1), "9\n", "nine\n", 1), 3, `--- a
+++ b
@@ -1,10 +1,10 @@
 1
-2
+two
 3
 4
 5
 6
 7
 8
-9
+nine
 10
`},
	{"negative context", "a\nb\nc\n", "a\nB\nc\n", -1, `--- a
+++ b
@@ -2 +2 @@
-b
+B
`},
	{"paragraph inserted", "p1\n\np2\n", "p1\n\nnew\n\np2\n", 1, `--- a
+++ b
@@ -2,2 +2,4 @@
 
+new
+
 p2
`},
}

func TestUnified(t *testing.T) {
	for _, tt := range unifiedTests {
		got := Unified("a", "b", tt.a, tt.b, tt.context)
		if got != tt.want {
			t.Errorf("%s: Unified =\n%s\nwant\n%s", tt.name, got, tt.want)
		}
		if applied, err := applyUnified(tt.a, got); err != nil || applied != tt.b {
			t.Errorf("%s: applying gives %q, %v; want %q", tt.name, applied, err, tt.b)
		}
	}
}

func TestUnifiedRandomApplies(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 3000 {
		a := randText(r, r.IntN(30))
		b := mutate(r, a)
		if r.IntN(3) == 0 {
			b = randText(r, r.IntN(30))
		}
		d := Unified("a", "b", a, b, r.IntN(4))
		if got, err := applyUnified(a, d); err != nil || got != b {
			t.Fatalf("case %d %q -> %q:\n%s\napplying gives %q, %v", i, a, b, d, got, err)
		}
	}
}

// TestUnifiedPatch feeds our output to patch(1), forbidding the offsets
// and fuzz with which it would otherwise forgive wrong line numbers.
func TestUnifiedPatch(t *testing.T) {
	patch := tool(t, "patch")
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(13, 14))
	type pair struct{ a, b string }
	var cases []pair
	for _, tt := range unifiedTests {
		cases = append(cases, pair{tt.a, tt.b})
	}
	for range 100 {
		a := randText(r, r.IntN(30))
		cases = append(cases, pair{a, mutate(r, a)})
	}
	for i, c := range cases {
		if c.a == c.b {
			continue
		}
		from, out := filepath.Join(dir, "from"), filepath.Join(dir, "out")
		if err := os.WriteFile(from, []byte(c.a), 0o644); err != nil {
			t.Fatal(err)
		}
		d := Unified("from", "to", c.a, c.b, 3)
		cmd := exec.Command(patch, "--batch", "--fuzz=0", "-o", out, from)
		cmd.Stdin = strings.NewReader(d)
		msg, err := cmd.CombinedOutput()
		if err != nil || bytes.Contains(msg, []byte("offset")) || bytes.Contains(msg, []byte("fuzz")) {
			t.Fatalf("case %d: patch: %v\n%s\ndiff:\n%s", i, err, msg, d)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.b {
			t.Fatalf("case %d: patch gives %q, want %q\ndiff:\n%s", i, got, c.b, d)
		}
	}
}

package linediff

import (
	"os"
	"os/exec"
	"testing"
)

// tool finds a program a test compares against. It skips the test where the program is
// missing, except in CI (CI=true), where .ci/run installs it and a skip would hide a check.
func tool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed, and CI=true: .ci/run installs it (apt-get install %s)", name, name)
	}
	t.Skipf("%s is not installed (CI=true makes this a failure)", name)
	return ""
}

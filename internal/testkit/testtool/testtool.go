// Package testtool finds the programs tests compare against or drive (patch, git,
// chromium), with one rule for all of them: a program that is missing skips the test,
// saying why and how to install it, except in CI (CI=true: .ci/run installs them), where
// a skip would hide a check, and it fails the test instead. Only tests import it.
package testtool

import (
	"os"
	"os/exec"
	"testing"
)

// Find returns the path of program, or skips (fails, with CI=true) the test when it isn't
// on PATH; install says how to get it ("apt-get install -y chromium").
func Find(t testing.TB, program, install string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed, and CI=true: this test needs it (%s; .ci/run installs it)", program, install)
	}
	t.Skipf("%s is not installed (%s); CI=true makes this a failure", program, install)
	return ""
}

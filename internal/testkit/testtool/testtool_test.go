package testtool

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A program that isn't there skips the test, saying why; with CI=true it fails it. The
// test runs itself again in a process of its own for each.
func TestFindMissing(t *testing.T) {
	if os.Getenv("TESTTOOL_CHILD") == "1" {
		Find(t, "no-such-program-compass", "apt-get install -y no-such-program-compass")
		return
	}
	for ci, want := range map[string]string{"": "--- SKIP", "true": "--- FAIL"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFindMissing$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTTOOL_CHILD=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), "no-such-program-compass is not installed (apt-get install") && !strings.Contains(string(out), "this test needs it (apt-get install") {
			t.Errorf("CI=%q: %v\n%s\nwant %s with the reason", ci, err, out, want)
		}
		if (ci == "true") != (err != nil) {
			t.Errorf("CI=%q: the run ended with %v", ci, err)
		}
	}
	if p := Find(t, "sh", "it is POSIX"); p == "" {
		t.Error("sh not found")
	}
}

package command

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/inflight"
	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

// --memory (COMPASS_MEMORY) takes 256MiB, 1GiB and the like, refuses anything else as a
// usage error saying what it takes, and a server says what its calls hold at /healthz.
func TestMemoryFlag(t *testing.T) {
	data := newData(t)
	cli(t, data, "call", "write_document", "title=Plan", "text=the plan")
	for _, args := range [][]string{
		{"call", "list_documents", "--memory", "lots"},
		{"call", "list_documents", "--memory", "0"},
		{"call", "list_documents", "--memory", "-1GiB"},
		{"call", "list_documents", "--memory", "12 parsecs"},
	} {
		out, err := cliResult(data, "", args...)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(out, "--memory (COMPASS_MEMORY): ") {
			t.Errorf("%q: exit %v, %q; want exit 2 saying what --memory takes", args, err, out)
		}
	}
	cmd := exec.Command(testbin.Path, "call", "list_documents")
	cmd.Env = append(os.Environ(), testEnv(data, "COMPASS_MEMORY=a lot")...)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `--memory (COMPASS_MEMORY): "a lot": a size like 256MiB or 1GiB`) {
		t.Errorf("COMPASS_MEMORY=a lot: %v, %q; want it refused", err, out)
	}
	if out := cli(t, data, "call", "read_document", "document=Plan", "--memory", "1GiB"); !strings.Contains(out, "the plan") {
		t.Errorf("--memory 1GiB: %q", out)
	}

	url, stop := httpServer(t, data, "--memory", "64MiB")
	defer stop()
	res, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var health struct {
		OK     bool
		Memory inflight.Stats
	}
	if err := json.NewDecoder(res.Body).Decode(&health); err != nil || !health.OK || health.Memory.Limit != 64<<20 || health.Memory.Held != 0 {
		t.Errorf("/healthz: %+v, %v; want ok, a limit of 64 MiB, nothing held", health, err)
	}
}

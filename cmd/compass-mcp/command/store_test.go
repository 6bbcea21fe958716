package command

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/internal/testkit/testbin"
)

// A --data that looks like a URL but not a PostgreSQL one (a typo: postgress://) is refused,
// naming the accepted forms, without its password, and nothing is created. Before, it made
// the folders ./postgress:/user:pw@host:5432/ and a bbolt file in them, exit 0.
func TestDataNotAURLWeTake(t *testing.T) {
	for _, data := range []string{"postgress://user:pw@host/db", "postgre://user:pw@10.0.0.1/db", "file:///tmp/x.db", "mysql://user:pw@host/db"} {
		dir := t.TempDir()
		cmd := exec.Command(testbin.Path, "docs", "list", "--data", data)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "COMPASS_ME=ana")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(errb.String(), "postgres://") || strings.Contains(errb.String(), ":pw") {
			t.Errorf("--data %s: %v, said %q; want exit 2 naming the forms --data takes, without the password", data, err, errb.String())
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("--data %s made %v in the working folder", data, ents)
		}
	}
}

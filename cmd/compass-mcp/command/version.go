package command

import (
	"fmt"
	"io"

	"github.com/compass-mcp/compass-mcp/internal/version"
)

// versionRequested reports whether args ask for the version: "--version", "-version" or
// "version" alone (version -h too: it has no flags but help).
func versionRequested(args []string) bool {
	return len(args) == 1 && (args[0] == "--version" || args[0] == "-version" || args[0] == "version")
}

// printVersion writes the line saying which version and commit this binary is: the
// version the server tells clients too (package version).
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintln(w, version.Line())
	return err
}

// Command compass-mcp serves a space's shared, versioned Markdown documents and its
// conversations to an AI agent over MCP, and gives the person the same store on the
// command line. Run "compass-mcp help" for the commands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

func main() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel()})))
	if err := run(os.Args[1:]); err != nil {
		if err != errSilent && !errors.Is(err, flag.ErrHelp) { // -h has printed the flags
			fmt.Fprintln(os.Stderr, "compass-mcp:", err)
		}
		os.Exit(exitCode(err))
	}
}

// logLevel is COMPASS_LOG (debug, info, warn, error), info by default. Logs go to stderr
// only: stdout is the stdio transport.
func logLevel() slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(os.Getenv("COMPASS_LOG")))); err != nil {
		return slog.LevelInfo
	}
	return l
}

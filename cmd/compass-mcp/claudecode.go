package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/compass-mcp/compass-mcp/claudecode"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

// wantsClaudeCode reports whether an import command line is for Claude Code's sessions.
func wantsClaudeCode(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool {
		return a == "--claude-code" || a == "-claude-code" || a == "--claude-code=true" || a == "-claude-code=true"
	})
}

// envBool is an environment variable read as true or false (1, true, yes...); unset is false.
func envBool(name string) bool {
	v, err := strconv.ParseBool(os.Getenv(name))
	return err == nil && v
}

// claudeCodeSession is the id of the Claude Code session that started this process, if
// Claude Code did: recent versions give the MCP servers they start CLAUDECODE=1 and
// CLAUDE_CODE_SESSION_ID. Imported, that session is the conversation with this id, so an
// agent in Claude Code doesn't see its own session among the others.
func claudeCodeSession() string {
	if os.Getenv("CLAUDECODE") != "1" {
		return ""
	}
	return os.Getenv("CLAUDE_CODE_SESSION_ID")
}

// claudeCodeDir is where Claude Code keeps its projects: $CLAUDE_CONFIG_DIR/projects when
// set (Claude Code's own setting), else ~/.claude/projects.
func claudeCodeDir() (string, error) {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "projects"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding Claude Code's projects (give the folder): %w", err)
	}
	return filepath.Join(home, ".claude", "projects"), nil
}

// importClaudeCode imports Claude Code's session transcripts, once or (--follow) as they grow.
func importClaudeCode(args []string, stdout io.Writer) error {
	var c config
	fs := flags("import", &c)
	fs.Bool("claude-code", true, "import Claude Code's sessions from DIR (default ~/.claude/projects)")
	project := fs.String("project", "", "if set, only the sessions of the project at this path")
	follow := fs.Bool("follow", false, "if set, keep importing as sessions grow and new ones start, until interrupted")
	poll := fs.Duration("poll", time.Second, "with --follow, where the system gives no file notifications: how often to look for changes")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usageError{"import --claude-code takes at most one folder: the projects folder of Claude Code (default ~/.claude/projects)"}
	}
	dir := ""
	if len(pos) == 1 {
		dir = pos[0]
	} else if dir, err = claudeCodeDir(); err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("no Claude Code projects folder at %s: give the folder (import --claude-code DIR)", dir)
	}
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	cc, err := claudeCodeImporter(db, c, dir, *project)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if *follow {
		// Before the first pass: a signal that comes while it runs stops the follower after it.
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	sum, err := cc.Pass()
	if err != nil {
		return fmt.Errorf("importing Claude Code sessions: %w", err)
	}
	fmt.Fprintf(stdout, "Imported %s and %s from %s into space %s; %s already there.\n",
		plural(sum.Conversations, "conversation"), plural(sum.Messages, "message"), plural(sum.Files, "transcript"), c.space, plural(sum.Skipped, "message"))
	if sum.Unreadable > 0 {
		fmt.Fprintf(stdout, "Skipped %s: not JSON.\n", plural(sum.Unreadable, "line"))
	}
	if !*follow {
		return nil
	}
	slog.Info("following Claude Code's sessions (Ctrl-C stops)", "dir", dir, "space", c.space)
	return cc.Follow(ctx, *poll)
}

func claudeCodeImporter(db kv.DB, c config, dir, project string) (*claudecode.Importer, error) {
	return claudecode.New(threads.New(db, c.space), claudecode.Options{
		Dir: dir, Project: project, Me: spaces.Person(c.me).String(), Log: slog.Default(),
	})
}

// followClaudeCode follows Claude Code's sessions beside the server (--follow-claude-code)
// until ctx ends or the func it returns is called, which waits for the follower to end (so
// the data file is closed after it). A missing folder is said once and the server goes on
// without it.
func followClaudeCode(ctx context.Context, db kv.DB, c config) (stop func()) {
	dir, err := claudeCodeDir()
	if err == nil {
		if fi, serr := os.Stat(dir); serr != nil || !fi.IsDir() {
			err = fmt.Errorf("no folder %s", dir)
		}
	}
	var cc *claudecode.Importer
	if err == nil {
		cc, err = claudeCodeImporter(db, c, dir, "")
	}
	if err != nil {
		slog.Warn("not following Claude Code's sessions", "err", err)
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := cc.Follow(ctx, time.Second); err != nil {
			slog.Warn("following Claude Code's sessions stopped", "err", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

package command

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
	"github.com/compass-mcp/compass-mcp/threads/claudecode"
)

// envBool is an environment variable read as true or false (1, true, yes...); unset is false.
func envBool(name string) bool {
	v, err := strconv.ParseBool(os.Getenv(name))
	return err == nil && v
}

// claudeCodeFlags adds import's flags for Claude Code's sessions (to import's own, so that
// import -h shows them all).
func claudeCodeFlags(fs interface {
	Bool(string, bool, string) *bool
	String(string, string, string) *string
	Duration(string, time.Duration, string) *time.Duration
}) (project *string, follow *bool, poll *time.Duration) {
	fs.Bool("claude-code", false, "if set, import Claude Code's sessions from DIR (default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects) rather than FILE")
	project = fs.String("project", "", "with --claude-code, if set: only the sessions of the project at this path (or of this folder of DIR)")
	follow = fs.Bool("follow", false, "with --claude-code, if set: keep importing as sessions grow and new ones start, until interrupted")
	poll = fs.Duration("poll", time.Second, "with --follow, where the system gives no file notifications: how often to look for changes")
	return project, follow, poll
}

// importClaudeCode imports Claude Code's session transcripts, once or (--follow) as they grow.
func importClaudeCode(ctx context.Context, c config, pos []string, project string, follow bool, poll time.Duration, stdout io.Writer) error {
	if len(pos) > 1 {
		return usageError{"import --claude-code takes at most one folder: the projects folder of Claude Code (default ~/.claude/projects)"}
	}
	var dir string
	var err error
	if len(pos) == 1 {
		dir = pos[0]
	} else if dir, err = claudecode.DefaultDir(); err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("no Claude Code projects folder at %s: give the folder (import --claude-code DIR)", dir)
	}
	c.create = true
	db, err := c.openAs(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	cc, err := claudecode.New(threads.New(db, c.space), claudecode.Options{Dir: dir, Project: project, Me: spaces.Person(c.me).String(), Log: slog.Default()})
	if err != nil {
		return err
	}
	if follow {
		// Before the first pass: a signal that comes while it runs stops the follower after it.
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	if err := ImportClaudeCode(ctx, cc, c.space, stdout); err != nil {
		return err
	}
	if !follow {
		return nil
	}
	slog.Info("following Claude Code's sessions (Ctrl-C stops)", "dir", dir, "space", c.space)
	return cc.Follow(ctx, poll)
}

// followClaudeCode follows Claude Code's sessions beside the server (--follow-claude-code)
// until ctx ends or the func it returns is called, which waits for the follower to end, a
// few seconds at most (so the data file is closed after it).
func followClaudeCode(ctx context.Context, db kv.DB, c config) (stop func()) {
	end := claudecode.FollowDefault(ctx, threads.New(db, c.space), spaces.Person(c.me).String(), slog.Default())
	return func() { end(5 * time.Second) }
}

package command

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/filesync"
	"github.com/compass-mcp/compass-mcp/kv/stores"
	"github.com/compass-mcp/compass-mcp/spaces"
)

var syncHelp = subcommand{name: "sync", args: "DIR [--once] [--server URL --token TOKEN]",
	does: "keeps the folder DIR and the space the same, both ways, until stopped (--once: one pass)",
	more: `One document is one .md file (folders are "/" in titles: Projects/Plan.md is the document
"Projects/Plan"); its bytes are the document's text, never rewritten. A file saved becomes a
version by agent:sync for you, merged line by line with what agents wrote since; a document
changed in the space is written to its file. Where both changed the same lines, the file keeps
your lines and the agents' wait as a proposal (docs proposals). Renames and moves keep the
document; a deleted file deletes its document softly (docs undelete brings it back), and a
document deleted in the space removes its file. A pass that would delete more than a fifth of
the documents, or finds the folder missing or empty, stops and changes nothing. Dotfiles, dot
folders, editors' temp files and non-Markdown files are left alone; .compassignore lists more.
The sync's state is in DIR/.compass/, with its lock: one sync a folder.
With --server, the space is a team server's (compass-mcp serve --http), reached with your
token (--token, or better COMPASS_TOKEN: a flag shows in ps); without, the --data here.
docs/SYNC.md has it all.`}

// syncCmd runs "compass-mcp sync DIR".
func syncCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c config
	fs := flags(syncHelp, &c)
	once := fs.Bool("once", false, "if set, one pass, then exit")
	allow := fs.Bool("allow-deletes", false, "if set, a pass may delete more than a fifth of the documents (or all, for an emptied folder)")
	every := fs.Duration("every", 2*time.Minute, "how often the whole folder is compared with the space, beside what the watcher reports")
	serverURL := fs.String("server", env("COMPASS_SERVER", ""), "if set, the team server whose space is synced (http://HOST:PORT of a compass-mcp serve --http) instead of --data [COMPASS_SERVER]")
	// COMPASS_TOKEN is read after parsing, not as the flag's default, which -h would print.
	token := fs.String("token", "", "with --server, your token (compass-mcp tokens add --for YOU); COMPASS_TOKEN keeps it out of ps [COMPASS_TOKEN]")
	poll := fs.Duration("poll", 10*time.Second, "with --server, how often the server is asked what changed (a pass that finds nothing costs one listing)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"sync takes DIR: the folder to keep in step with the space"}
	}
	if *every < time.Second {
		return usageError{"--every is at least 1s"}
	}
	if *poll < time.Second {
		return usageError{"--poll is at least 1s"}
	}
	y := &filesync.Sync{Dir: pos[0], AllowDeletes: *allow, Say: stderr}
	store := "" // what the space is kept in, as the start line says it
	w := filesync.Watch{Every: *every}
	if *serverURL != "" {
		if err := c.check(); err != nil {
			return err
		}
		u, err := url.Parse(*serverURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageError{fmt.Sprintf("--server: the URL of a compass-mcp serve --http, like http://127.0.0.1:7410; got %q", *serverURL)}
		}
		dataGiven := false // COMPASS_DATA set for the other commands is no conflict
		fs.Visit(func(f *flag.Flag) { dataGiven = dataGiven || f.Name == "data" })
		if dataGiven {
			return usageError{"--server and --data: the space is the server's, or the data's here, not both"}
		}
		if *token == "" {
			*token = env("COMPASS_TOKEN", "")
		}
		y.Space = &filesync.Remote{URL: *serverURL, Token: *token, Space: c.space}
		store = "the server " + u.Redacted()
		w.Poll = *poll
	} else {
		if err := c.person(); err != nil {
			return err
		}
		file, err := c.open(ctx)
		if err != nil {
			return err
		}
		defer file.Close()
		y.Store = docstore.New(file, c.space)
		y.By = docstore.Author{By: spaces.Agent("sync").String(), For: spaces.Person(c.me).String(), Door: docstore.DoorSync, Session: docstore.NewSession('y')}
		w.Data, w.Store = c.data, file
		store = stores.Redact(c.data)
	}
	release, err := filesync.Lock(y.Dir)
	if err != nil {
		return err
	}
	defer release()
	if *once {
		// Stdout says what happened: a pass that failed having done nothing says nothing.
		rep, err := y.Once(ctx)
		if err == nil || rep.Changed() {
			printReport(stdout, rep)
		}
		return err
	}
	// Until stopped, every line has its time, and the first says what is kept in step.
	y.Say = &stamped{w: stderr}
	out := &stamped{w: stdout}
	dir, _ := filepath.Abs(y.Dir)
	fmt.Fprintf(y.Say, "sync: keeping %s and the space %q of %s the same, until stopped (Ctrl-C)\n", dir, c.space, store)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	w.Passed = func(r filesync.Report) {
		if r.Changed() {
			printReport(out, r)
		}
	}
	return y.Run(ctx, w)
}

func printReport(w io.Writer, r filesync.Report) {
	if !r.Changed() {
		fmt.Fprintln(w, "In step: nothing to do.")
		return
	}
	fmt.Fprintf(w, "Synced: %d made, %d joined, %d saved (%d clashes kept as proposals), %d written, %d renamed, %d deleted, %d removed, %d skipped.\n",
		r.Created, r.Joined, r.Saved, r.Clashes, r.Written, r.Renamed, r.Deleted, r.Removed, r.Skipped)
}

// stamped writes each line with the time before it (a continuous sync's lines, read
// later, say when).
type stamped struct {
	mu  sync.Mutex
	w   io.Writer
	mid bool // within a line
}

func (s *stamped) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !s.mid {
			out = time.Now().AppendFormat(out, "2006-01-02 15:04:05 ")
		}
		out = append(out, line...)
		s.mid = line[len(line)-1] != '\n'
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

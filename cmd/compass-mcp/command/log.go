package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

// logCmd prints what happened in the spaces the person sees (docs log), newest first,
// grouped by session: the page's /activity.
func logCmd(ctx context.Context, sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	var (
		c                              config
		since, agent, doc, sess, after string
		limit                          int
	)
	u := reviewUsages[sub]
	fs := flags(subcommand{name: "docs " + sub, args: u.args, does: u.does}, &c)
	fs.StringVar(&since, "since", "", "if set, nothing before: a day (2026-12-06), a time (2026-12-06T14:00), or a time ago (90m, 12h, 7d)")
	fs.StringVar(&agent, "agent", "", "if set, only what this agent did (north), or a person (person:ana)")
	fs.StringVar(&doc, "document", "", "if set, only what happened to this document (an id or title)")
	fs.StringVar(&sess, "session", "", "if set, only what this session did (the id its line gives)")
	fs.StringVar(&after, "after", "", "if set, the page after this position (the line that ends a page gives it)")
	fs.IntVar(&limit, "limit", 100, "how many events to print, at most "+strconv.Itoa(docstore.ActivityPage))
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	only := false // --space given on the command line: that space alone, else every one seen
	fs.Visit(func(fl *flag.Flag) { only = only || fl.Name == "space" })
	if len(pos) != 0 {
		return usageError{"docs log takes no arguments; got " + Plural(len(pos), "argument")}
	}
	if limit < 1 || limit > docstore.ActivityPage {
		return usageError{fmt.Sprintf("--limit: from 1 to %d; got %d", docstore.ActivityPage, limit)}
	}
	var f docstore.ActivityFilter
	if f.Since, err = parseSince(since, time.Now()); err != nil {
		return usageError{"--since: " + err.Error()}
	}
	if agent != "" {
		if !strings.Contains(agent, ":") {
			agent = "agent:" + agent
		}
		a, err := spaces.ParseActor(agent)
		if err != nil || strings.ContainsFunc(agent, unicode.IsSpace) {
			return usageError{"--agent: an agent's name, like north, or person:ana"}
		}
		f.Agent = a.String()
	}
	f.Session = sess
	file, mine, err := c.openSeen(ctx)
	if err != nil {
		return err
	}
	defer file.Close()
	if only {
		if !slices.Contains(mine, c.space) {
			return usageError{fmt.Sprintf("--space: you see no space %q (yours: %s)", c.space, access.List(mine))}
		}
		mine = []string{c.space}
	}
	if len(mine) == 0 {
		fmt.Fprintln(stderr, "You see no space yet.")
		return nil
	}
	var (
		page  docstore.Activity
		names spaces.Names
	)
	err = docstore.New(file, mine[0]).View(ctx, func(r *docstore.Reader) error {
		f, in := f, mine
		if doc != "" {
			// A document lives in one space: only that space's entries are read.
			id, sp, err := findIn(r, mine, doc)
			if err != nil {
				return err
			}
			f.Document, in = id, []string{sp}
		}
		var err error
		page, err = r.Activity(in, f, after, limit)
		names = r.Names()
		return err
	})
	if errors.Is(err, docstore.ErrBadPosition) {
		return usageError{fmt.Sprintf("--after: %q is no position in the log; the line that ends a page gives one", after)}
	}
	if err != nil {
		return err
	}
	if len(page.Events) == 0 && page.Next == "" {
		fmt.Fprintln(stderr, "Nothing happened that the log keeps.")
		return nil
	}
	whys, err := whysOf(ctx, file, page.Events)
	if err != nil {
		return err
	}
	writeLog(stdout, page, names, len(mine) > 1, whys)
	if page.Next != "" {
		fmt.Fprintf(stdout, "… more: docs log --after %s (with the same filters)\n", page.Next)
	}
	return nil
}

// whysOf finds, for each version among events, the conversation of its own space it was
// made in (threads.Reader.Why), keyed "<doc>/<n>": one read a space.
func whysOf(ctx context.Context, db kv.DB, events []docstore.Event) (map[string]threads.Why, error) {
	out := map[string]threads.Why{}
	bySpace := map[string][]docstore.Event{}
	for _, e := range events {
		if e.What == docstore.EventVersion {
			bySpace[e.Space] = append(bySpace[e.Space], e)
		}
	}
	for sp, es := range bySpace {
		err := threads.New(db, sp).View(ctx, func(r *threads.Reader) error {
			for _, e := range es {
				w, ok, err := r.Why(e.Doc, e.N)
				if err != nil {
					return err
				}
				if ok {
					out[fmt.Sprintf("%s/%d", e.Doc, e.N)] = w
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// writeLog writes a page of the activity, a line a session and its events under it, each
// version with why it was made when a conversation of its space says (whys).
func writeLog(w io.Writer, page docstore.Activity, names spaces.Names, many bool, whys map[string]threads.Why) {
	for _, s := range docstore.Sessions(page.Events) {
		line := s.Heading(names)
		if s.ID != "" {
			line += "  [session " + s.ID + "]"
		}
		fmt.Fprintln(w, line)
		for _, e := range s.Events {
			where := ""
			if many {
				where = e.Space + ": "
			}
			fmt.Fprintf(w, "    %s  %s%s (%s)\n", e.At.Local().Format("15:04"), where, e.Line(names), e.Doc)
			if why, ok := whys[fmt.Sprintf("%s/%d", e.Doc, e.N)]; ok && e.What == docstore.EventVersion {
				fmt.Fprintf(w, "           why: %s\n", why.Say(names))
			}
		}
	}
}

// findIn finds the document name in the first of spaces that has it, and that space.
func findIn(r *docstore.Reader, in []string, name string) (string, string, error) {
	var first error
	for _, sp := range in {
		d, err := r.In(sp).Find(name)
		if err == nil {
			return d.ID, sp, nil
		}
		if !errors.Is(err, docstore.ErrNotFound) {
			return "", "", err
		}
		if first == nil {
			first = err
		}
	}
	return "", "", first
}

// parseSince reads --since: a day, a time (local), or a time ago.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02 15:04", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 && n <= 100*365 {
			return now.AddDate(0, 0, -n), nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("a day (2026-12-06), a time (2026-12-06T14:00) or a time ago (90m, 12h, 7d); got %q", s)
}

// undoCmd takes back what a session did (docs undo --session ID), as the person.
func undoCmd(ctx context.Context, sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	var (
		c       config
		session string
	)
	u := reviewUsages[sub]
	fs := flags(subcommand{name: "docs " + sub, args: u.args, does: u.does}, &c)
	fs.StringVar(&session, "session", "", "the session to undo: the id its line in docs log gives")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || session == "" || len(session) > 64 {
		return usageError{"docs undo takes --session ID (docs log gives each session's id), and nothing else"}
	}
	if err := c.person(); err != nil {
		return err
	}
	file, mine, err := c.openSeen(ctx)
	if err != nil {
		return err
	}
	defer file.Close()
	done, err := docstore.UndoSession(ctx, file, mine, session, docstore.Author{By: spaces.Person(c.me).String(), Door: docstore.DoorCLI})
	if errors.Is(err, docstore.ErrNoSession) {
		return usageError{fmt.Sprintf("session %q did nothing in your spaces: docs log gives each session's id", session)}
	}
	if err != nil {
		return err
	}
	writeUndone(stdout, done, len(mine) > 1)
	return nil
}

// writeUndone says what an undo did and what clashed.
func writeUndone(w io.Writer, u docstore.Undone, many bool) {
	where := func(space string) string {
		if many {
			return space + ": "
		}
		return ""
	}
	for _, d := range u.Documents {
		vs := make([]string, len(d.Reverted))
		for i, n := range d.Reverted {
			vs[i] = strconv.Itoa(n)
		}
		name := fmt.Sprintf("%s%s (%s)", where(d.Space), d.Document.Title, d.Document.ID)
		switch {
		case d.Deleted:
			fmt.Fprintf(w, "%s: made by the session alone, deleted (docs undelete brings it back)\n", name)
		case d.Version == 0:
			fmt.Fprintf(w, "%s: nothing left to take back of versions %s\n", name, strings.Join(vs, ", "))
		default:
			fmt.Fprintf(w, "%s: versions %s taken back, as version %d\n", name, strings.Join(vs, ", "), d.Version)
		}
		for _, c := range d.Clashes {
			fmt.Fprintf(w, "    clash: line%s changed since by someone else, kept as they are:\n", spanOf(c.TheirsStart, len(c.Theirs)))
			for _, l := range c.Theirs {
				fmt.Fprintf(w, "      | %s\n", l)
			}
		}
	}
	for _, e := range u.Declined {
		fmt.Fprintf(w, "%s%s (%s): change %d declined, \"undone\"\n", where(e.Space), e.Title, e.Doc, e.N)
	}
	if len(u.Documents) == 0 && len(u.Declined) == 0 {
		fmt.Fprintln(w, "Nothing left to undo: the session's changes were taken back or decided already.")
	}
}

// spanOf is " 4" or "s 4-6": the lines n from start.
func spanOf(start, n int) string {
	if n <= 1 {
		return " " + strconv.Itoa(start)
	}
	return fmt.Sprintf("s %d-%d", start, start+n-1)
}

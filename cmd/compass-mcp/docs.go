package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/tools"
)

const docsUsage = `compass-mcp docs: the person's side of the documents.

  docs list [--deleted]                  the space's documents, latest saved first
  docs show DOC [--version N]            a version's text on stdout (its header, and the
                                         latest's links, on stderr)
  docs history DOC                       every version, newest first
  docs diff DOC A [B]                    unified diff from version A to B (default: the latest)
  docs save DOC [--base N] [--mine|--theirs] < FILE
                                         save FILE as DOC's text; from an older --base it
                                         merges line by line, and a clash saves nothing
  docs save --new TITLE < FILE           a new document
  docs restore DOC N                     a new version with version N's text
  docs rename DOC TITLE                  a new version with another title
  docs delete DOC / undelete DOC         out of listings and lookups, and back
  docs purge DOC                         a deleted document and its versions, gone for good
  docs export DIR                        every document as Markdown, with its history as JSON

DOC is a document's id or title (exact, else the one title with all the words).`

// docsCmd runs "compass-mcp docs ...".
func docsCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" {
		fmt.Fprintln(stderr, docsUsage)
		if len(args) == 0 {
			return usageError{"docs needs a subcommand"}
		}
		return nil
	}
	sub, args := args[0], args[1:]
	var c config
	fs := flags("docs "+sub, &c)
	version := fs.Int("version", 0, "if set, the version to show")
	base := fs.Int("base", 0, "if set, the version FILE was made from (default: the latest)")
	mine := fs.Bool("mine", false, "on a clash, keep your lines where both changed them")
	theirs := fs.Bool("theirs", false, "on a clash, keep the saved version's lines where both changed them")
	isNew := fs.Bool("new", false, "save: make a new document titled DOC")
	deleted := fs.Bool("deleted", false, "list: the deleted documents")
	whole := fs.Bool("whole", false, "export: every version's whole text too, not only what each changed")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	want, ok := docsArgs[sub]
	if !ok {
		fmt.Fprintln(stderr, docsUsage)
		return usageError{fmt.Sprintf("no docs subcommand %q", sub)}
	}
	if len(pos) < want.least || len(pos) > want.most {
		return usageError{fmt.Sprintf("docs %s takes %s (docs %s); got %s", sub, want.words, want.usage, plural(len(pos), "argument"))}
	}
	if *mine && *theirs {
		return usageError{"--mine and --theirs choose opposite sides: give one"}
	}
	file, err := c.open()
	if err != nil {
		return err
	}
	defer file.Close()
	p := docsSession{store: docstore.New(file, c.space), db: file, me: docstore.Author{By: spaces.Person(c.me).String()}, out: stdout, errs: stderr}
	switch sub {
	case "list":
		return p.list(*deleted)
	case "show":
		return p.show(pos[0], *version)
	case "history":
		return p.history(pos[0])
	case "diff":
		return p.diff(pos[0], pos[1:])
	case "save":
		prefer := linediff.Clash
		if *mine {
			prefer = linediff.PreferMine
		} else if *theirs {
			prefer = linediff.PreferTheirs
		}
		return p.save(pos[0], *base, *isNew, prefer, stdin)
	case "restore":
		n, err := versionArg(pos[1])
		if err != nil {
			return err
		}
		return p.saved(p.store.Restore(pos[0], n, p.me))
	case "rename":
		return p.saved(p.store.Rename(pos[0], pos[1], p.me))
	case "delete":
		d, err := p.store.Delete(pos[0], p.me)
		if err != nil {
			return p.explain(err, pos[0])
		}
		fmt.Fprintf(stdout, "Deleted %q (%s). Its %s kept: docs undelete %s brings it back.\n", d.Title, d.ID, versions(d.Version, "is", "are"), d.ID)
		return nil
	case "undelete":
		d, err := p.store.Undelete(pos[0])
		if err != nil {
			return p.explain(err, pos[0])
		}
		fmt.Fprintf(stdout, "Brought back %q (%s) at version %d.\n", d.Title, d.ID, d.Version)
		return nil
	case "purge":
		d, err := p.store.Purge(pos[0])
		if errors.Is(err, docstore.ErrNotFound) {
			if live, ferr := p.store.Find(pos[0]); ferr == nil {
				return fmt.Errorf("%q (%s) isn't deleted, and purge removes only deleted documents: docs delete %s first, then purge it", live.Title, live.ID, live.ID)
			}
		}
		if err != nil {
			return p.explain(err, pos[0])
		}
		fmt.Fprintf(stdout, "Purged %q (%s) and its %s.\n", d.Title, d.ID, versions(d.Version, "", ""))
		return nil
	case "export":
		n, err := p.store.ExportDir(pos[0], *whole)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Exported %s to %s.\n", plural(n, "document"), pos[0])
		return nil
	}
	return nil
}

// docsArgs says what each docs subcommand takes, in words for its refusal.
var docsArgs = map[string]struct {
	least, most  int
	words, usage string
}{
	"list":     {0, 0, "no arguments", "list [--deleted]"},
	"show":     {1, 1, "a document", "show DOC [--version N]"},
	"history":  {1, 1, "a document", "history DOC"},
	"diff":     {2, 3, "a document and a version, and maybe a second version", "diff DOC A [B]"},
	"save":     {1, 1, "a document (with --new, a title), and the text on stdin", "save DOC < FILE"},
	"restore":  {2, 2, "a document and a version", "restore DOC N"},
	"rename":   {2, 2, "a document and its new title", "rename DOC TITLE"},
	"delete":   {1, 1, "a document", "delete DOC"},
	"undelete": {1, 1, "a document", "undelete DOC"},
	"purge":    {1, 1, "a deleted document", "purge DOC"},
	"export":   {1, 1, "a folder", "export DIR"},
}

// docsSession is one run of compass-mcp docs: a space's documents, who acts on them (the
// person the command runs for), and where its answers and notices go.
type docsSession struct {
	store     *docstore.Store
	db        kv.DB
	me        docstore.Author
	out, errs io.Writer
}

func versionArg(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "v"))
	if err != nil || n < 1 {
		return 0, usageError{fmt.Sprintf("a version is a number from 1; got %q", s)}
	}
	return n, nil
}

// versions is "1 version" or "3 versions", followed by verb's singular or plural when given.
func versions(n int, one, many string) string {
	s, verb := plural(n, "version"), many
	if n == 1 {
		verb = one
	}
	if verb != "" {
		s += " " + verb
	}
	return s
}

// explain says what went wrong with a named document as a person reads it.
func (p docsSession) explain(err error, name string) error {
	var (
		amb   *docstore.AmbiguousError
		taken *docstore.TitleTakenError
		nover *docstore.NoVersionError
	)
	switch {
	case errors.Is(err, docstore.ErrNotFound):
		return fmt.Errorf("no document %q in space %s (docs list shows them; docs list --deleted the deleted ones)", name, p.store.Space())
	case errors.As(err, &amb):
		titles := make([]string, len(amb.Matches))
		for i, d := range amb.Matches {
			titles[i] = fmt.Sprintf("%q (%s)", d.Title, d.ID)
		}
		return fmt.Errorf("%q could be %s: give the whole title or the id", name, strings.Join(titles, ", "))
	case errors.As(err, &taken):
		return fmt.Errorf("the title %q is taken by document %s: pick another", taken.Title, taken.Other.ID)
	case errors.As(err, &nover):
		return fmt.Errorf("%s has versions 1 to %d: there's no version %d", nover.Document.Title, nover.Document.Version, nover.Asked)
	}
	return err
}

func (p docsSession) list(deleted bool) error {
	if deleted {
		docs, err := p.store.Deleted()
		if err != nil {
			return err
		}
		if len(docs) == 0 {
			fmt.Fprintln(p.errs, "No deleted documents in this space.")
		}
		return p.store.Names(func(names spaces.Names) {
			for _, d := range docs {
				fmt.Fprintf(p.out, "%s  %s  · %s · deleted by %s %s\n", d.ID, d.Title, versions(d.Version, "", ""), d.Deleted.By.Show(names), d.Deleted.At.Local().Format(tools.TimeLayout))
			}
		})
	}
	docs, total, err := p.store.List(math.MaxInt)
	if err != nil {
		return err
	}
	if total == 0 {
		fmt.Fprintln(p.errs, "No documents in this space yet.")
	}
	return p.store.Names(func(names spaces.Names) {
		for _, d := range docs {
			fmt.Fprintf(p.out, "%s  %s  · version %d · %d bytes · saved by %s %s\n", d.ID, d.Title, d.Version, d.Bytes, d.Author.Show(names), d.Saved.Local().Format(tools.TimeLayout))
		}
	})
}

func (p docsSession) show(name string, version int) error {
	d, v, ls, err := p.store.ReadLinked(name, version, showLinks)
	if err != nil {
		return p.explain(err, name)
	}
	err = p.store.Names(func(names spaces.Names) {
		fmt.Fprintf(p.errs, "%s (%s) · version %d of %d · %s by %s %s\n", v.Title, d.ID, v.Number, d.Version, v.Kind, v.Author.Show(names), v.At.Local().Format(tools.TimeLayout))
	})
	if err != nil {
		return err
	}
	if v.Number == d.Version {
		showLinksOf(p.errs, ls)
	}
	_, err = io.WriteString(p.out, v.Text)
	return err
}

// showLinks is how many documents of each kind docs show names.
const showLinks = 20

// showLinksOf writes a latest version's links under docs show's header, one kind a line,
// each document as "Title (id)": stderr, like the header, so that stdout is the text alone.
func showLinksOf(w io.Writer, ls docstore.Links) {
	line := func(what string, docs []docstore.Document, total int) {
		if total == 0 {
			return
		}
		names := make([]string, len(docs))
		for i, d := range docs {
			names[i] = fmt.Sprintf("%s (%s)", d.Title, d.ID)
		}
		if more := total - len(docs); more > 0 {
			names = append(names, fmt.Sprintf("and %d more", more))
		}
		fmt.Fprintf(w, "%s: %s\n", what, strings.Join(names, ", "))
	}
	line("links to", ls.To, ls.ToTotal)
	line("linked from", ls.From, ls.FromTotal)
	if ls.BrokenTotal > 0 {
		var names []string
		for _, b := range ls.Broken {
			switch {
			case b.Deleted != nil:
				names = append(names, fmt.Sprintf("%s (%s, deleted)", b.Deleted.Title, b.Deleted.ID))
			case b.ID != "":
				names = append(names, "document "+b.ID+" (not in this space)")
			default:
				names = append(names, "[["+b.Title+"]] (no such document)")
			}
		}
		if more := ls.BrokenTotal - len(ls.Broken); more > 0 {
			names = append(names, fmt.Sprintf("and %d more", more))
		}
		fmt.Fprintf(w, "broken links: %s\n", strings.Join(names, ", "))
	}
}

func (p docsSession) history(name string) error {
	d, vs, err := p.store.Log(name)
	if err != nil {
		return p.explain(err, name)
	}
	fmt.Fprintf(p.out, "%s (%s), %s, newest first:\n", d.Title, d.ID, versions(d.Version, "", ""))
	return p.store.Names(func(names spaces.Names) {
		for _, v := range vs {
			title := ""
			if v.Title != d.Title {
				title = fmt.Sprintf("  (titled %q)", v.Title)
			}
			fmt.Fprintf(p.out, "  v%-4d %-8s %s  by %s  +%d \u2212%d%s\n", v.Number, v.Kind, v.At.Local().Format(tools.TimeLayout), v.Author.Show(names), v.Added, v.Removed, title)
		}
	})
}

func (p docsSession) diff(name string, versions []string) error {
	a, err := versionArg(versions[0])
	if err != nil {
		return err
	}
	b := 0
	if len(versions) == 2 {
		if b, err = versionArg(versions[1]); err != nil {
			return err
		}
	}
	_, diff, err := p.store.Diff(name, a, b)
	if err != nil {
		return p.explain(err, name)
	}
	if diff == "" {
		fmt.Fprintln(p.errs, "The two versions' texts are the same.")
	}
	_, err = io.WriteString(p.out, diff)
	return err
}

func (p docsSession) save(name string, base int, isNew bool, prefer linediff.Prefer, stdin io.Reader) error {
	text, err := io.ReadAll(io.LimitReader(stdin, docstore.MaxText+1))
	if err != nil {
		return fmt.Errorf("reading the text to save from stdin: %w", err)
	}
	if isNew {
		if base != 0 {
			return usageError{"--new makes a new document: it has no --base"}
		}
		saved, err := p.store.Create(name, string(text), docstore.KindSave, p.me)
		return p.saved(saved, err)
	}
	saved, err := p.store.Save(name, base, string(text), p.me, prefer)
	var clash *docstore.ClashError
	if errors.As(err, &clash) {
		p.showClash(clash, name)
		return errSilent
	}
	return p.saved(saved, err)
}

func (p docsSession) saved(saved docstore.Saved, err error) error {
	if err != nil {
		var e error = err
		if errors.Is(err, docstore.ErrBadTitle) || errors.Is(err, docstore.ErrBadText) {
			e = fmt.Errorf("nothing was saved: %w", err)
		}
		return p.explain(e, "")
	}
	d := saved.Document
	if saved.Unchanged {
		fmt.Fprintf(p.out, "%q (%s) already has that text: no new version (it stays at version %d).\n", d.Title, d.ID, d.Version)
		return nil
	}
	how := ""
	if saved.Kind == docstore.KindMerge {
		how = ", merged with the versions saved since your base"
	}
	fmt.Fprintf(p.out, "Saved %q (%s) as version %d%s: +%d \u2212%d lines.\n", d.Title, d.ID, d.Version, how, saved.Added, saved.Removed)
	return nil
}

func (p docsSession) showClash(c *docstore.ClashError, name string) {
	w := p.errs
	fmt.Fprintf(w, "Nothing was saved: %q has moved on to version %d since your version %d, and both changed the same lines:\n", c.Document.Title, c.Document.Version, c.Base)
	for i, k := range c.Conflicts {
		fmt.Fprintf(w, "\nClash %d:\n  version %d, %s:\n", i+1, c.Document.Version, tools.Span(k.TheirsStart, len(k.Theirs)))
		for _, l := range k.Theirs {
			fmt.Fprintf(w, "    | %s\n", l)
		}
		fmt.Fprintf(w, "  yours, %s:\n", tools.Span(k.MineStart, len(k.Mine)))
		for _, l := range k.Mine {
			fmt.Fprintf(w, "    | %s\n", l)
		}
	}
	fmt.Fprintf(w, "\nChoose: save again with --mine (your lines win where both changed them) or --theirs (version %d's win); either way the other changes are merged. Or edit your file from version %d (docs show %q) and save it with --base %d.\n", c.Document.Version, c.Document.Version, name, c.Document.Version)
}

// backup writes a consistent copy of the data file to path while servers may be using it.
func backup(args []string, stdout io.Writer) error {
	var c config
	fs := flags("backup", &c)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError{"backup takes FILE: where to write the copy"}
	}
	if isPostgres(c.data) {
		return usageError{"backup copies a bbolt file; for a PostgreSQL database use `compass-mcp copy --from " + redact(c.data) + " --to FILE` (a bbolt copy) or pg_dump"}
	}
	db, err := c.open()
	if err != nil {
		return err
	}
	defer db.Close()
	file, ok := db.(*bolt.File)
	if !ok {
		return errors.New("backup copies a bbolt file; for PostgreSQL use `compass-mcp copy --from URL --to FILE` or pg_dump")
	}
	size, err := file.Backup(pos[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Backed up %s to %s (%d bytes).\n", c.data, pos[0], size)
	return nil
}

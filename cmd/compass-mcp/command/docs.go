package command

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"errors"
	"math"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/search"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/tools"

	"github.com/compass-mcp/compass-mcp/linediff"
)

var docsHelp = subcommand{name: "docs", args: docsNames() + " ...",
	does: "the person's side of the documents, and the review of the agents' proposals and comments;\ndocs help says what each does, docs SUBCOMMAND -h its arguments"}

// docsNames is every docs subcommand, as help lists them: docsSubs's, then review.go's.
func docsNames() string {
	var names []string
	for _, d := range docsSubs {
		names = append(names, d.name)
	}
	names = append(names, "blame", "log", "undo", "inbox", "proposals", "proposal", "accept", "decline", "comment", "comments") // reviewCommands, in docs help's order
	return strings.Join(names, " | ")
}

// docsSub is one of docs' subcommands: what it takes (in words, for its refusal) and does;
// actsAsPerson when it makes versions, which carry the person's name.
type docsSub struct {
	name, args, words, does string
	least, most             int
	actsAsPerson            bool
}

// docsSubs are docs' subcommands, in the order docs help lists them.
var docsSubs = []docsSub{
	{"list", "[--deleted]", "no arguments", "the space's documents, latest saved first", 0, 0, false},
	{"show", "DOC [--version N]", "a document", "a version's text on stdout (its header, and the latest's links, on stderr)", 1, 1, false},
	{"history", "DOC [--before N] [--limit N]", "a document", "its versions, newest first, 500 at a time", 1, 1, false},
	{"diff", "DOC A [B]", "a document and a version, and maybe a second version", "unified diff from version A to B (default: the latest)", 2, 3, false},
	{"save", "DOC [--base N] [--mine|--theirs] [--empty] < FILE", "a document (with --new, a title), and the text on stdin",
		"save FILE as DOC's text; from an older --base it merges line by line, and a clash\n      saves nothing; save --new TITLE < FILE makes a new document; an empty FILE needs --empty", 1, 1, true},
	{"restore", "DOC N", "a document and a version", "a new version with version N's text", 2, 2, true},
	{"rename", "DOC TITLE", "a document and its new title", "a new version with another title", 2, 2, true},
	{"delete", "DOC", "a document", "out of listings and lookups (its versions kept)", 1, 1, true},
	{"undelete", "DOC", "a document", "back in them", 1, 1, false},
	{"purge", "DOC", "a deleted document", "a deleted document and its versions, gone for good", 1, 1, false},
	{"export", "DIR", "a folder", "every document as Markdown, with its history as JSON", 1, 1, false},
}

// docsUsage is what docs help says: each subcommand, and what DOC is.
func docsUsage() string {
	var b strings.Builder
	for _, d := range docsSubs {
		fmt.Fprintf(&b, "  docs %s %s\n      %s\n", d.name, d.args, d.does)
	}
	return b.String() + "\nDOC is a document's id or title (exact, else the one title with all the words)."
}

// docsCmd runs "compass-mcp docs ...".
func docsCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" {
		fmt.Fprintf(stderr, "Usage: compass-mcp docs SUBCOMMAND ...: the person's side of the documents.\n\n%s\n", docsUsage()+reviewUsage)
		if len(args) == 0 {
			return usageError{"docs needs a subcommand"}
		}
		return nil
	}
	sub, args := args[0], args[1:]
	if run, ok := reviewCommands[sub]; ok { // review.go: blame, proposals, comments
		return run(ctx, sub, args, stdin, stdout, stderr)
	}
	i := slices.IndexFunc(docsSubs, func(d docsSub) bool { return d.name == sub })
	if i < 0 {
		names := make([]string, 0, len(docsSubs)+len(reviewCommands))
		for _, d := range docsSubs {
			names = append(names, d.name)
		}
		for name := range reviewCommands {
			names = append(names, name)
		}
		slices.Sort(names)
		if near := search.Nearest(sub, names); near != "" {
			return usageError{fmt.Sprintf("no docs subcommand %q: did you mean %s? (docs help lists them)", sub, near)}
		}
		return usageError{fmt.Sprintf("no docs subcommand %q: docs help lists them", sub)}
	}
	return docsRun(ctx, docsSubs[i], args, stdin, stdout, stderr)
}

// docsRun runs the docs subcommand want with its flags and arguments.
func docsRun(ctx context.Context, want docsSub, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	sub := want.name
	var c config
	fs := flags(subcommand{name: "docs " + sub, args: want.args, does: want.does, more: "DOC is a document's id or title (exact, else the one title with all the words)."}, &c)
	version := fs.Int("version", 0, "if set, the version to show")
	base := fs.Int("base", 0, "if set, the version FILE was made from (default: the latest)")
	mine := fs.Bool("mine", false, "on a clash, keep your lines where both changed them")
	theirs := fs.Bool("theirs", false, "on a clash, keep the saved version's lines where both changed them")
	isNew := fs.Bool("new", false, "save: make a new document titled DOC")
	empty := fs.Bool("empty", false, "save: the text on stdin may be empty (else an empty stdin, like </dev/null, saves nothing)")
	deleted := fs.Bool("deleted", false, "list: the deleted documents")
	whole := fs.Bool("whole", false, "export: every version's whole text too, not only what each changed")
	before := fs.Int("before", 0, "history: if set, the versions numbered below N")
	limit := fs.Int("limit", HistoryLimit, "history: at most this many versions")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < want.least || len(pos) > want.most {
		return usageError{fmt.Sprintf("docs %s takes %s (docs %s %s); got %s", sub, want.words, sub, want.args, Plural(len(pos), "argument"))}
	}
	if *mine && *theirs {
		return usageError{"--mine and --theirs choose opposite sides: give one"}
	}
	if want.actsAsPerson {
		if err := c.person(); err != nil {
			return err
		}
	}
	c.create = want.actsAsPerson // the subcommands that save; the others read
	file, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer file.Close()
	p := Terminal{Store: docstore.New(file, c.space), Me: docstore.Author{By: spaces.Person(c.me).String(), Door: docstore.DoorCLI}, Out: stdout, Errs: stderr}
	switch sub {
	case "list":
		return p.List(ctx, *deleted)
	case "show":
		return p.Show(ctx, pos[0], *version)
	case "history":
		if *limit < 1 || *before < 0 {
			return usageError{"docs history's --limit is 1 or more, and --before a version number"}
		}
		return p.History(ctx, pos[0], *before, *limit)
	case "diff":
		a, err := versionArg(pos[1])
		b := 0
		if err == nil && len(pos) == 3 {
			b, err = versionArg(pos[2])
		}
		if err != nil {
			return err
		}
		return p.Diff(ctx, pos[0], a, b)
	case "save":
		if *isNew && *base != 0 {
			return usageError{"--new makes a new document: it has no --base"}
		}
		return reviewErr(p.Save(ctx, pos[0], *base, *isNew, preferOf(*mine, *theirs), *empty, stdin)) // a clash is shown

	case "restore":
		n, err := versionArg(pos[1])
		if err != nil {
			return err
		}
		return p.Restore(ctx, pos[0], n)
	case "rename":
		return p.Rename(ctx, pos[0], pos[1])
	case "delete":
		return p.Delete(ctx, pos[0])
	case "undelete":
		return p.Undelete(ctx, pos[0])
	case "purge":
		return p.Purge(ctx, pos[0])
	case "export":
		return p.Export(ctx, pos[0], *whole)
	}
	return nil
}

func versionArg(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "v"))
	if err != nil || n < 1 {
		return 0, usageError{fmt.Sprintf("a version is a number from 1; got %q", s)}
	}
	return n, nil
}

// What docs prints, for a person: the same store calls as the tools', in a person's words.

// Terminal is the person's side of a space's documents on a terminal (compass-mcp docs):
// the same store calls as the tools', answered for a person rather than a model. Answers go
// to Out (a document's text, alone, so that it can be redirected to a file), notices to Errs.
type Terminal struct {
	Store     *docstore.Store
	Me        docstore.Author // who the versions it makes are by
	Out, Errs io.Writer
}

// Explain says what went wrong with the document named name as a person reads it
// (docstore.Explain tells the store's refusals apart); other errors are returned as they are.
func (p Terminal) Explain(err error, name string) error {
	pr := docstore.Explain(err)
	switch pr.Kind {
	case docstore.ProblemNotFound:
		return p.notFound(pr.NotFound, name)
	case docstore.ProblemAmbiguous:
		titles := make([]string, len(pr.Ambiguous.Matches))
		for i, d := range pr.Ambiguous.Matches {
			titles[i] = fmt.Sprintf("%q (%s)", d.Title, d.ID)
		}
		return fmt.Errorf("%q could be %s: give the whole title or the id", name, strings.Join(titles, ", "))
	case docstore.ProblemTaken:
		return fmt.Errorf("the title %q is taken by document %s: pick another", pr.Taken.Title, pr.Taken.Other.ID)
	case docstore.ProblemNoVersion:
		nover := pr.NoVersion
		return fmt.Errorf("%s has versions 1 to %d: there's no version %d", nover.Document.Title, nover.Document.Version, nover.Asked)
	}
	return err
}

// notFound refuses a name that names nothing, with the titles close to it, each with its
// id: `no document "Lanch plan" in space personal (...); close: "Launch plan" (01J...)`.
func (p Terminal) notFound(nf *docstore.NotFoundError, name string) error {
	if name == "" {
		name = nf.Name // restore and rename say only what went wrong
	}
	if utf8.RuneCountInString(name) > 100 {
		name = string([]rune(name)[:100]) + "…"
	}
	msg := fmt.Sprintf("no document %q in space %s (docs list shows them; docs list --deleted the deleted ones)", name, p.Store.Space())
	if len(nf.Close) > 0 {
		titles := make([]string, len(nf.Close))
		for i, d := range nf.Close {
			titles[i] = fmt.Sprintf("%q (%s)", d.Title, d.ID)
		}
		msg += "; close: " + strings.Join(titles, ", ")
	}
	return errors.New(msg)
}

// List writes the space's documents, latest saved first, or (deleted) the deleted ones.
func (p Terminal) List(ctx context.Context, deleted bool) error {
	var (
		docs  []docstore.Document
		total int
		names spaces.Names
	)
	err := p.Store.View(ctx, func(r *docstore.Reader) (err error) {
		if deleted {
			docs, err = r.Deleted()
			total = len(docs)
		} else {
			docs, total, err = r.List(math.MaxInt)
		}
		names = r.Names()
		return err
	})
	if err != nil {
		return err
	}
	if deleted {
		if len(docs) == 0 {
			fmt.Fprintln(p.Errs, "No deleted documents in this space.")
		}
		for _, d := range docs {
			fmt.Fprintf(p.Out, "%s  %s  · %s · deleted by %s %s\n", d.ID, d.Title, Versions(d.Version, "", ""), d.Deleted.By.Show(names), when(d.Deleted.At))
		}
		return nil
	}
	if total == 0 {
		fmt.Fprintln(p.Errs, "No documents in this space yet.")
	}
	for _, d := range docs {
		fmt.Fprintf(p.Out, "%s  %s  · version %d · %d bytes · saved by %s %s\n", d.ID, d.Title, d.Version, d.Bytes, d.Author.Show(names), when(d.Saved))
	}
	return nil
}

// when is a time as the terminal shows it: tools' layout, local time.
func when(t time.Time) string { return t.Local().Format(tools.TimeLayout) }

// Show writes a version's text (0: the latest), its header on Errs.
func (p Terminal) Show(ctx context.Context, name string, version int) error {
	var (
		d     docstore.Document
		v     docstore.Version
		ls    docstore.Links
		names spaces.Names
	)
	err := p.Store.View(ctx, func(r *docstore.Reader) (err error) {
		ls = docstore.Links{}
		if d, v, err = r.Read(name, version); err != nil {
			return err
		}
		if v.Number == d.Version {
			if ls, err = r.Links(d, showLinks); err != nil {
				return err
			}
		}
		names = r.Names()
		return nil
	})
	if err != nil {
		return p.Explain(err, name)
	}
	fmt.Fprintf(p.Errs, "%s (%s) · version %d of %d · %s by %s %s\n", v.Title, d.ID, v.Number, d.Version, v.Kind, v.Author.Show(names), when(v.At))
	if v.Number == d.Version {
		showLinksOf(p.Errs, ls)
	}
	_, err = io.WriteString(p.Out, v.Text)
	return err
}

// HistoryLimit is how many versions docs history prints unless --limit says: a history of
// 50,000 versions is read a page at a time (Reader.LogPage), not in one snapshot.
const HistoryLimit = 500

// History writes the headers of the versions numbered below before (0: from the latest),
// newest first, at most limit of them, and how to see older ones.
func (p Terminal) History(ctx context.Context, name string, before, limit int) error {
	var (
		d     docstore.Document
		vs    []docstore.Version
		names spaces.Names
	)
	err := p.Store.View(ctx, func(r *docstore.Reader) (err error) {
		d, vs, err = r.LogPage(name, before, limit)
		names = r.Names()
		return err
	})
	if err != nil {
		return p.Explain(err, name)
	}
	fmt.Fprintf(p.Out, "%s (%s), %s, newest first:\n", d.Title, d.ID, Versions(d.Version, "", ""))
	for _, v := range vs {
		title := ""
		if v.Title != d.Title {
			title = fmt.Sprintf("  (titled %q)", v.Title)
		}
		fmt.Fprintf(p.Out, "  v%-4d %-8s %s  by %s  +%d \u2212%d%s  (%s)\n", v.Number, v.Kind, when(v.At), v.Author.Show(names), v.Added, v.Removed, title, v.Author.Via())
	}
	if n := len(vs); n > 0 && vs[n-1].Number > 1 {
		older := vs[n-1].Number - 1
		fmt.Fprintf(p.Out, "%s older: docs history %s --before %d\n", Plural(older, "version"), d.ID, vs[n-1].Number)
	}
	return nil
}

// Diff writes the unified diff from version a to b (0: the latest).
func (p Terminal) Diff(ctx context.Context, name string, a, b int) error {
	var diff string
	err := p.Store.View(ctx, func(r *docstore.Reader) (err error) { _, diff, err = r.Diff(name, a, b); return err })
	if err != nil {
		return p.Explain(err, name)
	}
	if diff == "" {
		fmt.Fprintln(p.Errs, "The two versions' texts are the same.")
	}
	_, err = io.WriteString(p.Out, diff)
	return err
}

// Save saves text (read from in) as the document's, from version base (0: the latest), or
// as a new document titled name. A clash is shown on Errs and returned (a
// *docstore.ClashError: nothing was saved).
//
// An empty stdin saves nothing unless empty is set: `docs save DOC < /dev/null`, or a
// script whose pipe broke, would otherwise wipe the document without a word (the agent's
// write_document refuses empty text too). White space alone counts as text.
func (p Terminal) Save(ctx context.Context, name string, base int, isNew bool, prefer linediff.Prefer, empty bool, in io.Reader) error {
	text, err := io.ReadAll(io.LimitReader(in, docstore.MaxText+1))
	if err != nil {
		return fmt.Errorf("reading the text to save from stdin: %w", err)
	}
	if len(text) == 0 && !empty {
		return usageError{"nothing was saved: stdin was empty; give the text on stdin (docs save DOC < FILE), or --empty to save an empty text"}
	}
	if isNew {
		if base != 0 {
			return errors.New("--new makes a new document: it has no --base")
		}
		saved, err := p.Store.Create(ctx, name, string(text), docstore.KindSave, p.Me)
		return p.Saved(saved, err)
	}
	saved, err := p.Store.Save(ctx, name, base, string(text), p.Me, prefer)
	var clash *docstore.ClashError
	if errors.As(err, &clash) {
		p.showClash(clash, name)
		return clash
	}
	return p.Saved(saved, err)
}

// Restore makes a new version of the document named name with version n's text.
func (p Terminal) Restore(ctx context.Context, name string, n int) error {
	return p.Saved(p.Store.Restore(ctx, name, n, p.Me))
}

// Rename makes a new version of the document named name with another title.
func (p Terminal) Rename(ctx context.Context, name, title string) error {
	return p.Saved(p.Store.Rename(ctx, name, title, p.Me))
}

// Saved says what a save (a restore, a rename) made of the document, or why it made nothing.
func (p Terminal) Saved(saved docstore.Saved, err error) error {
	if err != nil {
		if errors.Is(err, docstore.ErrBadTitle) || errors.Is(err, docstore.ErrBadText) {
			err = fmt.Errorf("nothing was saved: %w", err)
		}
		return p.Explain(err, "")
	}
	d := saved.Document
	if saved.Unchanged {
		fmt.Fprintf(p.Out, "%q (%s) already has that text: no new version (it stays at version %d).\n", d.Title, d.ID, d.Version)
		return nil
	}
	how := ""
	if saved.Kind == docstore.KindMerge {
		how = ", merged with the versions saved since your base"
	}
	fmt.Fprintf(p.Out, "Saved %q (%s) as version %d%s: +%d \u2212%d lines%s.\n", d.Title, d.ID, d.Version, how, saved.Added, saved.Removed, tools.Relinked(saved))
	return nil
}

func (p Terminal) showClash(c *docstore.ClashError, name string) {
	w := p.Errs
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

// Delete takes the document out of listings and lookups, its versions kept.
func (p Terminal) Delete(ctx context.Context, name string) error {
	d, err := p.Store.Delete(ctx, name, p.Me)
	if err != nil {
		return p.Explain(err, name)
	}
	fmt.Fprintf(p.Out, "Deleted %q (%s). Its %s kept: docs undelete %s brings it back.\n", d.Title, d.ID, Versions(d.Version, "is", "are"), d.ID)
	return nil
}

// Undelete brings a deleted document back.
func (p Terminal) Undelete(ctx context.Context, name string) error {
	d, err := p.Store.Undelete(ctx, name)
	if err != nil {
		return p.Explain(err, name)
	}
	fmt.Fprintf(p.Out, "Brought back %q (%s) at version %d.\n", d.Title, d.ID, d.Version)
	return nil
}

// Purge removes a deleted document and its versions for good.
func (p Terminal) Purge(ctx context.Context, name string) error {
	d, err := p.Store.Purge(ctx, name)
	if errors.Is(err, docstore.ErrNotFound) {
		if live, ferr := docstore.ReadIn(ctx, p.Store, func(r *docstore.Reader) (docstore.Document, error) { return r.Find(name) }); ferr == nil {
			return fmt.Errorf("%q (%s) isn't deleted, and purge removes only deleted documents: docs delete %s first, then purge it", live.Title, live.ID, live.ID)
		}
	}
	if err != nil {
		return p.Explain(err, name)
	}
	fmt.Fprintf(p.Out, "Purged %q (%s) and its %s.\n", d.Title, d.ID, Versions(d.Version, "", ""))
	return nil
}

// Export writes every document as Markdown into dir, with its history (whole: every
// version's text too).
func (p Terminal) Export(ctx context.Context, dir string, whole bool) error {
	n, err := p.Store.ExportDir(ctx, dir, whole)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.Out, "Exported %s to %s.\n", Plural(n, "document"), dir)
	return nil
}

// Versions is "1 version" or "3 versions", followed by verb's singular or plural when given.
func Versions(n int, one, many string) string {
	s, verb := Plural(n, "version"), many
	if n == 1 {
		verb = one
	}
	if verb != "" {
		s += " " + verb
	}
	return s
}

// Plural is "1 document" or "3 documents".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
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

package tools

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// Terminal is the person's side of a space's documents on a terminal (compass-mcp docs):
// the same store calls as the tools', answered for a person rather than a model. Answers go
// to Out (a document's text, alone, so that it can be redirected to a file), notices to Errs.
type Terminal struct {
	Store     *docstore.Store
	Me        docstore.Author // who the versions it makes are by
	Out, Errs io.Writer
}

// Explain says what went wrong with the document named name as a person reads it; other
// errors are returned as they are.
func (p Terminal) Explain(err error, name string) error {
	var (
		amb   *docstore.AmbiguousError
		taken *docstore.TitleTakenError
		nover *docstore.NoVersionError
	)
	switch {
	case errors.Is(err, docstore.ErrNotFound):
		return p.notFound(err, name)
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

// notFound refuses a name that names nothing, with the titles close to it, each with its
// id: `no document "Lanch plan" in space personal (...); close: "Launch plan" (01J...)`.
func (p Terminal) notFound(err error, name string) error {
	var nf *docstore.NotFoundError
	if !errors.As(err, &nf) {
		nf = &docstore.NotFoundError{}
	}
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
func (p Terminal) List(deleted bool) error {
	if deleted {
		docs, err := p.Store.Deleted()
		if err != nil {
			return err
		}
		if len(docs) == 0 {
			fmt.Fprintln(p.Errs, "No deleted documents in this space.")
		}
		return p.Store.Names(func(names spaces.Names) {
			for _, d := range docs {
				fmt.Fprintf(p.Out, "%s  %s  · %s · deleted by %s %s\n", d.ID, d.Title, Versions(d.Version, "", ""), d.Deleted.By.Show(names), when(d.Deleted.At))
			}
		})
	}
	docs, total, err := p.Store.List(math.MaxInt)
	if err != nil {
		return err
	}
	if total == 0 {
		fmt.Fprintln(p.Errs, "No documents in this space yet.")
	}
	return p.Store.Names(func(names spaces.Names) {
		for _, d := range docs {
			fmt.Fprintf(p.Out, "%s  %s  · version %d · %d bytes · saved by %s %s\n", d.ID, d.Title, d.Version, d.Bytes, d.Author.Show(names), when(d.Saved))
		}
	})
}

// Show writes a version's text (0: the latest), its header on Errs.
func (p Terminal) Show(name string, version int) error {
	d, v, ls, err := p.Store.ReadLinked(name, version, showLinks)
	if err != nil {
		return p.Explain(err, name)
	}
	err = p.Store.Names(func(names spaces.Names) {
		fmt.Fprintf(p.Errs, "%s (%s) · version %d of %d · %s by %s %s\n", v.Title, d.ID, v.Number, d.Version, v.Kind, v.Author.Show(names), when(v.At))
	})
	if err != nil {
		return err
	}
	if v.Number == d.Version {
		showLinksOf(p.Errs, ls)
	}
	_, err = io.WriteString(p.Out, v.Text)
	return err
}

// History writes every version's header, newest first.
func (p Terminal) History(name string) error {
	d, vs, err := p.Store.Log(name)
	if err != nil {
		return p.Explain(err, name)
	}
	fmt.Fprintf(p.Out, "%s (%s), %s, newest first:\n", d.Title, d.ID, Versions(d.Version, "", ""))
	return p.Store.Names(func(names spaces.Names) {
		for _, v := range vs {
			title := ""
			if v.Title != d.Title {
				title = fmt.Sprintf("  (titled %q)", v.Title)
			}
			fmt.Fprintf(p.Out, "  v%-4d %-8s %s  by %s  +%d \u2212%d%s\n", v.Number, v.Kind, when(v.At), v.Author.Show(names), v.Added, v.Removed, title)
		}
	})
}

// Diff writes the unified diff from version a to b (0: the latest).
func (p Terminal) Diff(name string, a, b int) error {
	_, diff, err := p.Store.Diff(name, a, b)
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
func (p Terminal) Save(name string, base int, isNew bool, prefer linediff.Prefer, in io.Reader) error {
	text, err := io.ReadAll(io.LimitReader(in, docstore.MaxText+1))
	if err != nil {
		return fmt.Errorf("reading the text to save from stdin: %w", err)
	}
	if isNew {
		if base != 0 {
			return errors.New("--new makes a new document: it has no --base")
		}
		saved, err := p.Store.Create(name, string(text), docstore.KindSave, p.Me)
		return p.Saved(saved, err)
	}
	saved, err := p.Store.Save(name, base, string(text), p.Me, prefer)
	var clash *docstore.ClashError
	if errors.As(err, &clash) {
		p.showClash(clash, name)
		return clash
	}
	return p.Saved(saved, err)
}

// Restore makes a new version of the document named name with version n's text.
func (p Terminal) Restore(name string, n int) error {
	return p.Saved(p.Store.Restore(name, n, p.Me))
}

// Rename makes a new version of the document named name with another title.
func (p Terminal) Rename(name, title string) error {
	return p.Saved(p.Store.Rename(name, title, p.Me))
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
	fmt.Fprintf(p.Out, "Saved %q (%s) as version %d%s: +%d \u2212%d lines.\n", d.Title, d.ID, d.Version, how, saved.Added, saved.Removed)
	return nil
}

func (p Terminal) showClash(c *docstore.ClashError, name string) {
	w := p.Errs
	fmt.Fprintf(w, "Nothing was saved: %q has moved on to version %d since your version %d, and both changed the same lines:\n", c.Document.Title, c.Document.Version, c.Base)
	for i, k := range c.Conflicts {
		fmt.Fprintf(w, "\nClash %d:\n  version %d, %s:\n", i+1, c.Document.Version, Span(k.TheirsStart, len(k.Theirs)))
		for _, l := range k.Theirs {
			fmt.Fprintf(w, "    | %s\n", l)
		}
		fmt.Fprintf(w, "  yours, %s:\n", Span(k.MineStart, len(k.Mine)))
		for _, l := range k.Mine {
			fmt.Fprintf(w, "    | %s\n", l)
		}
	}
	fmt.Fprintf(w, "\nChoose: save again with --mine (your lines win where both changed them) or --theirs (version %d's win); either way the other changes are merged. Or edit your file from version %d (docs show %q) and save it with --base %d.\n", c.Document.Version, c.Document.Version, name, c.Document.Version)
}

// Delete takes the document out of listings and lookups, its versions kept.
func (p Terminal) Delete(name string) error {
	d, err := p.Store.Delete(name, p.Me)
	if err != nil {
		return p.Explain(err, name)
	}
	fmt.Fprintf(p.Out, "Deleted %q (%s). Its %s kept: docs undelete %s brings it back.\n", d.Title, d.ID, Versions(d.Version, "is", "are"), d.ID)
	return nil
}

// Undelete brings a deleted document back.
func (p Terminal) Undelete(name string) error {
	d, err := p.Store.Undelete(name)
	if err != nil {
		return p.Explain(err, name)
	}
	fmt.Fprintf(p.Out, "Brought back %q (%s) at version %d.\n", d.Title, d.ID, d.Version)
	return nil
}

// Purge removes a deleted document and its versions for good.
func (p Terminal) Purge(name string) error {
	d, err := p.Store.Purge(name)
	if errors.Is(err, docstore.ErrNotFound) {
		if live, ferr := p.Store.Find(name); ferr == nil {
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
func (p Terminal) Export(dir string, whole bool) error {
	n, err := p.Store.ExportDir(dir, whole)
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

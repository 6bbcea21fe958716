package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/tools"
)

const docsUsage = `compass-mcp docs: the person's side of the documents.

  docs list [--deleted]                  the space's documents, latest saved first
  docs show DOC [--version N]            a version's text on stdout (its header on stderr)
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

var docsHelp = subcommand{name: "docs", args: "list | show | history | diff | save | restore | rename | delete | undelete | purge | export ...",
	does: "the person's side of the documents (docs help)"}

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
	want, ok := docsArgs[sub]
	fs := flags(subcommand{name: "docs", args: want.usage, does: docsUsage}, &c)
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
	if !ok {
		fmt.Fprintln(stderr, docsUsage)
		return usageError{fmt.Sprintf("no docs subcommand %q", sub)}
	}
	if len(pos) < want.least || len(pos) > want.most {
		return usageError{fmt.Sprintf("docs %s takes %s (docs %s); got %s", sub, want.words, want.usage, tools.Plural(len(pos), "argument"))}
	}
	if *mine && *theirs {
		return usageError{"--mine and --theirs choose opposite sides: give one"}
	}
	if actsAsPerson[sub] {
		if err := c.person(); err != nil {
			return err
		}
	}
	file, err := c.open()
	if err != nil {
		return err
	}
	defer file.Close()
	p := tools.Terminal{Store: docstore.New(file, c.space), Me: docstore.Author{By: spaces.Person(c.me).String()}, Out: stdout, Errs: stderr}
	switch sub {
	case "list":
		return p.List(*deleted)
	case "show":
		return p.Show(pos[0], *version)
	case "history":
		return p.History(pos[0])
	case "diff":
		a, err := versionArg(pos[1])
		b := 0
		if err == nil && len(pos) == 3 {
			b, err = versionArg(pos[2])
		}
		if err != nil {
			return err
		}
		return p.Diff(pos[0], a, b)
	case "save":
		if *isNew && *base != 0 {
			return usageError{"--new makes a new document: it has no --base"}
		}
		prefer := linediff.Clash
		if *mine {
			prefer = linediff.PreferMine
		} else if *theirs {
			prefer = linediff.PreferTheirs
		}
		var clash *docstore.ClashError
		if err := p.Save(pos[0], *base, *isNew, prefer, stdin); errors.As(err, &clash) {
			return errSilent // shown
		} else {
			return err
		}
	case "restore":
		n, err := versionArg(pos[1])
		if err != nil {
			return err
		}
		return p.Saved(p.Store.Restore(pos[0], n, p.Me))
	case "rename":
		return p.Saved(p.Store.Rename(pos[0], pos[1], p.Me))
	case "delete":
		return p.Delete(pos[0])
	case "undelete":
		return p.Undelete(pos[0])
	case "purge":
		return p.Purge(pos[0])
	case "export":
		return p.Export(pos[0], *whole)
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

// actsAsPerson is the docs subcommands that make versions, which carry the person's name.
var actsAsPerson = map[string]bool{"save": true, "restore": true, "rename": true, "delete": true}

func versionArg(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "v"))
	if err != nil || n < 1 {
		return 0, usageError{fmt.Sprintf("a version is a number from 1; got %q", s)}
	}
	return n, nil
}

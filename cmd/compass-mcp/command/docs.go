package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/search"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/tools"
)

var docsHelp = subcommand{name: "docs", args: "list | show | history | diff | save | restore | rename | delete | undelete | purge | export ...",
	does: "the person's side of the documents (docs help)"}

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
	{"history", "DOC", "a document", "every version, newest first", 1, 1, false},
	{"diff", "DOC A [B]", "a document and a version, and maybe a second version", "unified diff from version A to B (default: the latest)", 2, 3, false},
	{"save", "DOC [--base N] [--mine|--theirs] < FILE", "a document (with --new, a title), and the text on stdin",
		"save FILE as DOC's text; from an older --base it merges line by line, and a clash\n      saves nothing; save --new TITLE < FILE makes a new document", 1, 1, true},
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
func docsCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" {
		fmt.Fprintf(stderr, "Usage: compass-mcp docs SUBCOMMAND ...: the person's side of the documents.\n\n%s\n", docsUsage()+reviewUsage)
		if len(args) == 0 {
			return usageError{"docs needs a subcommand"}
		}
		return nil
	}
	sub, args := args[0], args[1:]
	if run, ok := reviewCommands[sub]; ok { // review.go: blame, proposals, comments
		return run(sub, args, stdin, stdout, stderr)
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
	return docsRun(docsSubs[i], args, stdin, stdout, stderr)
}

// docsRun runs the docs subcommand want with its flags and arguments.
func docsRun(want docsSub, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	sub := want.name
	var c config
	fs := flags(subcommand{name: "docs " + sub, args: want.args, does: want.does, more: "DOC is a document's id or title (exact, else the one title with all the words)."}, &c)
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
	if len(pos) < want.least || len(pos) > want.most {
		return usageError{fmt.Sprintf("docs %s takes %s (docs %s %s); got %s", sub, want.words, sub, want.args, tools.Plural(len(pos), "argument"))}
	}
	if *mine && *theirs {
		return usageError{"--mine and --theirs choose opposite sides: give one"}
	}
	if want.actsAsPerson {
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
		return reviewErr(p.Save(pos[0], *base, *isNew, preferOf(*mine, *theirs), stdin)) // a clash is shown

	case "restore":
		n, err := versionArg(pos[1])
		if err != nil {
			return err
		}
		return p.Restore(pos[0], n)
	case "rename":
		return p.Rename(pos[0], pos[1])
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

func versionArg(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "v"))
	if err != nil || n < 1 {
		return 0, usageError{fmt.Sprintf("a version is a number from 1; got %q", s)}
	}
	return n, nil
}

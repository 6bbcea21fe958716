package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/tools"
)

// The command line of who wrote what and of the review of the agents' changes: docs blame,
// and (below) proposals and comments. docs.go hands these subcommands here; their flags and
// argument checks are here, their store calls and what they say in tools (terminal_review.go).

const reviewUsage = `

Who wrote each line:
  docs blame DOC                         every line with the version that last changed it

The agents' proposals (serve --review, tokens add --review):
  docs proposals [DOC]                   the open proposals of DOC, else of every document
  docs proposal DOC N                    proposal N as a diff against its base (stdout), its
                                         status and what accepting it would do (stderr)
  docs accept DOC N [--mine|--theirs]    make it a version, merged with what changed since its
                                         base; a clash saves nothing, and --mine (the
                                         proposal's lines) or --theirs chooses
  docs accept DOC N --edit [--base V] < FILE
                                         accept FILE instead: the proposal as you edited it,
                                         made from version V (default: the proposal's base)
  docs decline DOC N --why TEXT          decline it, saying why (the agent's next read says so)

Comments on lines (agents see the open ones in read_document, and answer with comment_document):
  docs comment DOC --lines 4-6 TEXT [--version N] [--to AGENT]
                                         comment on lines of the latest version (or version N);
                                         --to asks one agent (by default, any may answer)
  docs comment DOC --reply N TEXT        reply to comment N
  docs comment DOC --resolve N [TEXT]    resolve comment N (TEXT, if given, is a last reply)
  docs comments DOC                      the open comments, at their lines, with their replies`

// reviewCommands are the docs subcommands of this file, each with its own flags.
var reviewCommands = map[string]func(sub string, args []string, stdin io.Reader, stdout, stderr io.Writer) error{
	"blame":     blameCmd,
	"proposals": proposalsCmd,
	"proposal":  proposalCmd,
	"accept":    acceptCmd,
	"decline":   declineCmd,
	"comment":   commentCmd,
	"comments":  commentsCmd,
}

// reviewArgs parses a review subcommand's flags (define adds its own) and positional
// arguments, of which it must have least to most (words says which, for the refusal), and
// opens the data; close closes it.
func reviewArgs(sub string, args []string, stdout, stderr io.Writer, least, most int, words string, define func(*flag.FlagSet)) (p tools.Terminal, pos []string, close func(), err error) {
	var c config
	fs := flags(subcommand{name: "docs " + sub, does: "review the agents' changes and comment (docs help lists how)"}, &c)
	if define != nil {
		define(fs)
	}
	if pos, err = parse(fs, args); err != nil {
		return p, nil, nil, err
	}
	if len(pos) < least || len(pos) > most {
		return p, nil, nil, usageError{fmt.Sprintf("docs %s takes %s; got %s", sub, words, tools.Plural(len(pos), "argument"))}
	}
	file, err := c.open()
	if err != nil {
		return p, nil, nil, err
	}
	p = tools.Terminal{Store: docstore.New(file, c.space), Me: docstore.Author{By: spaces.Person(c.me).String()}, Out: stdout, Errs: stderr}
	return p, pos, func() { file.Close() }, nil
}

// reviewErr is a refusal of the Terminal's as the command line ends with it: a proposal's
// missing reason is a usage error, and a clash (a save's or an accept's, shown on stderr
// already) ends silently.
func reviewErr(err error) error {
	var clash *docstore.ClashError
	switch {
	case errors.Is(err, docstore.ErrNoReason):
		return usageError{err.Error()}
	case errors.As(err, &clash):
		return errSilent
	}
	return err
}

// blameCmd prints every line of a document with the version that last changed it.
func blameCmd(sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, pos, done, err := reviewArgs(sub, args, stdout, stderr, 1, 1, "a document (docs blame DOC)", nil)
	if err != nil {
		return err
	}
	defer done()
	return p.Blame(pos[0])
}

// proposalsCmd lists the open proposals of a document, or of every document that has any.
func proposalsCmd(sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, pos, done, err := reviewArgs(sub, args, stdout, stderr, 0, 1, "at most a document (docs proposals [DOC])", nil)
	if err != nil {
		return err
	}
	defer done()
	name := ""
	if len(pos) == 1 {
		name = pos[0]
	}
	return p.Proposals(name)
}

// numberArg reads a proposal's (or comment's) number.
func numberArg(what, s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "#"))
	if err != nil || n < 1 {
		return 0, usageError{fmt.Sprintf("a %s is a number from 1; got %q", what, s)}
	}
	return n, nil
}

// proposalCmd shows one proposal: its diff against its base on stdout; its status, and what
// accepting it would do to today's text, on stderr.
func proposalCmd(sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, pos, done, err := reviewArgs(sub, args, stdout, stderr, 2, 2, "a document and a proposal's number (docs proposal DOC N)", nil)
	if err != nil {
		return err
	}
	defer done()
	n, err := numberArg("proposal", pos[1])
	if err != nil {
		return err
	}
	return reviewErr(p.Proposal(pos[0], n))
}

// acceptCmd accepts a proposal: merged with what changed since its base, or, with --edit,
// the person's edited text from stdin.
func acceptCmd(sub string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var (
		mine, theirs, edited *bool
		base                 *int
	)
	p, pos, done, err := reviewArgs(sub, args, stdout, stderr, 2, 2, "a document and a proposal's number (docs accept DOC N)", func(fs *flag.FlagSet) {
		mine = fs.Bool("mine", false, "on a clash, keep the proposal's lines where both changed them")
		theirs = fs.Bool("theirs", false, "on a clash, keep the saved version's lines where both changed them")
		edited = fs.Bool("edit", false, "accept the text on stdin instead: the proposal as you edited it")
		base = fs.Int("base", 0, "with --edit: the version the text on stdin was made from (default: the proposal's base)")
	})
	if err != nil {
		return err
	}
	defer done()
	if *mine && *theirs {
		return usageError{"--mine and --theirs choose opposite sides: give one"}
	}
	if *base != 0 && !*edited {
		return usageError{"--base goes with --edit: the version your edited text was made from"}
	}
	n, err := numberArg("proposal", pos[1])
	if err != nil {
		return err
	}
	return reviewErr(p.Accept(pos[0], n, preferOf(*mine, *theirs), *edited, *base, stdin))
}

// preferOf is the side --mine or --theirs keeps where both changed the same lines; with
// neither, such a clash saves nothing.
func preferOf(mine, theirs bool) linediff.Prefer {
	switch {
	case mine:
		return linediff.PreferMine
	case theirs:
		return linediff.PreferTheirs
	}
	return linediff.Clash
}

// declineCmd declines a proposal with the person's reason.
func declineCmd(sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	var why *string
	p, pos, done, err := reviewArgs(sub, args, stdout, stderr, 2, 2, "a document and a proposal's number (docs decline DOC N --why TEXT)", func(fs *flag.FlagSet) {
		why = fs.String("why", "", "why you decline it: the agent's next read says so")
	})
	if err != nil {
		return err
	}
	defer done()
	if strings.TrimSpace(*why) == "" {
		return usageError{"docs decline needs --why TEXT: the reason the agent's next read gives it"}
	}
	n, err := numberArg("proposal", pos[1])
	if err != nil {
		return err
	}
	return reviewErr(p.Decline(pos[0], n, *why))
}

// commentCmd comments on lines, replies to a comment, or resolves one.
func commentCmd(sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	var (
		lines, to      *string
		version        *int
		reply, resolve *int
	)
	p, pos, done, err := reviewArgs(sub, args, stdout, stderr, 1, 2, "a document and the comment's text (docs comment DOC --lines 4-6 TEXT)", func(fs *flag.FlagSet) {
		lines = fs.String("lines", "", "the lines to comment on: 4-6, 4, 4- (to the end)")
		version = fs.Int("version", 0, "with --lines: the version whose lines they are (default: the latest)")
		to = fs.String("to", "", "with --lines: the agent it asks (default: any agent may answer it)")
		reply = fs.Int("reply", 0, "reply to comment N")
		resolve = fs.Int("resolve", 0, "resolve comment N")
	})
	if err != nil {
		return err
	}
	defer done()
	given := 0
	for _, set := range []bool{*lines != "", *reply != 0, *resolve != 0} {
		if set {
			given++
		}
	}
	if given != 1 {
		return usageError{"docs comment takes one of --lines 4-6 (a new comment), --reply N or --resolve N"}
	}
	text := ""
	if len(pos) == 2 {
		text = pos[1]
	}
	if text == "" && *resolve == 0 {
		return usageError{"docs comment needs the comment's text after the document"}
	}
	d, err := p.Document(pos[0])
	if err != nil {
		return err
	}
	switch {
	case *lines != "":
		r, err := docstore.ParseLineRange(*lines)
		if err != nil {
			return usageError{"--lines: " + strings.TrimPrefix(err.Error(), docstore.ErrBadRange.Error()+": ")}
		}
		asks := ""
		if *to != "" {
			actor, err := spaces.ParseActor("agent:" + strings.TrimPrefix(*to, "agent:"))
			if err != nil {
				return usageError{"--to: an agent's name, like north"}
			}
			asks = actor.String()
		}
		return p.Comment(d, docstore.NewComment{Version: *version, Lines: r, Text: text, Asks: asks})
	case *reply != 0:
		return p.Reply(d, *reply, text)
	}
	return p.Resolve(d, *resolve, text)
}

// commentsCmd lists a document's open comments, at their lines in the latest version.
func commentsCmd(sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, pos, done, err := reviewArgs(sub, args, stdout, stderr, 1, 1, "a document (docs comments DOC)", nil)
	if err != nil {
		return err
	}
	defer done()
	return p.Comments(pos[0])
}

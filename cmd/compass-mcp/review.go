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

// The person's side of who wrote what and of the review of the agents' changes: docs blame,
// and (below) proposals and comments. docs.go hands these subcommands here.

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

// docsSession is one run of a review subcommand: the person's side of the documents
// (tools.Terminal), with the review's own ways of saying things.
type docsSession struct{ tools.Terminal }

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
func reviewArgs(sub string, args []string, stdout, stderr io.Writer, least, most int, words string, define func(*flag.FlagSet)) (p docsSession, pos []string, close func(), err error) {
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
	p = docsSession{tools.Terminal{Store: docstore.New(file, c.space), Me: docstore.Author{By: spaces.Person(c.me).String()}, Out: stdout, Errs: stderr}}
	return p, pos, func() { file.Close() }, nil
}

// blameCmd prints every line of a document with the version that last changed it.
func blameCmd(sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, pos, done, err := reviewArgs(sub, args, stdout, stderr, 1, 1, "a document (docs blame DOC)", nil)
	if err != nil {
		return err
	}
	defer done()
	bl, err := p.Store.Blame(pos[0])
	if err != nil {
		return p.Explain(err, pos[0])
	}
	d := bl.Document
	fmt.Fprintf(p.Out, "%s (%s), version %d, %s, each with the version that last changed it:\n", d.Title, d.ID, d.Version, tools.Plural(len(bl.Lines), "line"))
	return p.Store.Names(func(names spaces.Names) {
		who := map[int]string{}
		wide := map[string]int{}
		for n, v := range bl.Versions {
			who[n] = v.Author.Show(names)
			wide["who"] = max(wide["who"], len([]rune(who[n])))
			wide["kind"] = max(wide["kind"], len(v.Kind))
		}
		num := len(fmt.Sprint(len(bl.Lines)))
		ver := len(fmt.Sprint(d.Version)) + 1
		for _, r := range bl.Runs {
			v := bl.Versions[r.Version]
			head := fmt.Sprintf("%-*s %-*s %s%s %s", ver, fmt.Sprintf("v%d", v.Number), wide["kind"], v.Kind, who[r.Version], strings.Repeat(" ", wide["who"]-len([]rune(who[r.Version]))), v.At.Local().Format(tools.TimeLayout))
			for i := range r.Count {
				n := r.First + i
				fmt.Fprintf(p.Out, "%*d  %s | %s\n", num, n, head, bl.Lines[n-1])
			}
		}
	})
}

// proposalsCmd lists the open proposals of a document, or of every document that has any.
func proposalsCmd(sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, pos, done, err := reviewArgs(sub, args, stdout, stderr, 0, 1, "at most a document (docs proposals [DOC])", nil)
	if err != nil {
		return err
	}
	defer done()
	if len(pos) == 0 {
		waiting, err := p.Store.Waiting(5)
		if err != nil {
			return err
		}
		if len(waiting) == 0 {
			fmt.Fprintln(p.Errs, "No proposals wait in this space.")
		}
		for _, w := range waiting {
			if err := p.listProposals(w.Document, w.Proposals); err != nil {
				return err
			}
			if more := w.Document.Review.Open - len(w.Proposals); more > 0 {
				fmt.Fprintf(p.Out, "  … %d more: docs proposals %s\n", more, w.Document.ID)
			}
		}
		return nil
	}
	// A page at a time, each in a read transaction of its own: 10,000 open proposals are
	// listed without holding the store for all of them.
	for before, first := 0, true; ; first = false {
		d, ps, err := p.Store.Proposals(pos[0], before, 500)
		if err != nil {
			return p.Explain(err, pos[0])
		}
		if first && len(ps) == 0 {
			fmt.Fprintf(p.Errs, "No proposals of %q (%s) wait.\n", d.Title, d.ID)
			return nil
		}
		if first {
			err = p.listProposals(d, ps)
		} else {
			err = p.proposalLines(ps)
		}
		if err != nil || len(ps) < 500 {
			return err
		}
		before = ps[len(ps)-1].Number
	}
}

func (p docsSession) listProposals(d docstore.Document, ps []docstore.Proposal) error {
	fmt.Fprintf(p.Out, "%s (%s): %s, newest first:\n", d.Title, d.ID, tools.Plural(d.Review.Open, "open proposal"))
	return p.proposalLines(ps)
}

func (p docsSession) proposalLines(ps []docstore.Proposal) error {
	return p.Store.Names(func(names spaces.Names) {
		for _, pr := range ps {
			fmt.Fprintf(p.Out, "  change %-4d %-7s %s  %s  +%d \u2212%d  against v%d\n", pr.Number, pr.Kind, pr.Author.Show(names), pr.At.Local().Format(tools.TimeLayout), pr.Added, pr.Removed, pr.Base)
		}
	})
}

// numberArg reads a proposal's (or comment's) number.
func numberArg(what, s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "#"))
	if err != nil || n < 1 {
		return 0, usageError{fmt.Sprintf("a %s is a number from 1; got %q", what, s)}
	}
	return n, nil
}

// explainReview says what went wrong with a proposal as a person reads it.
func (p docsSession) explainReview(err error, name string) error {
	var (
		none    *docstore.NoProposalError
		decided *docstore.DecidedError
	)
	switch {
	case errors.As(err, &none):
		if none.Document.Review == nil || none.Document.Review.Proposals == 0 {
			return fmt.Errorf("%q (%s) has no proposals", none.Document.Title, none.Document.ID)
		}
		return fmt.Errorf("%q (%s) has proposals 1 to %d: there's no proposal %d", none.Document.Title, none.Document.ID, none.Document.Review.Proposals, none.Asked)
	case errors.As(err, &decided):
		return fmt.Errorf("proposal %d of %q was %s already: nothing was changed", decided.Proposal.Number, decided.Document.Title, decided.Proposal.Status)
	case errors.Is(err, docstore.ErrNoReason):
		return usageError{err.Error()}
	}
	return p.Explain(err, name)
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
	pv, err := p.Store.Preview(pos[0], n)
	if err != nil {
		return p.explainReview(err, pos[0])
	}
	pr, d := pv.Proposal, pv.Document
	err = p.Store.Names(func(names spaces.Names) {
		fmt.Fprintf(p.Errs, "%s (%s) · proposal %d · %s by %s %s · +%d \u2212%d against version %d · %s\n", d.Title, d.ID, pr.Number, pr.Kind, pr.Author.Show(names), pr.At.Local().Format(tools.TimeLayout), pr.Added, pr.Removed, pr.Base, statusLine(names, pr))
		if pr.Status != docstore.StatusOpen || pv.Base.Number == pv.Latest.Number {
			return
		}
		if len(pv.Conflicts) > 0 {
			fmt.Fprintf(p.Errs, "Version %d changed the same lines (%s): accepting it clashes; docs accept %s %d --mine or --theirs chooses, or --edit.\n", pv.Latest.Number, tools.Plural(len(pv.Conflicts), "place"), d.ID, pr.Number)
			return
		}
		added, removed := linediff.Stats(pv.Latest.Text, pv.Merged)
		fmt.Fprintf(p.Errs, "The text is at version %d: accepting it merges, +%d \u2212%d lines against today's text.\n", pv.Latest.Number, added, removed)
	})
	if err != nil {
		return err
	}
	_, err = io.WriteString(p.Out, linediff.Unified(fmt.Sprintf("%s v%d", pv.Base.Title, pv.Base.Number), fmt.Sprintf("%s proposal %d", pr.Title, pr.Number), pv.Base.Text, pr.Text, 3))
	return err
}

// statusLine says where a proposal stands, as a person reads it.
func statusLine(names spaces.Names, pr docstore.Proposal) string {
	d := pr.Decided
	if d == nil {
		return "open"
	}
	at := d.At.Local().Format(tools.TimeLayout)
	switch pr.Status {
	case docstore.StatusDeclined:
		return fmt.Sprintf("declined by %s %s: %q", names.ShowString(d.By), at, d.Why)
	case docstore.StatusMerged:
		return fmt.Sprintf("merged by %s %s, as version %d", names.ShowString(d.By), at, d.Version)
	}
	return fmt.Sprintf("accepted by %s %s, as version %d", names.ShowString(d.By), at, d.Version)
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
	prefer := linediff.Clash
	if *mine {
		prefer = linediff.PreferMine
	} else if *theirs {
		prefer = linediff.PreferTheirs
	}
	var edit *docstore.Edit
	if *edited {
		text, err := io.ReadAll(io.LimitReader(stdin, docstore.MaxText+1))
		if err != nil {
			return fmt.Errorf("reading the edited text from stdin: %w", err)
		}
		edit = &docstore.Edit{Text: string(text), Base: *base}
	}
	saved, pr, err := p.Store.Accept(pos[0], n, p.Me, edit, prefer)
	var clash *docstore.ClashError
	if errors.As(err, &clash) {
		p.showAcceptClash(clash, n)
		return errSilent
	}
	if errors.Is(err, docstore.ErrBadText) {
		return fmt.Errorf("nothing was saved: %w", err)
	}
	if err != nil {
		return p.explainReview(err, pos[0])
	}
	d := saved.Document
	how := ""
	if pr.Status == docstore.StatusMerged {
		how = ", merged with the versions saved since its base,"
	}
	if saved.Unchanged {
		fmt.Fprintf(p.Out, "Accepted proposal %d of %q (%s)%s: that leaves the text as it is, so no new version (it stays at version %d).\n", pr.Number, d.Title, d.ID, strings.TrimSuffix(how, ","), d.Version)
		return nil
	}
	fmt.Fprintf(p.Out, "Accepted proposal %d of %q (%s)%s as version %d: +%d \u2212%d lines.\n", pr.Number, d.Title, d.ID, how, d.Version, saved.Added, saved.Removed)
	return nil
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
	pr, err := p.Store.Decline(pos[0], n, p.Me, *why)
	if err != nil {
		return p.explainReview(err, pos[0])
	}
	d, _ := p.Store.Find(pos[0])
	fmt.Fprintf(p.Out, "Declined proposal %d of %q (%s). The agent's next read gives your reason: “%s”\n", pr.Number, d.Title, d.ID, pr.Decided.Why)
	return nil
}

// showAcceptClash says where a proposal clashes with the versions since its base, and how
// to choose.
func (p docsSession) showAcceptClash(c *docstore.ClashError, n int) {
	w := p.Errs
	fmt.Fprintf(w, "Nothing was saved: %q has moved on to version %d since proposal %d's base, version %d, and both changed the same lines:\n", c.Document.Title, c.Document.Version, n, c.Base)
	for i, k := range c.Conflicts {
		if i == 100 {
			fmt.Fprintf(w, "\n…and %d more clashing places.\n", len(c.Conflicts)-100)
			break
		}
		fmt.Fprintf(w, "\nClash %d:\n  version %d, %s:\n", i+1, c.Document.Version, tools.Span(k.TheirsStart, len(k.Theirs)))
		for _, l := range k.Theirs {
			fmt.Fprintf(w, "    | %s\n", l)
		}
		fmt.Fprintf(w, "  the proposal, %s:\n", tools.Span(k.MineStart, len(k.Mine)))
		for _, l := range k.Mine {
			fmt.Fprintf(w, "    | %s\n", l)
		}
	}
	fmt.Fprintf(w, "\nChoose: docs accept %s %d --mine (the proposal's lines win where both changed them) or --theirs (version %d's win); either way the other changes are merged. Or edit it: docs proposal %s %d shows it, and docs accept %s %d --edit --base %d < FILE takes your text, made from version %d.\n", c.Document.ID, n, c.Document.Version, c.Document.ID, n, c.Document.ID, n, c.Document.Version, c.Document.Version)
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
	d, err := p.Store.Find(pos[0])
	if err != nil {
		return p.Explain(err, pos[0])
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
		c, err := p.Store.Comment(d.ID, docstore.NewComment{Version: *version, Lines: r, Text: text, Author: p.Me, Asks: asks})
		if err != nil {
			return p.explainComment(err, d, 0)
		}
		fmt.Fprintf(p.Out, "Comment %d on %s of %q (%s), version %d. Agents see it in read_document.\n", c.Number, tools.Span(c.From, c.To-c.From+1), d.Title, d.ID, c.Version)
	case *reply != 0:
		r, err := p.Store.Reply(d.ID, *reply, text, p.Me)
		if err != nil {
			return p.explainComment(err, d, *reply)
		}
		fmt.Fprintf(p.Out, "Replied to comment %d of %q (%s) as comment %d.\n", r.ReplyTo, d.Title, d.ID, r.Number)
	default:
		c, err := p.Store.Resolve(d.ID, *resolve, text, p.Me)
		if err != nil {
			return p.explainComment(err, d, *resolve)
		}
		fmt.Fprintf(p.Out, "Resolved comment %d of %q (%s).\n", c.Number, d.Title, d.ID)
	}
	return nil
}

// explainComment says what went wrong with a comment as a person reads it.
func (p docsSession) explainComment(err error, d docstore.Document, n int) error {
	var nolines *docstore.NoLinesError
	switch {
	case errors.As(err, &nolines):
		return fmt.Errorf("%q has %d lines: there's no line %d", d.Title, nolines.Total, nolines.Asked)
	case errors.Is(err, docstore.ErrNoComment):
		return fmt.Errorf("%q (%s) has no comment %d (docs comments lists the open ones)", d.Title, d.ID, n)
	case errors.Is(err, docstore.ErrBadComment), errors.Is(err, docstore.ErrBadRange):
		return fmt.Errorf("nothing was saved: %w", err)
	}
	return p.Explain(err, d.ID)
}

// commentsCmd lists a document's open comments, at their lines in the latest version.
func commentsCmd(sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, pos, done, err := reviewArgs(sub, args, stdout, stderr, 1, 1, "a document (docs comments DOC)", nil)
	if err != nil {
		return err
	}
	defer done()
	d, err := p.Store.Find(pos[0])
	if err != nil {
		return p.Explain(err, pos[0])
	}
	cr, err := p.Store.Comments(d.ID, 0, docstore.MaxOpenComments, docstore.MaxReplies)
	if err != nil {
		return err
	}
	if cr.Open == 0 {
		fmt.Fprintf(p.Errs, "No open comments on %q (%s).\n", d.Title, d.ID)
		return nil
	}
	fmt.Fprintf(p.Out, "%s (%s), version %d: %s\n", d.Title, d.ID, d.Version, tools.Plural(cr.Open, "open comment"))
	return p.Store.Names(func(names spaces.Names) {
		for _, t := range cr.Threads {
			where := tools.Span(t.Lines.From, t.Lines.To-t.Lines.From+1)
			if t.Lines.From == 0 {
				where = fmt.Sprintf("outdated since version %d, on %q", t.Outdated, t.Quote)
			}
			fmt.Fprintf(p.Out, "\n  %d · %s · %s %s\n", t.Number, where, t.Author.Show(names), t.At.Local().Format(tools.TimeLayout))
			fmt.Fprintf(p.Out, "    %s\n", strings.ReplaceAll(t.Text, "\n", "\n    "))
			for _, r := range t.Replies {
				fmt.Fprintf(p.Out, "    ↳ %d · %s %s: %s\n", r.Number, r.Author.Show(names), r.At.Local().Format(tools.TimeLayout), strings.ReplaceAll(r.Text, "\n", "\n      "))
			}
		}
	})
}

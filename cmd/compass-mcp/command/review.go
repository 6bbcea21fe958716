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

What happened, in every space you see (--space: one), newest first, a line a session:
  docs log [--since D] [--agent A] [--document D] [--session ID] [--limit N] [--after POS]
                                         versions, proposals and decisions, comments,
                                         deletes, each with its door (the page's /activity)
  docs undo --session ID                 take back what a session did: each change reverted
                                         as a new version by you, merged with what changed
                                         since (lines changed since by others stay: clashes,
                                         shown); its open proposals declined as "undone"

What waits for you, in every space you are a member of, newest first:
  docs inbox [--limit N] [--after POS]   the open changes your agents proposed and the open
                                         comments agents left asking you, each with its
                                         first lines (the page's /inbox)

The agents' proposals (serve --review, tokens add --review):
  docs proposals [DOC]                   the open proposals of DOC, else of every document
  docs proposal DOC N                    change N as a diff against its base (stdout), its
                                         status and what accepting it would do (stderr)
  docs accept DOC N [--keep-agent|--keep-mine]
                                         make it a version, merged with what changed since its
                                         base; a clash saves nothing, and --keep-agent (the
                                         proposal's lines win) or --keep-mine (the saved
                                         version's lines win) chooses
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
var reviewCommands = map[string]func(ctx context.Context, sub string, args []string, stdin io.Reader, stdout, stderr io.Writer) error{
	"blame":     blameCmd,
	"inbox":     inboxCmd,
	"log":       logCmd,
	"undo":      undoCmd,
	"proposals": proposalsCmd,
	"proposal":  proposalCmd,
	"accept":    acceptCmd,
	"decline":   declineCmd,
	"comment":   commentCmd,
	"comments":  commentsCmd,
}

// reviewUsages are the review subcommands' arguments and what they do, for their -h (docs
// help's reviewUsage says the same at more length).
var reviewUsages = map[string]struct{ args, does string }{
	"blame": {"DOC", "every line of DOC with the version that last changed it"},
	"log": {"[--since D] [--agent A] [--space S] [--document D] [--session ID] [--limit N] [--after POS]",
		"what happened in every space you see, newest first, grouped by session: versions, proposals and decisions, comments, deletes"},
	"undo":      {"--session ID", "take back what a session did: each change reverted as a new version by you, merged with what changed since (clashes kept as they are and shown); its open proposals declined as \"undone\""},
	"inbox":     {"[--limit N] [--after POS]", "what waits for you in every space you are a member of, newest first: the open changes your agents proposed and the open comments agents left asking you"},
	"proposals": {"[DOC]", "the open proposals of DOC, else of every document"},
	"proposal":  {"DOC N", "change N as a diff against its base (stdout), its status and what accepting it would do (stderr)"},
	"accept": {"DOC N [--keep-agent|--keep-mine] | DOC N --edit [--base V] < FILE",
		"make change N a version, merged with what changed since its base (a clash saves nothing; --keep-agent or --keep-mine says whose lines win);\nwith --edit, FILE instead: the change as you edited it"},
	"decline":  {"DOC N --why TEXT", "decline change N, saying why (the agent's next read says so)"},
	"comment":  {"DOC --lines A-B TEXT | DOC --reply N TEXT | DOC --resolve N [TEXT]", "comment on lines of the latest version, reply to comment N, or resolve it"},
	"comments": {"DOC", "the open comments, at their lines, with their replies"},
}

// reviewArgs parses a review subcommand's flags (define adds its own) and positional
// arguments, of which it must have least to most (words says which, for the refusal), and
// opens the data; close closes it.
func reviewArgs(ctx context.Context, sub string, args []string, stdout, stderr io.Writer, least, most int, words string, define func(*flag.FlagSet)) (p Terminal, pos []string, close func(), err error) {
	var c config
	u := reviewUsages[sub]
	fs := flags(subcommand{name: "docs " + sub, args: u.args, does: u.does, more: "DOC is a document's id or title (exact, else the one title with all the words)."}, &c)
	if define != nil {
		define(fs)
	}
	if pos, err = parse(fs, args); err != nil {
		return p, nil, nil, err
	}
	if len(pos) < least || len(pos) > most {
		return p, nil, nil, usageError{fmt.Sprintf("docs %s takes %s; got %s", sub, words, Plural(len(pos), "argument"))}
	}
	file, err := c.open(ctx)
	if err != nil {
		return p, nil, nil, err
	}
	p = Terminal{Store: docstore.New(file, c.space), Me: docstore.Author{By: spaces.Person(c.me).String(), Door: docstore.DoorCLI}, Out: stdout, Errs: stderr}
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
func blameCmd(ctx context.Context, sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, pos, done, err := reviewArgs(ctx, sub, args, stdout, stderr, 1, 1, "a document (docs blame DOC)", nil)
	if err != nil {
		return err
	}
	defer done()
	return p.Blame(ctx, pos[0])
}

// proposalsCmd lists the open proposals of a document, or of every document that has any.
func proposalsCmd(ctx context.Context, sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, pos, done, err := reviewArgs(ctx, sub, args, stdout, stderr, 0, 1, "at most a document (docs proposals [DOC])", nil)
	if err != nil {
		return err
	}
	defer done()
	name := ""
	if len(pos) == 1 {
		name = pos[0]
	}
	return p.Proposals(ctx, name)
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
func proposalCmd(ctx context.Context, sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, pos, done, err := reviewArgs(ctx, sub, args, stdout, stderr, 2, 2, "a document and a proposal's number (docs proposal DOC N)", nil)
	if err != nil {
		return err
	}
	defer done()
	n, err := numberArg("proposal", pos[1])
	if err != nil {
		return err
	}
	return reviewErr(p.Proposal(ctx, pos[0], n))
}

// acceptCmd accepts a proposal: merged with what changed since its base, or, with --edit,
// the person's edited text from stdin.
func acceptCmd(ctx context.Context, sub string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var (
		agent, mine, edited *bool
		base                *int
	)
	if err := oldAcceptFlags(args); err != nil {
		return err
	}
	p, pos, done, err := reviewArgs(ctx, sub, args, stdout, stderr, 2, 2, "a document and a proposal's number (docs accept DOC N)", func(fs *flag.FlagSet) {
		agent = fs.Bool("keep-agent", false, "on a clash, the proposal's lines (the agent's) win where both changed them")
		mine = fs.Bool("keep-mine", false, "on a clash, the saved version's lines (yours) win where both changed them")
		edited = fs.Bool("edit", false, "accept the text on stdin instead: the proposal as you edited it")
		base = fs.Int("base", 0, "with --edit: the version the text on stdin was made from (default: the proposal's base)")
	})
	if err != nil {
		return err
	}
	defer done()
	if *agent && *mine {
		return usageError{"--keep-agent and --keep-mine choose opposite sides: give one"}
	}
	if *base != 0 && !*edited {
		return usageError{"--base goes with --edit: the version your edited text was made from"}
	}
	n, err := numberArg("proposal", pos[1])
	if err != nil {
		return err
	}
	return reviewErr(p.Accept(ctx, pos[0], n, preferOf(*agent, *mine), *edited, *base, stdin))
}

// oldAcceptFlags refuses docs accept's --mine and --theirs, which named the proposal's side
// "mine" (the opposite of what a person reads in it, and of docs save's --mine): a script
// written for them is told the new names rather than getting the side it didn't mean.
func oldAcceptFlags(args []string) error {
	for _, a := range args {
		if a == "--" {
			return nil
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "mine" && name != "theirs" {
			continue
		}
		side := "--keep-agent (the proposal's lines win)"
		if name == "theirs" {
			side = "--keep-mine (the saved version's lines win)"
		}
		return usageError{fmt.Sprintf("docs accept's --%s is gone: it could be read either way. Say whose lines win on a clash: %s; --keep-agent and --keep-mine are the two", name, side)}
	}
	return nil
}

// preferOf is the side kept where both changed the same lines: mine is the side being
// saved (docs save's --mine: the file; docs accept's --keep-agent: the proposal), theirs
// the saved version's (--theirs, --keep-mine); with neither, such a clash saves nothing.
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
func declineCmd(ctx context.Context, sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	var why *string
	p, pos, done, err := reviewArgs(ctx, sub, args, stdout, stderr, 2, 2, "a document and a proposal's number (docs decline DOC N --why TEXT)", func(fs *flag.FlagSet) {
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
	return reviewErr(p.Decline(ctx, pos[0], n, *why))
}

// commentCmd comments on lines, replies to a comment, or resolves one.
func commentCmd(ctx context.Context, sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	var (
		lines, to      *string
		version        *int
		reply, resolve *int
	)
	p, pos, done, err := reviewArgs(ctx, sub, args, stdout, stderr, 1, 2, "a document and the comment's text (docs comment DOC --lines 4-6 TEXT)", func(fs *flag.FlagSet) {
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
	d, err := p.Document(ctx, pos[0])
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
		return p.Comment(ctx, d, docstore.NewComment{Version: *version, Lines: r, Text: text, Asks: asks})
	case *reply != 0:
		return p.Reply(ctx, d, *reply, text)
	}
	return p.Resolve(ctx, d, *resolve, text)
}

// commentsCmd lists a document's open comments, at their lines in the latest version.
func commentsCmd(ctx context.Context, sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, pos, done, err := reviewArgs(ctx, sub, args, stdout, stderr, 1, 1, "a document (docs comments DOC)", nil)
	if err != nil {
		return err
	}
	defer done()
	return p.Comments(ctx, pos[0])
}

// What the review subcommands print.

// The person's side of who wrote what and of the review of the agents' changes: the store
// calls of docs blame, proposals, proposal, accept, decline, comment and comments, and what
// they say.

// Blame writes every line of a document with the version that last changed it.
func (p Terminal) Blame(ctx context.Context, name string) error {
	bl, err := p.Store.Blame(ctx, name)
	if err != nil {
		return p.Explain(err, name)
	}
	names, d := bl.Names, bl.Document
	fmt.Fprintf(p.Out, "%s (%s), version %d, %s, each with the version that last changed it:\n", d.Title, d.ID, d.Version, Plural(len(bl.Lines), "line"))
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
		head := fmt.Sprintf("%-*s %-*s %s%s %s", ver, fmt.Sprintf("v%d", v.Number), wide["kind"], v.Kind, who[r.Version], strings.Repeat(" ", wide["who"]-len([]rune(who[r.Version]))), when(v.At))
		for i := range r.Count {
			n := r.First + i
			fmt.Fprintf(p.Out, "%*d  %s | %s\n", num, n, head, bl.Lines[n-1])
		}
	}
	// Why the agents' versions were made, where a conversation of the space says.
	var vs []docstore.Event
	for n, v := range bl.Versions {
		if strings.HasPrefix(v.Author.By, "agent:") {
			vs = append(vs, docstore.Event{Space: p.Store.Space(), Doc: d.ID, What: docstore.EventVersion, N: n})
		}
	}
	slices.SortFunc(vs, func(a, b docstore.Event) int { return b.N - a.N })
	whys, err := whysOf(ctx, p.Store.DB(), vs)
	if err != nil {
		return err
	}
	for _, e := range vs {
		if why, ok := whys[fmt.Sprintf("%s/%d", e.Doc, e.N)]; ok {
			fmt.Fprintf(p.Out, "v%d why: %s\n", e.N, why.Say(names))
		}
	}
	return nil
}

// Proposals lists the open proposals of the document named name, or (name "") of every
// document that has any.
func (p Terminal) Proposals(ctx context.Context, name string) error {
	if name == "" {
		var (
			waiting []docstore.Waiting
			names   spaces.Names
		)
		err := p.Store.View(ctx, func(r *docstore.Reader) (err error) {
			waiting, err = r.Waiting(5)
			names = r.Names()
			return err
		})
		if err != nil {
			return err
		}
		if len(waiting) == 0 {
			fmt.Fprintln(p.Errs, "No proposals wait in this space.")
		}
		for _, w := range waiting {
			p.listProposals(names, w.Document, w.Proposals)
			if more := w.Document.Review.Open - len(w.Proposals); more > 0 {
				fmt.Fprintf(p.Out, "  … %d more: docs proposals %s\n", more, w.Document.ID)
			}
		}
		return nil
	}
	// A page at a time, each in a read transaction of its own: 10,000 open proposals are
	// listed without holding the store for all of them.
	for before, first := 0, true; ; first = false {
		var (
			d     docstore.Document
			ps    []docstore.Proposal
			names spaces.Names
		)
		err := p.Store.View(ctx, func(r *docstore.Reader) (err error) {
			d, ps, err = r.Proposals(name, before, 500)
			names = r.Names()
			return err
		})
		if err != nil {
			return p.Explain(err, name)
		}
		if first && len(ps) == 0 {
			fmt.Fprintf(p.Errs, "No proposals of %q (%s) wait.\n", d.Title, d.ID)
			return nil
		}
		if first {
			p.listProposals(names, d, ps)
		} else {
			p.proposalLines(names, ps)
		}
		if len(ps) < 500 {
			return nil
		}
		before = ps[len(ps)-1].Number
	}
}

func (p Terminal) listProposals(names spaces.Names, d docstore.Document, ps []docstore.Proposal) {
	fmt.Fprintf(p.Out, "%s (%s): %s, newest first:\n", d.Title, d.ID, Plural(d.Review.Open, "open proposal"))
	p.proposalLines(names, ps)
}

func (p Terminal) proposalLines(names spaces.Names, ps []docstore.Proposal) {
	for _, pr := range ps {
		fmt.Fprintf(p.Out, "  change %-4d %-7s %s  %s  +%d \u2212%d  against v%d\n", pr.Number, pr.Kind, pr.Author.Show(names), when(pr.At), pr.Added, pr.Removed, pr.Base)
		if pr.Note != "" { // a sync's: where it came from
			fmt.Fprintf(p.Out, "              %s\n", pr.Note)
		}
	}
}

// explainReview says what went wrong with a proposal as a person reads it. A missing
// reason (docstore.ErrNoReason) is returned as it is: the caller's to call a usage error.
func (p Terminal) explainReview(err error, name string) error {
	var (
		none    *docstore.NoProposalError
		decided *docstore.DecidedError
	)
	switch {
	case errors.As(err, &none):
		if none.Document.Review == nil || none.Document.Review.Proposals == 0 {
			return fmt.Errorf("%q (%s) has no proposals", none.Document.Title, none.Document.ID)
		}
		return fmt.Errorf("%q (%s) has proposals 1 to %d: there's no change %d", none.Document.Title, none.Document.ID, none.Document.Review.Proposals, none.Asked)
	case errors.As(err, &decided):
		return fmt.Errorf("change %d of %q was %s already: nothing was changed", decided.Proposal.Number, decided.Document.Title, decided.Proposal.Status)
	case errors.Is(err, docstore.ErrNoReason):
		return err
	}
	return p.Explain(err, name)
}

// Proposal shows proposal n of a document: its diff against its base on Out; its status,
// and what accepting it would do to today's text, on Errs.
func (p Terminal) Proposal(ctx context.Context, name string, n int) error {
	var (
		pv    docstore.Preview
		names spaces.Names
	)
	err := p.Store.View(ctx, func(r *docstore.Reader) (err error) {
		pv, err = r.Preview(name, n)
		names = r.Names()
		return err
	})
	if err != nil {
		return p.explainReview(err, name)
	}
	pr, d := pv.Proposal, pv.Document
	fmt.Fprintf(p.Errs, "%s (%s) · change %d · %s by %s %s · +%d \u2212%d against version %d · %s\n", d.Title, d.ID, pr.Number, pr.Kind, pr.Author.Show(names), when(pr.At), pr.Added, pr.Removed, pr.Base, statusLine(names, pr))
	switch {
	case pr.Status != docstore.StatusOpen || pv.Base.Number == pv.Latest.Number:
	case len(pv.Conflicts) > 0:
		fmt.Fprintf(p.Errs, "Version %d changed the same lines (%s): accepting it clashes; docs accept %s %d --keep-agent or --keep-mine chooses, or --edit.\n", pv.Latest.Number, Plural(len(pv.Conflicts), "place"), d.ID, pr.Number)
	default:
		added, removed := linediff.Stats(pv.Latest.Text, pv.Merged)
		fmt.Fprintf(p.Errs, "The text is at version %d: accepting it merges, +%d \u2212%d lines against today's text.\n", pv.Latest.Number, added, removed)
	}
	_, err = io.WriteString(p.Out, linediff.Unified(fmt.Sprintf("%s v%d", pv.Base.Title, pv.Base.Number), fmt.Sprintf("%s change %d", pr.Title, pr.Number), pv.Base.Text, pr.Text, 3))
	return err
}

// statusLine says where a proposal stands, as a person reads it.
func statusLine(names spaces.Names, pr docstore.Proposal) string {
	d := pr.Decided
	if d == nil {
		return "open"
	}
	at := when(d.At)
	switch pr.Status {
	case docstore.StatusDeclined:
		return fmt.Sprintf("declined by %s %s: %q", names.ShowString(d.By), at, d.Why)
	case docstore.StatusMerged:
		return fmt.Sprintf("merged by %s %s, as version %d", names.ShowString(d.By), at, d.Version)
	}
	return fmt.Sprintf("accepted by %s %s, as version %d", names.ShowString(d.By), at, d.Version)
}

// Accept accepts proposal n of a document: merged with what changed since its base (a
// clash settled by prefer), or, with edited, the person's edited text read from in, made
// from version base (0: the proposal's base). A clash is shown on Errs and returned (a
// *docstore.ClashError: nothing was saved).
func (p Terminal) Accept(ctx context.Context, name string, n int, prefer linediff.Prefer, edited bool, base int, in io.Reader) error {
	var edit *docstore.Edit
	if edited {
		text, err := io.ReadAll(io.LimitReader(in, docstore.MaxText+1))
		if err != nil {
			return fmt.Errorf("reading the edited text from stdin: %w", err)
		}
		edit = &docstore.Edit{Text: string(text), Base: base}
	}
	saved, pr, err := p.Store.Accept(ctx, name, n, p.Me, edit, prefer)
	var clash *docstore.ClashError
	if errors.As(err, &clash) {
		p.showAcceptClash(clash, n)
		return clash
	}
	if errors.Is(err, docstore.ErrBadText) {
		return fmt.Errorf("nothing was saved: %w", err)
	}
	if err != nil {
		return p.explainReview(err, name)
	}
	d := saved.Document
	how := ""
	if pr.Status == docstore.StatusMerged {
		how = ", merged with the versions saved since its base,"
	}
	if saved.Unchanged {
		fmt.Fprintf(p.Out, "Accepted change %d of %q (%s)%s: that leaves the text as it is, so no new version (it stays at version %d).\n", pr.Number, d.Title, d.ID, strings.TrimSuffix(how, ","), d.Version)
		return nil
	}
	fmt.Fprintf(p.Out, "Accepted change %d of %q (%s)%s as version %d: +%d \u2212%d lines.\n", pr.Number, d.Title, d.ID, how, d.Version, saved.Added, saved.Removed)
	return nil
}

// Decline declines proposal n of a document with the person's reason.
func (p Terminal) Decline(ctx context.Context, name string, n int, why string) error {
	pr, err := p.Store.Decline(ctx, name, n, p.Me, why)
	if err != nil {
		return p.explainReview(err, name)
	}
	d, _ := docstore.ReadIn(ctx, p.Store, func(r *docstore.Reader) (docstore.Document, error) { return r.Find(name) })
	fmt.Fprintf(p.Out, "Declined change %d of %q (%s). The agent's next read gives your reason: “%s”\n", pr.Number, d.Title, d.ID, pr.Decided.Why)
	return nil
}

// showAcceptClash says where a proposal clashes with the versions since its base, and how
// to choose.
func (p Terminal) showAcceptClash(c *docstore.ClashError, n int) {
	w := p.Errs
	fmt.Fprintf(w, "Nothing was saved: %q has moved on to version %d since change %d's base, version %d, and both changed the same lines:\n", c.Document.Title, c.Document.Version, n, c.Base)
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
	fmt.Fprintf(w, "\nChoose: docs accept %s %d --keep-agent (the proposal's lines win where both changed them) or --keep-mine (version %d's win); either way the other changes are merged. Or edit it: docs proposal %s %d shows it, and docs accept %s %d --edit --base %d < FILE takes your text, made from version %d.\n", c.Document.ID, n, c.Document.Version, c.Document.ID, n, c.Document.ID, n, c.Document.Version, c.Document.Version)
}

// Document finds the document named name, or says why not as a person reads it.
func (p Terminal) Document(ctx context.Context, name string) (docstore.Document, error) {
	d, err := docstore.ReadIn(ctx, p.Store, func(r *docstore.Reader) (docstore.Document, error) { return r.Find(name) })
	if err != nil {
		return d, p.Explain(err, name)
	}
	return d, nil
}

// Comment comments on lines of document d (found with Document): c's Author is p.Me.
func (p Terminal) Comment(ctx context.Context, d docstore.Document, c docstore.NewComment) error {
	c.Author = p.Me
	made, err := p.Store.Comment(ctx, d.ID, c)
	if err != nil {
		return p.explainComment(err, d, 0)
	}
	mc := made.Comment
	fmt.Fprintf(p.Out, "Comment %d on %s of %q (%s), version %d. Agents see it in read_document.\n", mc.Number, tools.Span(mc.From, mc.To-mc.From+1), d.Title, d.ID, mc.Version)
	return nil
}

// Reply replies to comment n of document d.
func (p Terminal) Reply(ctx context.Context, d docstore.Document, n int, text string) error {
	made, err := p.Store.Reply(ctx, d.ID, n, text, p.Me)
	if err != nil {
		return p.explainComment(err, d, n)
	}
	fmt.Fprintf(p.Out, "Replied to comment %d of %q (%s) as comment %d.\n", made.Comment.ReplyTo, d.Title, d.ID, made.Comment.Number)
	return nil
}

// Resolve resolves comment n of document d, with text (if any) as a last reply.
func (p Terminal) Resolve(ctx context.Context, d docstore.Document, n int, text string) error {
	made, err := p.Store.Resolve(ctx, d.ID, n, text, p.Me)
	if err != nil {
		return p.explainComment(err, d, n)
	}
	fmt.Fprintf(p.Out, "Resolved comment %d of %q (%s).\n", made.Comment.Number, d.Title, d.ID)
	return nil
}

// explainComment says what went wrong with a comment as a person reads it.
func (p Terminal) explainComment(err error, d docstore.Document, n int) error {
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

// Comments lists a document's open comments, at their lines in the latest version.
func (p Terminal) Comments(ctx context.Context, name string) error {
	var (
		d     docstore.Document
		cr    docstore.CommentsRead
		names spaces.Names
	)
	err := p.Store.View(ctx, func(r *docstore.Reader) (err error) {
		if d, err = r.Find(name); err != nil {
			return p.Explain(err, name)
		}
		cr, err = r.Comments(d.ID, 0, docstore.MaxOpenComments, docstore.MaxReplies)
		names = r.Names()
		return err
	})
	if err != nil {
		return err
	}
	if cr.Open == 0 {
		fmt.Fprintf(p.Errs, "No open comments on %q (%s).\n", d.Title, d.ID)
		return nil
	}
	fmt.Fprintf(p.Out, "%s (%s), version %d: %s\n", d.Title, d.ID, d.Version, Plural(cr.Open, "open comment"))
	for _, t := range cr.Threads {
		where := tools.Span(t.Lines.From, t.Lines.To-t.Lines.From+1)
		if t.Lines.From == 0 {
			where = fmt.Sprintf("outdated since version %d, on %q", t.Outdated, t.Quote)
		}
		fmt.Fprintf(p.Out, "\n  %d · %s · %s %s\n", t.Number, where, t.Author.Show(names), when(t.At))
		fmt.Fprintf(p.Out, "    %s\n", strings.ReplaceAll(t.Text, "\n", "\n    "))
		for _, r := range t.Replies {
			fmt.Fprintf(p.Out, "    ↳ %d · %s %s: %s\n", r.Number, r.Author.Show(names), when(r.At), strings.ReplaceAll(r.Text, "\n", "\n      "))
		}
	}
	return nil
}

// inboxCmd prints what waits for the person (--for) in every space they are a member of:
// the inbox the page shows at /inbox, a page of --limit items at a time.
func inboxCmd(ctx context.Context, sub string, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	var (
		c     config
		after string
		limit int
	)
	u := reviewUsages[sub]
	fs := flags(subcommand{name: "docs " + sub, args: u.args, does: u.does}, &c)
	fs.StringVar(&after, "after", "", "if set, the page after this position (the line that ends a page gives it)")
	fs.IntVar(&limit, "limit", 50, "how many items to print, at most "+strconv.Itoa(docstore.InboxPage))
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageError{"docs inbox takes no arguments; got " + Plural(len(pos), "argument")}
	}
	if limit < 1 || limit > docstore.InboxPage {
		return usageError{fmt.Sprintf("--limit: from 1 to %d; got %d", docstore.InboxPage, limit)}
	}
	file, mine, err := c.openSeen(ctx)
	if err != nil {
		return err
	}
	defer file.Close()
	var (
		box   docstore.Inbox
		names spaces.Names
	)
	err = docstore.New(file, c.space).View(ctx, func(r *docstore.Reader) (err error) {
		box, err = r.Inbox(c.me, mine, after, limit)
		names = r.Names()
		return err
	})
	if errors.Is(err, docstore.ErrBadPosition) {
		return usageError{fmt.Sprintf("--after: %q is no position in your inbox; the line that ends a page gives one", after)}
	}
	if err != nil {
		return err
	}
	if len(box.Items) == 0 {
		fmt.Fprintf(stderr, "Nothing waits for %s.\n", names.Show(spaces.Person(c.me)))
		return nil
	}
	if after == "" {
		verb := "wait"
		if box.Count == 1 {
			verb = "waits"
		}
		fmt.Fprintf(stdout, "%s %s for %s, newest first:\n", Plural(box.Count, "item"), verb, names.Show(spaces.Person(c.me)))
	}
	for _, it := range box.Items {
		where := it.Document.Title + " (" + it.Document.ID + ")"
		if len(mine) > 1 {
			where = it.Space + ": " + where
		}
		if pr := it.Proposal; pr != nil {
			fmt.Fprintf(stdout, "%s  change %d  %s by %s  %s  +%d \u2212%d\n", where, pr.Number, pr.Kind, pr.Author.Show(names), when(it.At), pr.Added, pr.Removed)
		} else {
			cm := it.Comment
			fmt.Fprintf(stdout, "%s  comment %d on lines %d-%d  by %s  %s\n", where, cm.Number, cm.From, cm.To, cm.Author.Show(names), when(it.At))
		}
		for _, l := range it.Gist {
			fmt.Fprintf(stdout, "    | %s\n", l)
		}
	}
	if box.Next != "" {
		fmt.Fprintf(stdout, "… more: docs inbox --after %s\n", box.Next)
	}
	return nil
}

package tools

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// The person's side of who wrote what and of the review of the agents' changes (compass-mcp
// docs blame, proposals, proposal, accept, decline, comment, comments). The command line's
// flags and argument checks are cmd/compass-mcp's (review.go); the store calls and what they
// say are here.

// Blame writes every line of a document with the version that last changed it.
func (p Terminal) Blame(name string) error {
	bl, err := p.Store.Blame(name)
	if err != nil {
		return p.Explain(err, name)
	}
	d := bl.Document
	fmt.Fprintf(p.Out, "%s (%s), version %d, %s, each with the version that last changed it:\n", d.Title, d.ID, d.Version, Plural(len(bl.Lines), "line"))
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
			head := fmt.Sprintf("%-*s %-*s %s%s %s", ver, fmt.Sprintf("v%d", v.Number), wide["kind"], v.Kind, who[r.Version], strings.Repeat(" ", wide["who"]-len([]rune(who[r.Version]))), v.At.Local().Format(TimeLayout))
			for i := range r.Count {
				n := r.First + i
				fmt.Fprintf(p.Out, "%*d  %s | %s\n", num, n, head, bl.Lines[n-1])
			}
		}
	})
}

// Proposals lists the open proposals of the document named name, or (name "") of every
// document that has any.
func (p Terminal) Proposals(name string) error {
	if name == "" {
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
		d, ps, err := p.Store.Proposals(name, before, 500)
		if err != nil {
			return p.Explain(err, name)
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

func (p Terminal) listProposals(d docstore.Document, ps []docstore.Proposal) error {
	fmt.Fprintf(p.Out, "%s (%s): %s, newest first:\n", d.Title, d.ID, Plural(d.Review.Open, "open proposal"))
	return p.proposalLines(ps)
}

func (p Terminal) proposalLines(ps []docstore.Proposal) error {
	return p.Store.Names(func(names spaces.Names) {
		for _, pr := range ps {
			fmt.Fprintf(p.Out, "  change %-4d %-7s %s  %s  +%d \u2212%d  against v%d\n", pr.Number, pr.Kind, pr.Author.Show(names), pr.At.Local().Format(TimeLayout), pr.Added, pr.Removed, pr.Base)
		}
	})
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
		return fmt.Errorf("%q (%s) has proposals 1 to %d: there's no proposal %d", none.Document.Title, none.Document.ID, none.Document.Review.Proposals, none.Asked)
	case errors.As(err, &decided):
		return fmt.Errorf("proposal %d of %q was %s already: nothing was changed", decided.Proposal.Number, decided.Document.Title, decided.Proposal.Status)
	case errors.Is(err, docstore.ErrNoReason):
		return err
	}
	return p.Explain(err, name)
}

// Proposal shows proposal n of a document: its diff against its base on Out; its status,
// and what accepting it would do to today's text, on Errs.
func (p Terminal) Proposal(name string, n int) error {
	pv, err := p.Store.Preview(name, n)
	if err != nil {
		return p.explainReview(err, name)
	}
	pr, d := pv.Proposal, pv.Document
	err = p.Store.Names(func(names spaces.Names) {
		fmt.Fprintf(p.Errs, "%s (%s) · proposal %d · %s by %s %s · +%d \u2212%d against version %d · %s\n", d.Title, d.ID, pr.Number, pr.Kind, pr.Author.Show(names), pr.At.Local().Format(TimeLayout), pr.Added, pr.Removed, pr.Base, statusLine(names, pr))
		if pr.Status != docstore.StatusOpen || pv.Base.Number == pv.Latest.Number {
			return
		}
		if len(pv.Conflicts) > 0 {
			fmt.Fprintf(p.Errs, "Version %d changed the same lines (%s): accepting it clashes; docs accept %s %d --mine or --theirs chooses, or --edit.\n", pv.Latest.Number, Plural(len(pv.Conflicts), "place"), d.ID, pr.Number)
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
	at := d.At.Local().Format(TimeLayout)
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
func (p Terminal) Accept(name string, n int, prefer linediff.Prefer, edited bool, base int, in io.Reader) error {
	var edit *docstore.Edit
	if edited {
		text, err := io.ReadAll(io.LimitReader(in, docstore.MaxText+1))
		if err != nil {
			return fmt.Errorf("reading the edited text from stdin: %w", err)
		}
		edit = &docstore.Edit{Text: string(text), Base: base}
	}
	saved, pr, err := p.Store.Accept(name, n, p.Me, edit, prefer)
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
		fmt.Fprintf(p.Out, "Accepted proposal %d of %q (%s)%s: that leaves the text as it is, so no new version (it stays at version %d).\n", pr.Number, d.Title, d.ID, strings.TrimSuffix(how, ","), d.Version)
		return nil
	}
	fmt.Fprintf(p.Out, "Accepted proposal %d of %q (%s)%s as version %d: +%d \u2212%d lines.\n", pr.Number, d.Title, d.ID, how, d.Version, saved.Added, saved.Removed)
	return nil
}

// Decline declines proposal n of a document with the person's reason.
func (p Terminal) Decline(name string, n int, why string) error {
	pr, err := p.Store.Decline(name, n, p.Me, why)
	if err != nil {
		return p.explainReview(err, name)
	}
	d, _ := p.Store.Find(name)
	fmt.Fprintf(p.Out, "Declined proposal %d of %q (%s). The agent's next read gives your reason: “%s”\n", pr.Number, d.Title, d.ID, pr.Decided.Why)
	return nil
}

// showAcceptClash says where a proposal clashes with the versions since its base, and how
// to choose.
func (p Terminal) showAcceptClash(c *docstore.ClashError, n int) {
	w := p.Errs
	fmt.Fprintf(w, "Nothing was saved: %q has moved on to version %d since proposal %d's base, version %d, and both changed the same lines:\n", c.Document.Title, c.Document.Version, n, c.Base)
	for i, k := range c.Conflicts {
		if i == 100 {
			fmt.Fprintf(w, "\n…and %d more clashing places.\n", len(c.Conflicts)-100)
			break
		}
		fmt.Fprintf(w, "\nClash %d:\n  version %d, %s:\n", i+1, c.Document.Version, Span(k.TheirsStart, len(k.Theirs)))
		for _, l := range k.Theirs {
			fmt.Fprintf(w, "    | %s\n", l)
		}
		fmt.Fprintf(w, "  the proposal, %s:\n", Span(k.MineStart, len(k.Mine)))
		for _, l := range k.Mine {
			fmt.Fprintf(w, "    | %s\n", l)
		}
	}
	fmt.Fprintf(w, "\nChoose: docs accept %s %d --mine (the proposal's lines win where both changed them) or --theirs (version %d's win); either way the other changes are merged. Or edit it: docs proposal %s %d shows it, and docs accept %s %d --edit --base %d < FILE takes your text, made from version %d.\n", c.Document.ID, n, c.Document.Version, c.Document.ID, n, c.Document.ID, n, c.Document.Version, c.Document.Version)
}

// Document finds the document named name, or says why not as a person reads it.
func (p Terminal) Document(name string) (docstore.Document, error) {
	d, err := p.Store.Find(name)
	if err != nil {
		return d, p.Explain(err, name)
	}
	return d, nil
}

// Comment comments on lines of document d (found with Document): c's Author is p.Me.
func (p Terminal) Comment(d docstore.Document, c docstore.NewComment) error {
	c.Author = p.Me
	made, err := p.Store.Comment(d.ID, c)
	if err != nil {
		return p.explainComment(err, d, 0)
	}
	fmt.Fprintf(p.Out, "Comment %d on %s of %q (%s), version %d. Agents see it in read_document.\n", made.Number, Span(made.From, made.To-made.From+1), d.Title, d.ID, made.Version)
	return nil
}

// Reply replies to comment n of document d.
func (p Terminal) Reply(d docstore.Document, n int, text string) error {
	r, err := p.Store.Reply(d.ID, n, text, p.Me)
	if err != nil {
		return p.explainComment(err, d, n)
	}
	fmt.Fprintf(p.Out, "Replied to comment %d of %q (%s) as comment %d.\n", r.ReplyTo, d.Title, d.ID, r.Number)
	return nil
}

// Resolve resolves comment n of document d, with text (if any) as a last reply.
func (p Terminal) Resolve(d docstore.Document, n int, text string) error {
	c, err := p.Store.Resolve(d.ID, n, text, p.Me)
	if err != nil {
		return p.explainComment(err, d, n)
	}
	fmt.Fprintf(p.Out, "Resolved comment %d of %q (%s).\n", c.Number, d.Title, d.ID)
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
func (p Terminal) Comments(name string) error {
	d, err := p.Document(name)
	if err != nil {
		return err
	}
	cr, err := p.Store.Comments(d.ID, 0, docstore.MaxOpenComments, docstore.MaxReplies)
	if err != nil {
		return err
	}
	if cr.Open == 0 {
		fmt.Fprintf(p.Errs, "No open comments on %q (%s).\n", d.Title, d.ID)
		return nil
	}
	fmt.Fprintf(p.Out, "%s (%s), version %d: %s\n", d.Title, d.ID, d.Version, Plural(cr.Open, "open comment"))
	return p.Store.Names(func(names spaces.Names) {
		for _, t := range cr.Threads {
			where := Span(t.Lines.From, t.Lines.To-t.Lines.From+1)
			if t.Lines.From == 0 {
				where = fmt.Sprintf("outdated since version %d, on %q", t.Outdated, t.Quote)
			}
			fmt.Fprintf(p.Out, "\n  %d · %s · %s %s\n", t.Number, where, t.Author.Show(names), t.At.Local().Format(TimeLayout))
			fmt.Fprintf(p.Out, "    %s\n", strings.ReplaceAll(t.Text, "\n", "\n    "))
			for _, r := range t.Replies {
				fmt.Fprintf(p.Out, "    ↳ %d · %s %s: %s\n", r.Number, r.Author.Show(names), r.At.Local().Format(TimeLayout), strings.ReplaceAll(r.Text, "\n", "\n      "))
			}
		}
	})
}

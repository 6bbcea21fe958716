package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/access"
	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// In review mode (Config.Review, or a token's access.Principal.Review) the writing tools
// keep an agent's changes as proposals for the person (docstore.Store.Proposing), and
// read_document tells the agent, after the text, what waits and what became of its own.

// NotesShown is how many open proposals, and decisions on the reader's, read_document
// lists at most: the rest are counted.
const NotesShown = 5

// reviewed reports whether the agent calling with ctx is reviewed: the server's review mode,
// or its token's.
func (s *Server) reviewed(ctx context.Context) bool {
	p, ok := access.FromContext(ctx)
	return s.cfg.Review || (ok && p.Review)
}

// writer is where an agent's changes go: proposals in review mode, else versions.
func (s *Server) writer(ctx context.Context) *docstore.Store {
	if s.reviewed(ctx) {
		return s.docs.Proposing()
	}
	return s.docs
}

// proposedAnswer is the writing tools' answer in review mode.
func (s *Server) proposedAnswer(saved docstore.Saved) string {
	p := saved.Proposal
	merged := ""
	if saved.Kind == docstore.KindMerge {
		merged = ", merged with the changes made since your version"
	}
	person := "the person"
	if p.Author.For != "" {
		person = saved.Names.ShowString(p.Author.For) // the names as the proposal's write read them
	}
	return fmt.Sprintf("Proposed %s change %d%s: %s, waiting for %s's review.", s.link(saved.Document), p.Number, merged, lines(saved.Added, saved.Removed), person)
}

// afterText puts blocks (each "" or lines without a final line break) after a read's text,
// a blank line before each: what read_document says after the text, in its order.
func afterText(text string, blocks ...string) string {
	for _, b := range blocks {
		if b == "" {
			continue
		}
		switch {
		case text == "" || strings.HasSuffix(text, "\n\n"):
		case strings.HasSuffix(text, "\n"):
			text += "\n"
		default:
			text += "\n\n"
		}
		text += b
	}
	return text
}

// proposalNotes is what read_document says of proposals after the text: the newest open
// ones, and what became of the reader's since its latest.
func (s *Server) proposalNotes(names spaces.Names, n docstore.Notes) string {
	if n.Open == 0 && len(n.Told) == 0 {
		return ""
	}
	var b strings.Builder
	if n.Open > 0 {
		if len(n.Proposals) < n.Open {
			fmt.Fprintf(&b, "Open proposals (%d of %d, newest first):", len(n.Proposals), n.Open)
		} else {
			fmt.Fprintf(&b, "Open proposals (%d):", n.Open)
		}
		for _, p := range n.Proposals {
			fmt.Fprintf(&b, "\n- change %d by %s · %s · %s", p.Number, by(names, p.Author), lines(p.Added, p.Removed), age(p.At))
		}
		if len(n.Proposals) < n.Open {
			fmt.Fprintf(&b, "\n%d more: the person's page lists them all.", n.Open-len(n.Proposals))
		}
		b.WriteString("\nread_document with proposal: N shows one as a diff.")
	}
	if len(n.Told) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("What became of your proposals:")
		for _, p := range n.Told {
			b.WriteString("\n- " + decision(names, p))
		}
		if n.ToldMore > 0 {
			fmt.Fprintf(&b, "\n…and %d more decided.", n.ToldMore)
		}
	}
	return b.String()
}

// decision says what became of a decided proposal: "change 2 was declined by Ana: “Not now.”".
func decision(names spaces.Names, p docstore.Proposal) string {
	d := p.Decided
	who := names.ShowString(d.By)
	switch p.Status {
	case docstore.StatusDeclined:
		return fmt.Sprintf("change %d was declined by %s %s: “%s”", p.Number, who, when(d.At), d.Why)
	case docstore.StatusMerged:
		how := "merged with the changes made since"
		if d.Edited {
			how = "edited and merged with the changes made since"
		}
		return fmt.Sprintf("change %d was %s, by %s %s, as version %d.", p.Number, how, who, when(d.At), d.Version)
	}
	how := "accepted"
	if d.Edited {
		how = "accepted after editing"
	}
	return fmt.Sprintf("change %d was %s by %s %s, as version %d.", p.Number, how, who, when(d.At), d.Version)
}

// age says how long ago t was, roughly: "just now", "5 min ago", "3 h ago", "2 days ago".
func age(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
}

// showProposal answers read_document with proposal: that proposal's change as a unified
// diff against the version it was made on, with its status. What it says is read in one
// snapshot; the diff is made after it, holding no transaction (a connection, on PostgreSQL).
func (s *Server) showProposal(ctx context.Context, name string, n int) (string, error) {
	if n < 1 {
		return "", refusef("read_document's proposal is a proposal's number (change N), 1 or more; it got %d.", n)
	}
	var (
		b       strings.Builder
		p       docstore.Proposal
		base    docstore.Version
		refused error
	)
	err := s.docs.View(ctx, func(r *docstore.Reader) error {
		b.Reset()
		refused = nil
		d, pr, bv, err := r.Proposal(name, n)
		var none *docstore.NoProposalError
		switch {
		case errors.As(err, &none):
			if none.Document.Review == nil || none.Document.Review.Proposals == 0 {
				refused = refusef("%s has no proposals: there's no change %d.", s.link(none.Document), n)
			} else {
				refused = refusef("%s has proposals 1 to %d: there's no change %d.", s.link(none.Document), none.Document.Review.Proposals, n)
			}
			return nil
		case err != nil:
			return err
		}
		p, base = pr, bv
		names := r.Names()
		fmt.Fprintf(&b, "%s · change %d by %s %s · %s against version %d", s.link(d), p.Number, by(names, p.Author), when(p.At), lines(p.Added, p.Removed), p.Base)
		if d.Version != p.Base {
			fmt.Fprintf(&b, " (now version %d)", d.Version)
		}
		if p.Status == docstore.StatusOpen {
			person := "the person"
			if p.Author.For != "" {
				person = names.ShowString(p.Author.For)
			}
			fmt.Fprintf(&b, " · open, waiting for %s's review", person)
		} else {
			b.WriteString(" · " + strings.TrimSuffix(strings.TrimPrefix(decision(names, p), fmt.Sprintf("change %d was ", p.Number)), "."))
		}
		return nil
	})
	switch {
	case err != nil:
		return "", s.explain(err, name)
	case refused != nil:
		return "", refused
	}
	diff := linediff.Unified(fmt.Sprintf("%s v%d", base.Title, base.Number), fmt.Sprintf("%s change %d", p.Title, p.Number), base.Text, p.Text, 3)
	if diff == "" {
		b.WriteString("\n\nIt changes only the title, to “" + p.Title + "”.")
	} else {
		b.WriteString("\n\n" + quoteFenced("diff", strings.TrimSuffix(diff, "\n")))
	}
	return b.String(), nil
}

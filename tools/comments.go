package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// comment_document lets an agent comment on lines, answer a comment, or resolve one; the open
// comments are listed by read_document after the text, at their lines as of the version read.

type commentDocumentArgs struct {
	Document string `arg:"document,required" about:"Title, id or link."`
	Lines    string `arg:"lines" about:"Of the latest version: 4-6."`
	Text     string `arg:"text" about:"The comment or reply."`
	ReplyTo  *int   `arg:"reply_to" about:"A comment's number."`
	Resolve  *int   `arg:"resolve" about:"Your comment's number."`
}

func (s *Server) commentDocument(ctx context.Context, a *commentDocumentArgs) (string, error) {
	given := 0
	for _, set := range []bool{a.Lines != "", a.ReplyTo != nil, a.Resolve != nil} {
		if set {
			given++
		}
	}
	if given != 1 {
		return "", refusef("comment_document takes one of lines (a new comment, with text), reply_to (with text) or resolve.")
	}
	by := s.author(ctx)
	// The document is found by the comment's own write, which returns it with the names
	// (docstore.Commented): no read of its own first.
	switch {
	case a.Lines != "":
		if strings.TrimSpace(a.Text) == "" {
			return "", refusef("comment_document needs text for a comment on lines: what you want to say or ask.")
		}
		r, err := docstore.ParseLineRange(a.Lines)
		if err != nil {
			return "", refusef("comment_document's lines %s: give 120-180, 120- or 7.", strings.TrimPrefix(err.Error(), docstore.ErrBadRange.Error()+": "))
		}
		made, err := s.docs.Comment(ctx, a.Document, docstore.NewComment{Lines: r, Text: a.Text, Author: by, Asks: by.For})
		if err != nil {
			return "", s.commentRefusal(err, a.Document, made.Document, 0)
		}
		s.commentView(ctx, made)
		c := made.Comment
		asks := "the person"
		if by.For != "" {
			asks = made.Names.ShowString(by.For)
		}
		return fmt.Sprintf("Comment %d on %s of %s, for %s to answer; the answers show in read_document.", c.Number, Span(c.From, c.To-c.From+1), s.link(made.Document), asks), nil
	case a.ReplyTo != nil:
		if strings.TrimSpace(a.Text) == "" {
			return "", refusef("comment_document needs text to reply with.")
		}
		made, err := s.docs.Reply(ctx, a.Document, *a.ReplyTo, a.Text, by)
		if err != nil {
			return "", s.commentRefusal(err, a.Document, made.Document, *a.ReplyTo)
		}
		s.commentView(ctx, made)
		return fmt.Sprintf("Replied to comment %d of %s (as comment %d).", made.Comment.ReplyTo, s.link(made.Document), made.Comment.Number), nil
	}
	made, err := s.docs.Resolve(ctx, a.Document, *a.Resolve, a.Text, by)
	if err != nil {
		return "", s.commentRefusal(err, a.Document, made.Document, *a.Resolve)
	}
	s.commentView(ctx, made)
	if strings.TrimSpace(a.Text) != "" {
		return fmt.Sprintf("Replied to comment %d of %s and resolved it.", made.Comment.Number, s.link(made.Document)), nil
	}
	return fmt.Sprintf("Resolved comment %d of %s.", made.Comment.Number, s.link(made.Document)), nil
}

// commentRefusal says what the model can do about a comment on the document named (d, once
// found; n, the comment, when it names one) that was refused.
func (s *Server) commentRefusal(err error, named string, d docstore.Document, n int) error {
	var nolines *docstore.NoLinesError
	msg := err.Error()
	if i := strings.Index(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	switch {
	case errors.Is(err, docstore.ErrBadComment): // refused before any document was looked for
		return refusef("That comment won't do: %s. Nothing was saved.", msg)
	case d.ID == "":
		return s.explain(err, named) // not found, or not one document
	case errors.As(err, &nolines):
		return refusef("%s has %d lines: there's no line %d.", s.link(d), nolines.Total, nolines.Asked)
	case errors.Is(err, docstore.ErrNoComment):
		return refusef("%s has no comment %d: read_document lists the open ones.", s.link(d), n)
	case errors.Is(err, docstore.ErrResolved):
		return refusef("In %s, %s. Nothing was changed.", s.link(d), msg)
	case errors.Is(err, docstore.ErrNotYours):
		return refusef("Comment %d of %s isn't yours to resolve: a person resolves a person's comment, on their page, and an agent only its own. Reply instead (reply_to), and say there if it is done.", n, s.link(d))
	case errors.Is(err, docstore.ErrTooManyComments):
		return refusef("In %s: %s.", s.link(d), msg)
	}
	return s.explain(err, named)
}

// commentNotes is what read_document says of the open comments after the text: each at its
// lines as of the version read (or outdated, with what its lines said), with its latest
// replies.
func (s *Server) commentNotes(names spaces.Names, n docstore.Notes) string {
	cr := n.Comments
	if len(cr.Threads) == 0 {
		return ""
	}
	var b strings.Builder
	if cr.More > 0 {
		fmt.Fprintf(&b, "Open comments (%d of %d):", len(cr.Threads), cr.Open)
	} else {
		fmt.Fprintf(&b, "Open comments (%d):", len(cr.Threads))
	}
	for _, t := range cr.Threads {
		where := "on " + Span(t.Lines.From, t.Lines.To-t.Lines.From+1)
		if t.Lines.From == 0 {
			where = fmt.Sprintf("outdated (its lines were changed in version %d; they said “%s”)", t.Outdated, gist(t.Quote, 120))
		}
		fmt.Fprintf(&b, "\n- comment %d %s · %s: %s", t.Number, where, by(names, t.Author), gist(t.Text, 500))
		if t.More > 0 {
			fmt.Fprintf(&b, "\n  (%d earlier replies)", t.More)
		}
		for _, r := range t.Replies {
			fmt.Fprintf(&b, "\n  - comment %d · %s: %s", r.Number, by(names, r.Author), gist(r.Text, 500))
		}
	}
	if cr.More > 0 {
		fmt.Fprintf(&b, "\n%d more: the person's page lists them all.", cr.More)
	}
	b.WriteString("\ncomment_document replies to one (reply_to: N), or resolves one of yours (resolve: N).")
	return b.String()
}

package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/compass-mcp/compass-mcp/threads"
)

type listConversationsArgs struct {
	Limit *int   `arg:"limit" about:"Default 20, at most 500."`
	Query string `arg:"query" about:"Words and \"quoted phrases\"."`
}

// conversations runs fn on one snapshot of the space's conversations (threads.Store.View),
// and gives its answer.
func (s *Server) conversations(ctx context.Context, fn func(r *threads.Reader) (string, error)) (string, error) {
	return threads.ReadIn(ctx, s.threads, fn)
}

func (s *Server) listConversations(ctx context.Context, a *listConversationsArgs) (string, error) {
	limit, err := limitOf("list_conversations", a.Limit, 20)
	if err != nil {
		return "", err
	}
	return s.conversations(ctx, func(r *threads.Reader) (string, error) {
		if strings.TrimSpace(a.Query) != "" {
			return s.searchConversations(r, a.Query, limit)
		}
		return s.recentConversations(r, limit)
	})
}

// recentConversations is list_conversations without a query: the latest first.
func (s *Server) recentConversations(r *threads.Reader, limit int) (string, error) {
	convs, err := r.Recent(limit+1, s.cfg.Thread)
	if err != nil {
		return "", err
	}
	if len(convs) == 0 {
		return "No other conversations in this space yet.", nil
	}
	more := len(convs) > limit
	if more {
		convs = convs[:limit]
	}
	var b strings.Builder
	for _, c := range convs {
		// Recent leaves out conversations with nothing to read, so Last is a message's time.
		fmt.Fprintf(&b, "- %s%s · %s · last %s\n", c.ID, quotedTitle(c.Title), count(c.Count, "message"), when(c.Last))
		opened := gist(c.First.Text, 100)
		if opened == "" {
			opened = "(nothing to read)"
		}
		fmt.Fprintf(&b, "  opened: %s\n", opened)
		if c.Count > 1 && c.Latest.ID != c.First.ID {
			fmt.Fprintf(&b, "  latest: %s\n", gist(c.Latest.Text, 100))
		}
	}
	if more {
		fmt.Fprintf(&b, "More conversations are here: call list_conversations with a larger limit (at most %d).\n", MaxListLimit)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

type readConversationArgs struct {
	Conversation string `arg:"conversation,required" about:"Its id, from list_conversations."`
	Limit        *int   `arg:"limit" about:"Messages, default 30, at most 500."`
	Before       string `arg:"before" about:"A message id: the page before it."`
}

func (s *Server) readConversation(ctx context.Context, a *readConversationArgs) (string, error) {
	limit, err := limitOf("read_conversation", a.Limit, 30)
	if err != nil {
		return "", err
	}
	return s.conversations(ctx, func(r *threads.Reader) (string, error) { return s.conversationPage(r, a, limit) })
}

// conversationPage is read_conversation: a page of a conversation's messages.
func (s *Server) conversationPage(r *threads.Reader, a *readConversationArgs, limit int) (string, error) {
	notFound := refusef("No conversation %q in this space that you can read.", short(a.Conversation))
	c, err := r.Get(a.Conversation)
	var (
		msgs []threads.Message
		more bool
	)
	if err == nil {
		msgs, more, err = r.Page(a.Conversation, limit, a.Before)
	}
	switch {
	case errors.Is(err, threads.ErrNotFound) || errors.Is(err, threads.ErrBadID):
		return "", notFound
	case errors.Is(err, threads.ErrBadBefore):
		return "", refusef("read_conversation's before must be the id of a message of this conversation, as the last line of a page gives it; it got %q. Leave it out to read the latest messages.", short(a.Before))
	case err != nil:
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Conversation %s%s:\n", c.ID, quotedTitle(c.Title))
	if len(msgs) == 0 {
		b.WriteString("(nothing to read)\n")
	}
	names := r.Names()
	for _, m := range msgs {
		who := oneLine(names.ShowString(m.From))
		if m.To != "" {
			who += " → " + oneLine(names.ShowString(m.To))
		}
		fmt.Fprintf(&b, "[%s] %s: %s\n", when(m.At), who, indented(m.Text))
	}
	if more && len(msgs) > 0 {
		fmt.Fprintf(&b, "Older messages remain: call read_conversation with before: %q to read them.\n", msgs[0].ID)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// quotedTitle is ` “Title”`, or nothing for a conversation without a title.
func quotedTitle(title string) string {
	if strings.TrimSpace(title) == "" {
		return ""
	}
	return " “" + gist(title, 80) + "”"
}

// count is "1 message" or "3 messages".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// isBreak reports whether r ends a line wherever the answer may be shown: not only \n but
// \r, vertical tab, form feed, NEL and the Unicode line and paragraph separators.
func isBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// indented gives a message's text with every line after the first indented, whatever
// breaks it (\r\n counts once), so that no message can look like another's line
// ("[time] boss: approved"). Breaks become \n.
func indented(text string) string {
	text = strings.TrimRightFunc(text, isBreak)
	if !strings.ContainsFunc(text, isBreak) {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + len(text)/8)
	prev := rune(0)
	for _, r := range text {
		switch {
		case r == '\n' && prev == '\r':
		case isBreak(r):
			b.WriteString("\n  ")
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

// oneLine puts a name on one line: every break or other control character becomes a space.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if isBreak(r) || unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

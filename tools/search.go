package tools

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/search"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

// queryRefusal says why a query can't be searched for.
func queryRefusal(tool string, err error) error {
	if errors.Is(err, search.ErrLongQuery) {
		return refusef("%s's query is too long (%s): give the few words that matter.", tool, strings.TrimPrefix(err.Error(), "bad query: "+search.ErrLongQuery.Error()+": "))
	}
	return refusef("%s's query has no word to look for: give words, or \"a phrase\" in double quotes.", tool)
}

// terms is the query as answers show it: "launch" and "course page".
func terms(q search.Query) string {
	ts := make([]string, len(q.Terms))
	for i, t := range q.Terms {
		ts[i] = strconv.Quote(strings.Trim(t.Text, `"`))
	}
	switch len(ts) {
	case 1:
		return ts[0]
	case 2:
		return ts[0] + " and " + ts[1]
	}
	return strings.Join(ts[:len(ts)-1], ", ") + " and " + ts[len(ts)-1]
}

func (s *Server) searchDocuments(query string, limit int) (string, error) {
	res, err := s.docs.Search(query, limit)
	if errors.Is(err, docstore.ErrQuery) {
		return "", queryRefusal("list_documents", err)
	} else if err != nil {
		return "", err
	}
	if res.Total == 0 {
		return fmt.Sprintf("No document here has %s in its title or text. Try fewer or other words, or list_documents without query to see them all.", terms(res.Query)), nil
	}
	var b strings.Builder
	if len(res.Found) < res.Total {
		fmt.Fprintf(&b, "Documents with %s (%d of %d), best first:\n", terms(res.Query), len(res.Found), res.Total)
	} else {
		fmt.Fprintf(&b, "Documents with %s (%d), best first:\n", terms(res.Query), res.Total)
	}
	err = s.names(func(names spaces.Names) {
		for _, f := range res.Found {
			d := f.Document
			fmt.Fprintf(&b, "- %s · id %s · version %d · %d bytes · saved by %s %s\n", s.link(d), d.ID, d.Version, d.Bytes, by(names, d.Author), when(d.Saved))
			for _, l := range f.Hit.Lines {
				fmt.Fprintf(&b, "  line %d: %s\n", l.Number, l.Text)
			}
			if len(f.Hit.Lines) == 0 {
				b.WriteString("  (found in the title)\n")
			}
		}
	})
	if len(res.Found) < res.Total {
		fmt.Fprintf(&b, "%d more: call list_documents with a larger limit (at most %d), or more words.\n", res.Total-len(res.Found), MaxListLimit)
	}
	return strings.TrimSuffix(b.String(), "\n"), err
}

// someLines answers read_document with lines: those lines of a version, numbered.
func (s *Server) someLines(name string, version int, lines string) (string, error) {
	r, err := docstore.ParseLineRange(lines)
	if err != nil {
		return "", refusef("read_document's lines %q won't do: %s. Give 120-180, 120- (to the end), -40 (the first 40) or 7.", short(lines), strings.TrimPrefix(err.Error(), docstore.ErrBadRange.Error()+": "))
	}
	d, v, part, err := s.docs.ReadLines(name, version, r)
	var none *docstore.NoLinesError
	if errors.As(err, &none) {
		if none.Total == 0 {
			return "", refusef("%s is empty at version %d: there are no lines to read.", d.Title, v.Number)
		}
		return "", refusef("%s has %d lines at version %d: there's no line %d.", d.Title, none.Total, v.Number, none.Asked)
	} else if err != nil {
		return "", s.explain(err, name)
	}
	head, err := s.versionHead(d, v)
	var b strings.Builder
	if part.First == part.Last {
		fmt.Fprintf(&b, "%s · line %d of %d\n\n", head, part.First, part.Total)
	} else {
		fmt.Fprintf(&b, "%s · lines %d-%d of %d\n\n", head, part.First, part.Last, part.Total)
	}
	numbered(&b, part)
	return strings.TrimSuffix(b.String(), "\n"), err
}

func (s *Server) searchConversations(query string, limit int) (string, error) {
	res, err := s.threads.Search(query, limit, s.cfg.Thread)
	if errors.Is(err, threads.ErrQuery) {
		return "", queryRefusal("list_conversations", err)
	} else if err != nil {
		return "", err
	}
	if res.Total == 0 {
		return fmt.Sprintf("No other conversation here has %s in what was said. Try fewer or other words, or list_conversations without query.", terms(res.Query)), nil
	}
	var b strings.Builder
	if len(res.Found) < res.Total {
		fmt.Fprintf(&b, "Conversations with %s (%d of %d), best first:\n", terms(res.Query), len(res.Found), res.Total)
	} else {
		fmt.Fprintf(&b, "Conversations with %s (%d), best first:\n", terms(res.Query), res.Total)
	}
	err = s.names(func(names spaces.Names) {
		for _, f := range res.Found {
			c := f.Conversation
			last := c.Last
			if last.IsZero() {
				last = c.Created // nothing said yet but private steps
			}
			fmt.Fprintf(&b, "- %s%s · %s · last %s\n", c.ID, quotedTitle(c.Title), count(c.Count, "message"), when(last))
			for _, l := range f.Lines {
				fmt.Fprintf(&b, "  [%s] %s: %s\n", when(l.Message.At), names.ShowString(l.Message.From), l.Line.Text)
			}
			if len(f.Lines) == 0 {
				b.WriteString("  (found in the title)\n")
			}
		}
	})
	if len(res.Found) < res.Total {
		fmt.Fprintf(&b, "%d more: call list_conversations with a larger limit (at most %d), or more words.\n", res.Total-len(res.Found), MaxListLimit)
	}
	b.WriteString("Read one with read_conversation (its id).\n")
	return strings.TrimSuffix(b.String(), "\n"), err
}

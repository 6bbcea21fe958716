package web

import (
	"errors"
	"net/http"
	"time"

	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

// ConversationsShown is how many conversations the list shows, and messages a page.
const ConversationsShown = 100

type convRow struct {
	ID, Title, Opened, Latest string
	Count                     int
	Last                      time.Time
}

func (s *Site) conversations(w http.ResponseWriter, r *http.Request, p who) {
	sp, ok := s.space(w, r, p)
	if !ok {
		return
	}
	convs, err := threads.New(s.db, sp).Recent(ConversationsShown, "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]convRow, len(convs))
	pg := p.in(sp, "Conversations", "convs")
	s.names(func(n spaces.Names) {
		for i, c := range convs {
			out[i] = convRow{ID: c.ID, Title: c.Title, Count: c.Count, Last: c.Last, Opened: line(n, c.First)}
			if c.Latest.ID != c.First.ID {
				out[i].Latest = line(n, c.Latest)
			}
		}
		pg.Who = n.Show(spaces.Person(p.Person))
	})
	pg.Data = out
	s.render(w, r, http.StatusOK, "conversations", pg)
}

func line(n spaces.Names, m threads.Message) string {
	if m.ID == "" {
		return ""
	}
	return n.ShowString(m.From) + ": " + gist(m.Text, 160)
}

type messageView struct {
	At       time.Time
	From, To string
	Agent    bool
	Text     string
}

// conversation shows a page of a conversation's messages, oldest first; private steps
// are never among them (threads.Page leaves them out).
func (s *Site) conversation(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	convs, sp, c, err := s.threadsOf(r, p, id)
	if errors.Is(err, threads.ErrNotFound) {
		s.problem(w, r, http.StatusNotFound, "No such conversation", "None of your spaces has a conversation at this address.")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	msgs, more, err := convs.Page(id, ConversationsShown, r.URL.Query().Get("before"))
	if errors.Is(err, threads.ErrBadBefore) {
		msgs, more, err = convs.Page(id, ConversationsShown, "")
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := make([]messageView, 0, len(msgs))
	pg := p.in(sp, c.Title, "convs")
	if pg.Title == "" {
		pg.Title = "Conversation"
	}
	s.names(func(n spaces.Names) {
		for _, m := range msgs {
			if m.Private {
				continue
			}
			mv := messageView{At: m.At, From: n.ShowString(m.From), Text: m.Text}
			if a, err := spaces.ParseActor(m.From); err == nil {
				mv.Agent = a.Agent
			}
			if m.To != "" {
				mv.To = n.ShowString(m.To)
			}
			out = append(out, mv)
		}
		pg.Who = n.Show(spaces.Person(p.Person))
	})
	before := ""
	if more && len(msgs) > 0 {
		before = msgs[0].ID
	}
	pg.Data = struct {
		Conv     threads.Conversation
		Messages []messageView
		Before   string
	}{c, out, before}
	s.render(w, r, http.StatusOK, "conversation", pg)
}

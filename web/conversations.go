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
	pg := p.in(sp, "Conversations", "convs")
	var out []convRow
	err := threads.New(s.db, sp).View(r.Context(), func(rd *threads.Reader) error {
		convs, err := rd.Recent(ConversationsShown, "")
		if err != nil {
			return err
		}
		out = make([]convRow, len(convs))
		n := rd.Names()
		for i, c := range convs {
			out[i] = convRow{ID: c.ID, Title: c.Title, Count: c.Count, Last: c.Last, Opened: line(n, c.First)}
			if c.Latest.ID != c.First.ID {
				out[i].Latest = line(n, c.Latest)
			}
		}
		pg.Who = n.Show(spaces.Person(p.Person))
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
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
	var (
		c      threads.Conversation
		out    []messageView
		before string
		who    string
	)
	sp, err := s.viewThread(r, p, id, func(rd *threads.Reader, got threads.Conversation) error {
		c, out, before = got, nil, ""
		msgs, more, err := rd.Page(id, ConversationsShown, r.URL.Query().Get("before"))
		if errors.Is(err, threads.ErrBadBefore) {
			msgs, more, err = rd.Page(id, ConversationsShown, "")
		}
		if err != nil {
			return err
		}
		n := rd.Names()
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
		who = n.Show(spaces.Person(p.Person))
		if more && len(msgs) > 0 {
			before = msgs[0].ID
		}
		return nil
	})
	if errors.Is(err, threads.ErrNotFound) {
		s.problem(w, r, http.StatusNotFound, "No such conversation", "None of your spaces has a conversation at this address.")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	pg := p.in(sp, c.Title, "convs")
	if pg.Title == "" {
		pg.Title = "Conversation"
	}
	pg.Who = who
	pg.Data = struct {
		Conv     threads.Conversation
		Messages []messageView
		Before   string
	}{c, out, before}
	s.render(w, r, http.StatusOK, "conversation", pg)
}

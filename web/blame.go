package web

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/spaces"
	"github.com/compass-mcp/compass-mcp/threads"
)

// BlameLines is how many lines one page of a blame shows: a document of millions of lines
// is shown a page at a time, its blame worked out once a version (blameCache), and each
// page costs its own lines.
const BlameLines = 2000

type blameRun struct {
	Version  int
	Kind     docstore.Kind
	By       string
	At       time.Time
	Mark     int // which author's run this is: 0 and 1 alternate as the author changes
	NewBy    bool
	Lines    []blameLine
	Previous int
}

type blameLine struct {
	N    int
	Text string
}

type blameView struct {
	Doc        docstore.Document
	Runs       []blameRun
	Total      int
	From, To   int // the lines shown
	Prev, Next int // where the pages before and after start; 0 when none
	Whys       []blameWhy
}

// blameWhy is why an agent's version the page shows was made (threads.Reader.Why).
type blameWhy struct {
	Version int
	Why     *whyView
}

// reviewRoutes are the routes of who wrote what, and of the review of the agents'
// changes: blame here, proposals and comments in their files.
func (s *Site) reviewRoutes(in func(string, func(http.ResponseWriter, *http.Request, who))) {
	in("GET /document/{id}/blame", s.blame)
	s.proposalRoutes(in)
	s.commentRoutes(in)
}

// blame shows every line of the latest version with the version that last changed it,
// each run of lines one version made marked, linked to that version's diff.
func (s *Site) blame(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	store, d, err := s.byID(r, p, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	bl, err := s.blames.blame(r.Context(), store, d)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	from := max(atoiOr(r.URL.Query().Get("from"), 1), 1)
	v := blameView{Doc: bl.Document, Total: len(bl.Lines), From: from, To: min(from+BlameLines-1, len(bl.Lines))}
	if from > 1 {
		v.Prev = max(from-BlameLines, 1)
	}
	if v.To < v.Total {
		v.Next = v.To + 1
	}
	pg := p.in(store.Space(), "Who wrote "+bl.Document.Title, "docs")
	n := bl.Names
	// Only the window's runs: the first that reaches From, found by its place, and those
	// after it up to To. The marks alternate from the window's first run.
	first, _ := slices.BinarySearchFunc(bl.Runs, v.From, func(run docstore.Run, line int) int {
		return cmp.Compare(run.First+run.Count-1, line)
	})
	mark, lastBy := 0, ""
	for _, run := range bl.Runs[first:] {
		if run.First > v.To {
			break
		}
		ver := bl.Versions[run.Version]
		by := byWhom(n, ver.Author)
		if lastBy != "" && by != lastBy {
			mark = 1 - mark
		}
		newBy := by != lastBy
		lastBy = by
		lo, hi := max(run.First, v.From), min(run.First+run.Count-1, v.To)
		if lo > hi {
			continue
		}
		br := blameRun{Version: run.Version, Kind: ver.Kind, By: by, At: ver.At, Mark: mark, NewBy: newBy || lo == v.From, Previous: run.Version - 1}
		for i := lo; i <= hi; i++ {
			br.Lines = append(br.Lines, blameLine{N: i, Text: bl.Lines[i-1]})
		}
		v.Runs = append(v.Runs, br)
	}
	// Why the agents' versions the page shows were made, where a conversation of the space
	// says: one read of the space's conversations, for at most the page's runs.
	var asked []int
	for _, run := range v.Runs {
		if ver := bl.Versions[run.Version]; strings.HasPrefix(ver.Author.By, "agent:") && !slices.Contains(asked, run.Version) {
			asked = append(asked, run.Version)
		}
	}
	if len(asked) > 0 {
		slices.Sort(asked)
		err := threads.New(s.db, store.Space()).View(r.Context(), func(rd *threads.Reader) error {
			v.Whys = v.Whys[:0]
			for _, ver := range asked {
				w, ok, err := rd.Why(bl.Document.ID, ver)
				if err != nil {
					return err
				}
				if ok {
					v.Whys = append(v.Whys, blameWhy{Version: ver, Why: &whyView{Text: w.Say(n), Href: "/conversation/" + url.PathEscape(w.Conversation.ID) + "?space=" + url.QueryEscape(store.Space())}})
				}
			}
			return nil
		})
		if err != nil {
			s.log.Error("reading why versions were made", "document", bl.Document.ID, "err", err)
		}
	}
	pg.Who = n.Show(spaces.Person(p.Person))
	pg.Data = &v
	s.render(w, r, http.StatusOK, "blame", pg)
}

package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/linediff"
	"github.com/compass-mcp/compass-mcp/spaces"
)

// The person decides on the agents' proposals here: the document's banner lists the open
// ones, a proposal's page shows it against its base and against today's text, and its forms
// accept it (merged as the person's own save would be; a clash is the editor's clash page,
// both sides kept), accept it after editing, or decline it with a reason.

// Bounds on what a proposal's page shows, whatever the proposal's size.
const (
	// ProposalsPage is how many open proposals one page of the list shows.
	ProposalsPage = 50
	// BannerProposals is how many the document's banner names.
	BannerProposals = 5
	// DiffRows is the most rows one diff on a proposal's page shows.
	DiffRows = 4000
	// ClashLines is the most lines of each side a clash region shows there, and
	// ClashRegions the most regions.
	ClashLines   = 200
	ClashRegions = 100
)

func (s *Site) proposalRoutes(in func(string, func(http.ResponseWriter, *http.Request, who))) {
	in("GET /document/{id}/proposals", s.proposals)
	in("GET /document/{id}/proposal/{n}", s.proposal)
	in("GET /document/{id}/proposal/{n}/edit", s.proposalEdit)
	in("POST /document/{id}/proposal/{n}/accept", s.accept)
	in("POST /document/{id}/proposal/{n}/decline", s.decline)
}

type proposalRow struct {
	Number, Added, Removed, Base int
	Kind                         docstore.Kind
	By                           string
	At                           time.Time
	Note                         string // where a proposal no agent asked for came from (noteShown)
}

func proposalRows(n spaces.Names, ps []docstore.Proposal) []proposalRow {
	out := make([]proposalRow, len(ps))
	for i, p := range ps {
		out[i] = proposalRow{Number: p.Number, Added: p.Added, Removed: p.Removed, Base: p.Base, Kind: p.Kind, By: byWhom(n, p.Author), At: p.At, Note: noteShown(p.Note)}
	}
	return out
}

// NoteBytes is about the most of a proposal's Note the pages show: a folder's sync writes
// a sentence ("kept from the space when the folder joined: …"), but the store takes any.
const NoteBytes = 300

// noteShown is a proposal's Note as the pages show it (escaped, as every text is): cut
// at about NoteBytes.
func noteShown(note string) string { return cutText(note, NoteBytes) }

// cutText is s cut at about n bytes, on a character's boundary, with an ellipsis when cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + "…"
}

// banner is what the document's view says of its open proposals.
type banner struct {
	Open      int
	Proposals []proposalRow
}

// bannerProposals reads d's open proposals for its banner (none, for a document without any).
func bannerProposals(rd *docstore.Reader, d docstore.Document) ([]docstore.Proposal, error) {
	if d.Review == nil || d.Review.Open == 0 {
		return nil, nil
	}
	_, ps, err := rd.Proposals(d.ID, 0, BannerProposals)
	return ps, err
}

// bannerOf is d's banner of its open proposals ps (nil, for a document without any).
func bannerOf(n spaces.Names, d docstore.Document, ps []docstore.Proposal) *banner {
	if d.Review == nil || d.Review.Open == 0 {
		return nil
	}
	return &banner{Open: d.Review.Open, Proposals: proposalRows(n, ps)}
}

// proposals lists a document's open proposals, newest first, a page at a time (?before=N).
func (s *Site) proposals(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	before := atoiOr(r.URL.Query().Get("before"), 0)
	type view struct {
		Doc       docstore.Document
		Open      int
		Proposals []proposalRow
		Next      int
		First     bool
	}
	var (
		v  view
		me string
	)
	store, err := s.viewDoc(r, p, id, func(rd *docstore.Reader) error {
		if _, err := findByID(rd, id); err != nil {
			return err
		}
		d, ps, err := rd.Proposals(id, before, ProposalsPage+1)
		if err != nil {
			return err
		}
		v = view{Doc: d, First: before == 0}
		if d.Review != nil {
			v.Open = d.Review.Open
		}
		if len(ps) > ProposalsPage {
			ps = ps[:ProposalsPage]
			v.Next = ps[len(ps)-1].Number
		}
		n := rd.Names()
		v.Proposals, me = proposalRows(n, ps), n.Show(spaces.Person(p.Person))
		return nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	pg := p.in(store.Space(), "Proposals for "+v.Doc.Title, "docs")
	pg.Who = me
	pg.Data = &v
	s.render(w, r, http.StatusOK, "proposals", pg)
}

type proposalView struct {
	Doc          docstore.Document
	P            proposalRow
	Title        string // the title it gives, when it changes the title
	Status       docstore.Status
	Decided      string // who decided what, when
	Why          string
	Version      int // the version accepting it made
	Against      []diffLine
	AgainstCut   int // rows of Against not shown
	Today        []diffLine
	TodayCut     int
	Latest       int
	Clash        []clashRegion
	ClashMore    int
	Problem      string
	Notice       string
	WaitingFor   string
	ChangesTitle bool
}

// proposal shows a proposal: against its base, against today's text (what accepting it
// would make of it, or where it clashes), and the person's choices.
func (s *Site) proposal(w http.ResponseWriter, r *http.Request, p who) {
	s.showProposal(w, r, p, http.StatusOK, "")
}

// preview reads the proposal the request names (/document/{id}/proposal/{n}) with what the
// page shows of it, and people's names, in one snapshot; when it can't, it answers the
// request and returns false.
func (s *Site) preview(w http.ResponseWriter, r *http.Request, p who) (*docstore.Store, docstore.Preview, spaces.Names, bool) {
	id := r.PathValue("id")
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		s.problem(w, r, http.StatusNotFound, "No such proposal", "A proposal is a number, 1 or more.")
		return nil, docstore.Preview{}, spaces.Names{}, false
	}
	var (
		pv       docstore.Preview
		names    spaces.Names
		notFound bool
	)
	store, err := s.viewDoc(r, p, id, func(rd *docstore.Reader) (err error) {
		if _, err := findByID(rd, id); err != nil {
			notFound = true
			return err
		}
		notFound = false
		if pv, err = rd.Preview(id, n); err == nil {
			names = rd.Names()
		}
		return err
	})
	switch {
	case err != nil && (notFound || store == nil):
		s.fail(w, r, err)
		return nil, docstore.Preview{}, names, false
	case err != nil:
		s.failReview(w, r, err)
		return nil, docstore.Preview{}, names, false
	}
	return store, pv, names, true
}

func (s *Site) showProposal(w http.ResponseWriter, r *http.Request, p who, status int, problem string) {
	store, pv, names, ok := s.preview(w, r, p)
	if !ok {
		return
	}
	pr := pv.Proposal
	v := proposalView{Doc: pv.Document, Status: pr.Status, Latest: pv.Latest.Number, Problem: problem, Notice: r.URL.Query().Get("saved")}
	if pr.Title != pv.Base.Title {
		v.Title, v.ChangesTitle = pr.Title, true
	}
	v.Against, v.AgainstCut = capRows(diffLines(pv.Base.Text, pr.Text))
	if pr.Status == docstore.StatusOpen && pv.Base.Number != pv.Latest.Number {
		if len(pv.Conflicts) > 0 {
			v.Clash, v.ClashMore = clashRegions(pv.Conflicts)
		} else {
			v.Today, v.TodayCut = capRows(diffLines(pv.Latest.Text, pv.Merged))
		}
	}
	pg := p.in(store.Space(), fmt.Sprintf("%s: change %d", pv.Document.Title, pr.Number), "docs")
	v.P = proposalRows(names, []docstore.Proposal{pr})[0]
	if pr.Author.For != "" {
		v.WaitingFor = names.ShowString(pr.Author.For)
	}
	if d := pr.Decided; d != nil {
		v.Decided = fmt.Sprintf("%s by %s", pr.Status, names.ShowString(d.By))
		if d.Edited {
			v.Decided += " after editing it"
		}
		v.Why, v.Version = d.Why, d.Version
	}
	pg.Who = names.Show(spaces.Person(p.Person))
	pg.Data = &v
	s.render(w, r, status, "proposal", pg)
}

// capRows cuts a diff to DiffRows rows, saying how many were left out.
func capRows(lines []diffLine) ([]diffLine, int) {
	if len(lines) <= DiffRows {
		return lines, 0
	}
	return lines[:DiffRows], len(lines) - DiffRows
}

// clashRegions is what the page shows of conflicts: the first ClashRegions of them, each side
// cut to ClashLines lines; more is how many are left out.
func clashRegions(cs []linediff.Conflict) (regions []clashRegion, more int) {
	if len(cs) > ClashRegions {
		cs, more = cs[:ClashRegions], len(cs)-ClashRegions
	}
	cut := func(ls []string) []string {
		if len(ls) <= ClashLines {
			return ls
		}
		return append(ls[:ClashLines:ClashLines], fmt.Sprintf("… and %d more lines", len(ls)-ClashLines))
	}
	out := make([]clashRegion, len(cs))
	for i, c := range cs {
		out[i] = clashRegion{TheirsStart: c.TheirsStart, MineStart: c.MineStart, Theirs: cut(c.Theirs), Mine: cut(c.Mine)}
	}
	return out, more
}

// proposalEdit is the editor, on the proposal's text, for accepting it after editing: the
// latest text with the proposal merged in, when that merges cleanly; else the proposal's
// own text, from its base (accepting then merges, and shows where it clashes).
func (s *Site) proposalEdit(w http.ResponseWriter, r *http.Request, p who) {
	store, pv, names, ok := s.preview(w, r, p)
	if !ok {
		return
	}
	n := pv.Proposal.Number
	if pv.Proposal.Status != docstore.StatusOpen {
		http.Redirect(w, r, fmt.Sprintf("/document/%s/proposal/%d", pv.Document.ID, n), http.StatusSeeOther)
		return
	}
	v := &editView{Doc: pv.Document, Base: pv.Latest.Number, Text: pv.Merged, Proposal: n}
	if len(pv.Conflicts) > 0 {
		v.Base, v.Text = pv.Base.Number, pv.Proposal.Text
	}
	s.proposalEditPage(w, r, p, store.Space(), names, http.StatusOK, v)
}

// proposalEditPage is the editor for accepting a proposal after editing it, showing people
// by names.
func (s *Site) proposalEditPage(w http.ResponseWriter, r *http.Request, p who, space string, names spaces.Names, status int, v *editView) {
	v.Action = fmt.Sprintf("/document/%s/proposal/%d/accept", v.Doc.ID, v.Proposal)
	pg := p.in(space, fmt.Sprintf("Accepting change %d of %s", v.Proposal, v.Doc.Title), "docs")
	pg.Data = v // no live updates: the editor's script would load the document's own editor
	v.LatestBy = byWhom(names, v.Doc.Author)
	pg.Who = names.Show(spaces.Person(p.Person))
	s.render(w, r, status, "edit", pg)
}

// accept accepts a proposal: as it is, or (from the editor: text and base) as the person
// edited it; choose (mine: the proposal's lines, theirs) settles a clash. A clash saves
// nothing and shows the editor's clash page, both sides kept, the proposal's text in it.
func (s *Site) accept(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		s.problem(w, r, http.StatusNotFound, "No such proposal", "A proposal is a number, 1 or more.")
		return
	}
	store, _, err := s.byID(r, p, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	prefer := linediff.Clash
	switch r.FormValue("choose") {
	case "mine":
		prefer = linediff.PreferMine
	case "theirs":
		prefer = linediff.PreferTheirs
	}
	var edit *docstore.Edit
	if r.PostForm.Has("text") {
		base, err := strconv.Atoi(r.FormValue("base"))
		if err != nil || base < 1 {
			s.problem(w, r, http.StatusBadRequest, "Nothing was saved", "The form lost the version it was opened on. Open the proposal again; copy your text first.")
			return
		}
		edit = &docstore.Edit{Text: formText(r), Base: base}
	}
	saved, pr, err := store.Accept(r.Context(), id, n, me(p), edit, prefer)
	var clash *docstore.ClashError
	switch {
	case errors.As(err, &clash):
		s.acceptClashPage(w, r, p, store, id, n, clash, edit, "")
		return
	case errors.Is(err, docstore.ErrBadText) && edit != nil:
		d, names := s.recordAndNames(r, store, id)
		s.proposalEditPage(w, r, p, store.Space(), names, http.StatusBadRequest, &editView{Doc: d, Base: edit.Base, Text: edit.Text, Proposal: n, Problem: "Nothing was saved: " + err.Error()})
		return
	case err != nil:
		s.failReview(w, r, err)
		return
	}
	http.Redirect(w, r, backTo(r, id, acceptedWhat(saved, pr)), http.StatusSeeOther)
}

// decline declines a proposal with the person's reason (why).
func (s *Site) decline(w http.ResponseWriter, r *http.Request, p who) {
	id := r.PathValue("id")
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		s.problem(w, r, http.StatusNotFound, "No such proposal", "A proposal is a number, 1 or more.")
		return
	}
	store, d, err := s.byID(r, p, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	pr, err := store.Decline(r.Context(), id, n, me(p), r.FormValue("why"))
	if errors.Is(err, docstore.ErrNoReason) {
		s.showProposal(w, r, p, http.StatusBadRequest, "Nothing was declined: "+err.Error()+".")
		return
	}
	if err != nil {
		s.failReview(w, r, err)
		return
	}
	http.Redirect(w, r, backTo(r, d.ID, fmt.Sprintf("declined change %d", pr.Number)), http.StatusSeeOther)
}

// failReview answers a proposal's errors as the person can act on them, the rest as fail.
func (s *Site) failReview(w http.ResponseWriter, r *http.Request, err error) {
	var (
		none    *docstore.NoProposalError
		decided *docstore.DecidedError
	)
	switch {
	case errors.As(err, &none):
		s.problem(w, r, http.StatusNotFound, "No such proposal", fmt.Sprintf("%s has no change %d.", none.Document.Title, none.Asked))
	case errors.As(err, &decided):
		s.problem(w, r, http.StatusConflict, "Already decided", fmt.Sprintf("Change %d of %s was %s already: nothing was changed.", decided.Proposal.Number, decided.Document.Title, decided.Proposal.Status))
	default:
		s.fail(w, r, err)
	}
}

// proposalsOf is the number of d's last proposal (0: none yet).
func proposalsOf(d docstore.Document) int {
	if d.Review == nil {
		return 0
	}
	return d.Review.Proposals
}

// acceptClashPage answers an accept of change n of document id that clashed: the clash page,
// with the person's edited text (edit, if they sent one) or else the change's own, and what
// was done before it (before, if anything), read after the refused write in one snapshot.
func (s *Site) acceptClashPage(w http.ResponseWriter, r *http.Request, p who, store *docstore.Store, id string, n int, clash *docstore.ClashError, edit *docstore.Edit, before string) {
	v := &editView{Doc: clash.Document, Base: clash.Base, Proposal: n, Problem: before}
	v.Clash, v.ClashMore = clashRegions(clash.Conflicts)
	var names spaces.Names
	err := store.View(r.Context(), func(rd *docstore.Reader) error {
		names = rd.Names()
		if edit != nil {
			v.Text = edit.Text
			return nil
		}
		_, prop, _, err := rd.Proposal(id, n)
		v.Text = prop.Text
		return err
	})
	if err != nil {
		s.failReview(w, r, err)
		return
	}
	s.proposalEditPage(w, r, p, store.Space(), names, http.StatusConflict, v)
}

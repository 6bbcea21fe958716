package docstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compass-mcp/compass-mcp/docstore"
	"github.com/compass-mcp/compass-mcp/kv"
	"github.com/compass-mcp/compass-mcp/kv/bolt"
	"github.com/compass-mcp/compass-mcp/kv/kvtest"
)

// linksOf is what Links says of a document, as titles: "to: A, B · from: C · broken: [[D]], deleted E".
func linksOf(t *testing.T, s *docstore.Store, name string) string {
	t.Helper()
	_, ls, err := findLinks(t, s, name, 50)
	if err != nil {
		t.Fatalf("Links(%q): %v", name, err)
	}
	titles := func(ds []docstore.Document) string {
		var out []string
		for _, d := range ds {
			out = append(out, d.Title)
		}
		return strings.Join(out, ", ")
	}
	var broken []string //
	for _, b := range ls.Broken {
		switch {
		case b.Deleted != nil:
			broken = append(broken, "deleted "+b.Deleted.Title)
		case b.ID != "":
			broken = append(broken, "id "+b.ID)
		default:
			broken = append(broken, "[["+b.Title+"]]")
		}
	}
	if len(ls.To) != ls.ToTotal || len(ls.From) != ls.FromTotal || len(ls.Broken) != ls.BrokenTotal {
		t.Errorf("Links(%q) counts %d/%d/%d, lists %d/%d/%d", name, ls.ToTotal, ls.FromTotal, ls.BrokenTotal, len(ls.To), len(ls.From), len(ls.Broken))
	}
	return fmt.Sprintf("to: %s · from: %s · broken: %s", titles(ls.To), titles(ls.From), strings.Join(broken, ", "))
}

func checkLinks(t *testing.T, s *docstore.Store) {
	t.Helper()
	ctx := t.Context()
	if err := s.CheckLinks(ctx); err != nil {
		t.Fatal(err)
	}
}

func wantLinks(t *testing.T, s *docstore.Store, name, want string) {
	t.Helper()
	if got := linksOf(t, s, name); got != want {
		t.Errorf("links of %s:\n got %s\nwant %s", name, got, want)
	}
	checkLinks(t, s)
}

// Links are resolved when saved and kept by id: a rename keeps them; a [[Title]] naming no
// document is broken until a document takes the title (made, renamed to it, or brought
// back); code doesn't count; a link to itself is nowhere.
func TestLinksFollowTheDocuments(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	pricing := mustCreate(t, s, "Pricing", "# Pricing\n\nTwelve a month. See [[Launch plan]].\n")
	mustCreate(t, s, "Course outline", "1. Intro\n2. [[pricing]]\n")
	plan := mustCreate(t, s, "Launch plan", "Prices: [[Pricing]]; [[Course outline|the outline]], [again](compass://document/"+pricing.ID+").\n"+
		"Budget: [[Budget]]. Myself: [[launch plan]].\n\n```\n[[Not a link]]\n```\n    [[Indented]]\n\n`[[Spanned]]`\n")
	wantLinks(t, s, "Launch plan", "to: Course outline, Pricing · from: Pricing · broken: [[Budget]]")
	wantLinks(t, s, "Pricing", "to: Launch plan · from: Course outline, Launch plan · broken: ")

	// A rename keeps the links, and the answers show the title now; the texts that said
	// [[Pricing]] say [[Prices and plans]] (retitle_test.go has the rest of that).
	if saved, err := s.Rename(ctx, "Pricing", "Prices and plans", ana); err != nil || saved.Relinked != 2 {
		t.Fatalf("rename: %v, %d documents relinked", err, saved.Relinked)
	}
	wantLinks(t, s, "Launch plan", "to: Course outline, Prices and plans · from: Prices and plans · broken: [[Budget]]")
	// Saving it again keeps the link to the renamed document.
	if _, err := s.Append(ctx, "Launch plan", "More.", north); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, s, "Launch plan", "to: Course outline, Prices and plans · from: Prices and plans · broken: [[Budget]]")

	// A broken link is made whole by making the document.
	mustCreate(t, s, "budget", "Ten.\n")
	wantLinks(t, s, "Launch plan", "to: budget, Course outline, Prices and plans · from: Prices and plans · broken: ")
	wantLinks(t, s, "budget", "to:  · from: Launch plan · broken: ")

	// An edit that takes a link out takes it out of both ends.
	if _, err := s.Edit(ctx, "Launch plan", "[[Course outline|the outline]]", "the outline", north); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, s, "Course outline", "to: Prices and plans · from:  · broken: ")

	// Deleting the linking document takes its links out; bringing it back puts them back.
	if _, err := s.Delete(ctx, "Launch plan", ana); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, s, "budget", "to:  · from:  · broken: ")
	wantLinks(t, s, "Prices and plans", "to:  · from: Course outline · broken: deleted Launch plan")
	if _, err := s.Undelete(ctx, plan.ID); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, s, "budget", "to:  · from: Launch plan · broken: ")
	wantLinks(t, s, "Prices and plans", "to: Launch plan · from: Course outline, Launch plan · broken: ")

	// Purging a linked document breaks the links to it, by the title they were written
	// with: a new document of that title takes them.
	if _, err := s.Delete(ctx, "Prices and plans", ana); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, s, "Launch plan", "to: budget · from:  · broken: deleted Prices and plans")
	if _, err := s.Purge(ctx, pricing.ID); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, s, "Launch plan", "to: budget · from:  · broken: [[prices and plans]], id "+pricing.ID)
	fresh := mustCreate(t, s, "PRICES AND PLANS", "New prices.\n")
	wantLinks(t, s, "Launch plan", "to: budget, PRICES AND PLANS · from:  · broken: id "+pricing.ID)
	wantLinks(t, s, "Course outline", "to: PRICES AND PLANS · from:  · broken: ")

	// Renaming a document to a broken link's title resolves it too.
	mustCreate(t, s, "Notes", "See [[Roadmap]] and [[Later]].\n")
	if _, err := s.Rename(ctx, "budget", "Roadmap", ana); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, s, "Notes", "to: Roadmap · from:  · broken: [[Later]]")
	_ = fresh
}

// A link never crosses spaces: another space's document, by title or id, is as broken as
// a missing one.
func TestLinksStayInTheirSpace(t *testing.T) {
	db := kvtest.Open(t)
	home, other := docstore.New(db, "personal"), docstore.New(db, "launch")
	theirs := mustCreate(t, other, "Pricing", "Theirs.\n")
	mustCreate(t, home, "Plan", "[[Pricing]] and [theirs](/document/"+theirs.ID+").\n")
	wantLinks(t, home, "Plan", "to:  · from:  · broken: [[Pricing]], id "+theirs.ID)
	wantLinks(t, other, "Pricing", "to:  · from:  · broken: ")
	mustCreate(t, home, "Pricing", "Ours.\n")
	wantLinks(t, home, "Plan", "to: Pricing · from:  · broken: id "+theirs.ID)
	checkLinks(t, other)
}

// The space's documents nothing links to, its broken links, and the backlinks a page at a time.
func TestUnlinkedBrokenAndBacklinks(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	hub := mustCreate(t, s, "Hub", "[[Gap]] [[Hub]]\n")
	var ids []string
	for i := range 7 {
		ids = append(ids, mustCreate(t, s, fmt.Sprintf("Spoke %d", i), "[[Hub]] [[Gap]] [[gap]] [[Other gap]]\n").ID)
	}
	lone := mustCreate(t, s, "Lone", "Nothing.\n")
	docs, total, err := view2(t, s, func(r *docstore.Reader) ([]docstore.Document, int, error) { return r.Unlinked(10) })
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, d := range docs {
		titles = append(titles, d.Title)
	}
	// Hub links to itself only: that makes it no less unlinked... but the spokes link to it.
	if want := []string{"Lone", "Spoke 6", "Spoke 5", "Spoke 4", "Spoke 3", "Spoke 2", "Spoke 1", "Spoke 0"}; total != 8 || !slices.Equal(titles, want) {
		t.Errorf("Unlinked = %v (%d), want %v", titles, total, want)
	}
	groups, total, err := view2(t, s, func(r *docstore.Reader) ([]docstore.BrokenGroup, int, error) { return r.BrokenLinks(10) })
	if err != nil {
		t.Fatal(err)
	}
	if total != 2 || len(groups) != 2 || groups[0].Title != "Gap" || groups[0].InTotal != 8 || len(groups[0].In) != docstore.MaxBrokenIn || groups[1].Title != "Other gap" || groups[1].InTotal != 7 {
		t.Errorf("BrokenLinks = %+v (%d)", groups, total)
	}
	var seen []string
	for after := ""; ; {
		d, page, total, next, err := backlinks(t, s, "Hub", after, 3)
		if err != nil || d.ID != hub.ID || total != 7 {
			t.Fatalf("Backlinks(Hub, %q) = %v, %d, %v", after, d.Title, total, err)
		}
		for _, p := range page {
			seen = append(seen, p.ID)
		}
		if after = next; next == "" {
			break
		}
	}
	if !slices.Equal(seen, ids) {
		t.Errorf("Backlinks pages gave %v, want %v", seen, ids)
	}
	if _, err := s.Delete(ctx, hub.ID, ana); err != nil {
		t.Fatal(err)
	}
	if groups, total, _ := view2(t, s, func(r *docstore.Reader) ([]docstore.BrokenGroup, int, error) { return r.BrokenLinks(10) }); total != 3 || groups[2].Deleted == nil || groups[2].Deleted.ID != hub.ID || groups[2].InTotal != 7 {
		t.Errorf("BrokenLinks after deleting Hub = %+v (%d)", groups, total)
	}
	if groups, total, _ := view2(t, s, func(r *docstore.Reader) ([]docstore.BrokenGroup, int, error) { return r.BrokenLinks(1) }); total != 3 || len(groups) != 1 {
		t.Errorf("BrokenLinks(1) = %+v (%d)", groups, total)
	}
	_ = lone
	checkLinks(t, s)
}

// Targets says what a version's [[Titles]] name now, for the page: the document the link
// was resolved to (under its title now), or the one with the title for an older version's.
func TestTargets(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	p := mustCreate(t, s, "Pricing", "x\n")
	plan := mustCreate(t, s, "Plan", "[[Pricing]] [[Missing]]\n")
	// A title a [[link]] can't hold (it has |): the rename leaves [[Pricing]] as it is.
	if saved, err := s.Rename(ctx, "Pricing", "Prices | plans", ana); err != nil || saved.Relinked != 0 {
		t.Fatalf("rename: %v, %d relinked", err, saved.Relinked)
	}
	mustCreate(t, s, "Old", "y\n")
	got, err := view(t, s, func(r *docstore.Reader) (map[string]docstore.Target, error) {
		return r.Targets(plan.ID, []string{"pricing", "Missing", "Old", "Nowhere"})
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]docstore.Target{"pricing": {ID: p.ID, Title: "Prices | plans"}, "missing": {}, "old": {ID: got["old"].ID, Title: "Old"}, "nowhere": {}}
	if fmt.Sprint(got) != fmt.Sprint(want) || got["old"].ID == "" {
		t.Errorf("Targets = %v, want %v", got, want)
	}
}

// Read, then Targets of the version's [[Titles]] (WikiTitles), in one View (as a page reads
// them, ByID first), say what they name now, as Targets of those titles answers in a View of
// its own: its links outside code, each once, at the latest and at an older version; a
// version without [[links]] has none.
func TestReadThenTargetsOfItsTitles(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	mustCreate(t, s, "Pricing", "x\n")
	plan := mustCreate(t, s, "Plan", "[[Pricing]] [[Missing]] [[pricing|again]]\n\n`[[Code]]`\n")
	// A title a [[link]] can't hold (it has [ ]): the rename leaves [[Pricing]] as it is.
	if saved, err := s.Rename(ctx, "Pricing", "Prices [2027]", ana); err != nil || saved.Relinked != 0 {
		t.Fatalf("rename: %v, %d relinked", err, saved.Relinked)
	}
	if _, err := s.Write(ctx, "Plan", "Plan", "Now [[Old]] and [[Prices [2027]]].\n", 0, north); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "Old", "y\n")
	if _, err := s.Write(ctx, "Plan", "Plan", "None.\n", 0, north); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		version int
		titles  []string
	}{{1, []string{"Pricing", "Missing"}}, {2, []string{"Old"}}, {0, nil}} {
		got, err := view(t, s, func(r *docstore.Reader) (map[string]docstore.Target, error) {
			d, err := r.ByID(plan.ID)
			if err != nil {
				return nil, err
			}
			_, v, err := r.Read(d.ID, c.version)
			if err != nil {
				return nil, err
			}
			return r.Targets(d.ID, docstore.WikiTitles(v.Text))
		})
		if err != nil {
			t.Fatalf("Read then Targets of version %d: %v", c.version, err)
		}
		want, err := view(t, s, func(r *docstore.Reader) (map[string]docstore.Target, error) { return r.Targets(plan.ID, c.titles) })
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || c.titles == nil && len(got) != 0 {
			t.Errorf("version %d: Targets of its [[Titles]] = %v, want %v", c.version, got, want)
		}
	}
}

// Random saves, renames, deletes, undeletes and purges of documents linking one another
// keep the index what the documents make of it (CheckLinks), on whichever store.
func TestLinksIndexHoldsUnderRandomChanges(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	r := rand.New(rand.NewPCG(25, 25))
	titles := []string{"Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta"}
	text := func() string {
		var b strings.Builder
		for range r.IntN(6) {
			switch r.IntN(5) {
			case 0:
				fmt.Fprintf(&b, "```\n[[%s]]\n```\n", titles[r.IntN(len(titles))])
			case 1:
				docs, _ := view(t, s, func(r *docstore.Reader) ([]docstore.Document, error) { return r.Documents() })
				if len(docs) > 0 {
					fmt.Fprintf(&b, "[x](/document/%s)\n", docs[r.IntN(len(docs))].ID)
				}
			default:
				fmt.Fprintf(&b, "See [[%s]].\n", titles[r.IntN(len(titles))])
			}
		}
		return b.String()
	}
	for step := range 400 {
		title := titles[r.IntN(len(titles))]
		var err error
		switch r.IntN(7) {
		case 0, 1:
			_, err = s.Create(ctx, title, text(), docstore.KindWrite, north)
		case 2:
			_, err = s.Write(ctx, title, "", text(), 0, north)
		case 3:
			_, err = s.Rename(ctx, title, titles[r.IntN(len(titles))], ana)
		case 4:
			_, err = s.Delete(ctx, title, ana)
		case 5:
			_, err = s.Undelete(ctx, title)
		case 6:
			_, err = s.Purge(ctx, title)
		}
		_ = err // refusals (taken titles, nothing to undelete) are part of the mix
		if err := s.CheckLinks(ctx); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if step%50 == 0 {
			for _, d := range mustDocs(t, s) {
				if d.Deleted == nil {
					linksOf(t, s, d.ID)
				}
			}
		}
	}
}

func mustDocs(t *testing.T, s *docstore.Store) []docstore.Document {
	t.Helper()
	docs, err := view(t, s, func(r *docstore.Reader) ([]docstore.Document, error) { return r.Documents() })
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// A file written before links has its index built by EnsureLinks (or the first read of
// links), with the links its texts have; it is then kept like any other.
func TestLinksOfAnOlderFile(t *testing.T) {
	ctx := t.Context()
	db := oldLinksFile(t)
	s := docstore.New(db, "personal")
	if err := s.EnsureLinks(ctx, nil); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, s, "Launch plan", "to: Course outline, Pricing · from: Pricing · broken: [[Budget]]")
	wantLinks(t, s, "Pricing", "to: Launch plan · from: Course outline, Launch plan · broken: ")
	other := docstore.New(db, "launch")
	wantLinks(t, other, "Elsewhere", "to:  · from:  · broken: [[Pricing]], id "+mustFind(t, s, "Pricing").ID)
	if _, err := s.Undelete(ctx, "Old draft"); err != nil {
		t.Fatal(err)
	}
	wantLinks(t, s, "Pricing", "to: Launch plan · from: Course outline, Launch plan, Old draft · broken: ")
}

func mustFind(t *testing.T, s *docstore.Store, name string) docstore.Document {
	t.Helper()
	d, err := find(t, s, name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// counting is a kv.DB that counts the keys its write transactions put and delete.
type counting struct {
	kv.DB
	writes int
}

func (c *counting) Update(ctx context.Context, fn func(kv.Tx) error) error {
	return c.DB.Update(ctx, func(tx kv.Tx) error { return fn(countingTx{tx, c}) })
}

func (c *counting) Batch(ctx context.Context, fn func(kv.Tx) error) error {
	return c.DB.Batch(ctx, func(tx kv.Tx) error { return fn(countingTx{tx, c}) })
}

type countingTx struct {
	kv.Tx
	c *counting
}

func (t countingTx) Bucket(name []byte) kv.Bucket { return wrapCounting(t.Tx.Bucket(name), t.c) }
func (t countingTx) CreateBucketIfNotExists(name []byte) (kv.Bucket, error) {
	b, err := t.Tx.CreateBucketIfNotExists(name)
	return wrapCounting(b, t.c), err
}

type countingBucket struct {
	b kv.Bucket
	c *counting
}

func wrapCounting(b kv.Bucket, c *counting) kv.Bucket {
	if b == nil {
		return nil
	}
	return countingBucket{b, c}
}

func (b countingBucket) Get(k []byte) []byte   { return b.b.Get(k) }
func (b countingBucket) Put(k, v []byte) error { b.c.writes++; return b.b.Put(k, v) }
func (b countingBucket) Delete(k []byte) error { b.c.writes++; return b.b.Delete(k) }
func (b countingBucket) Bucket(name []byte) kv.Bucket {
	return wrapCounting(b.b.Bucket(name), b.c)
}
func (b countingBucket) CreateBucketIfNotExists(name []byte) (kv.Bucket, error) {
	nb, err := b.b.CreateBucketIfNotExists(name)
	return wrapCounting(nb, b.c), err
}
func (b countingBucket) DeleteBucket(name []byte) error { b.c.writes++; return b.b.DeleteBucket(name) }
func (b countingBucket) Cursor() kv.Cursor              { return countingCursor{b.b.Cursor(), b.c} }
func (b countingBucket) ForEach(fn func(k, v []byte) error) error {
	return b.b.ForEach(fn)
}
func (b countingBucket) ForEachBucket(fn func(name []byte) error) error {
	return b.b.ForEachBucket(fn)
}
func (b countingBucket) KeyN() int         { return b.b.KeyN() }
func (b countingBucket) Tune(fill float64) { b.b.Tune(fill) }

type countingCursor struct {
	kv.Cursor
	c *counting
}

func (c countingCursor) Delete() error { c.c.writes++; return c.Cursor.Delete() }

// Renaming a document linked from 1,000 others by Markdown links (by id) writes as many
// keys as renaming one linked from none: the links are kept by id, and those texts name no
// title to rewrite. One linked by [[Title]] from 1,000 rewrites their texts.
func TestRenameOfAMuchLinkedDocument(t *testing.T) {
	ctx := t.Context()
	c := &counting{DB: kvtest.Open(t)}
	s := docstore.New(c, "personal")
	if err := s.EnsureLinks(ctx, nil); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "Lonely", "Nobody links here.\n")
	byID := mustCreate(t, s, "Popular", "Everybody links here.\n")
	mustCreate(t, s, "Famous", "Everybody links here.\n")
	for i := range 1000 {
		mustCreate(t, s, fmt.Sprintf("Fan %d", i), "I like [it](/document/"+byID.ID+") and [[Famous]].\n")
	}
	rename := func(name, title string, relinked int) int {
		before := c.writes
		saved, err := s.Rename(ctx, name, title, ana)
		if err != nil || saved.Relinked != relinked {
			t.Fatalf("rename %s: %v, %d relinked, want %d", name, err, saved.Relinked, relinked)
		}
		return c.writes - before
	}
	lonely, popular := rename("Lonely", "Still lonely", 0), rename("Popular", "Liked", 0)
	t.Logf("keys written by a rename: %d linked from none, %d linked by id from 1,000", lonely, popular)
	if popular != lonely {
		t.Errorf("a rename of a document linked by id from 1,000 others wrote %d keys, one linked from none %d", popular, lonely)
	}
	rename("Famous", "Renowned", 1000)
	if _, ls, err := findLinks(t, s, "Liked", 3); err != nil || ls.FromTotal != 1000 {
		t.Errorf("Liked is linked from %d, %v", ls.FromTotal, err)
	}
	if _, ls, err := findLinks(t, s, "Renowned", 3); err != nil || ls.FromTotal != 1000 {
		t.Errorf("Renowned is linked from %d, %v", ls.FromTotal, err)
	}
	if _, v := readLatest(t, s, "Fan 999"); v.Text != "I like [it](/document/"+byID.ID+") and [[Renowned]].\n" || v.Kind != docstore.KindRelink || v.Number != 2 || v.Author != ana {
		t.Errorf("Fan 999 is version %d (%s by %v): %q", v.Number, v.Kind, v.Author, v.Text)
	}
	checkLinks(t, s)
}

// oldLinksFile is a copy of a file written by the version before links
// (testdata/layout/v2-links-before-index.db): in personal, Pricing, Course outline and
// Launch plan link one another, Launch plan has a broken [[Budget]] and a [[link]] in a
// fence, and Old draft (deleted) links to Pricing; in launch, Elsewhere links to personal's
// Pricing by title and by id. It is a bbolt file whatever the tests' store.
func oldLinksFile(t *testing.T) kv.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	copyFile(t, filepath.Join("..", "testdata", "layout", "v2-links-before-index.db"), path)
	db, err := bolt.OpenFile(path, time.Second, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Saves that change a line or a few, in texts of every kind of block, keep the index what
// the texts make of it, whether the save read the links again or saw from the line diff
// that they can't have changed (plain lines replaced by plain lines): CheckLinks reads
// every text whole each time, and compares.
func TestLineEditsKeepTheLinks(t *testing.T) {
	ctx := t.Context()
	s := open(t, "personal")
	mustCreate(t, s, "Alpha", "a\n")
	palette := []string{
		"Plain words here", "Another plain line", "More prose, with commas; and dots.", "", "",
		"    [[Alpha]] indented", "```", "~~~", "- item [[Alpha]]", "- plain item", "> quoted [[Beta]]",
		"| a | [[Alpha]] |", "|---|---|", "Title", "===", "---", "[[Alpha]] and [[Gamma]]", "`code [[Beta]]`",
		"[x](/document/01M8PGKZD91FPDJN4QQFFR0WBP)", "1. [[Beta]]", "  continued [[Gamma]]", "Über plain",
		"- [[Alpha]] is about one", "- [[Alpha]] is about two", "[[Beta]] then words", "[[Beta]] then other words",
		"[ref]: /document/01M8PGKZD91FPDJN4QQFFR0WBP", "[ref]: /document/01M8PGKZD91FPDJN4QQFFR0WBQ", "See [[Gamma]] now", "See [[Gamma]] now!",
	}
	r := rand.New(rand.NewPCG(25, 3))
	lines := []string{"Start"}
	mustCreate(t, s, "Doc", "Start\n")
	fast := 0
	for step := range 3000 {
		before := strings.Join(lines, "\n") + "\n"
		pick := func() string { return palette[r.IntN(len(palette))] }
		switch k := r.IntN(12); {
		case k >= 10 && len(lines) > 0: // change a word of a line: beside a link, or in it
			at := r.IntN(len(lines))
			words := regexp.MustCompile(`[a-z]+`).FindAllStringIndex(lines[at], -1)
			if len(words) > 0 {
				w := words[r.IntN(len(words))]
				lines[at] = lines[at][:w[0]] + []string{"one", "two", "alpha", "lpha", "x"}[r.IntN(5)] + lines[at][w[1]:]
			}
		case k < 5 && len(lines) > 0: // replace a line, often by a plain one
			line := pick()
			if r.IntN(2) == 0 {
				line = palette[r.IntN(3)]
			}
			lines[r.IntN(len(lines))] = line
		case k < 7: // insert
			at := r.IntN(len(lines) + 1)
			lines = append(lines[:at], append([]string{pick()}, lines[at:]...)...)
		case k < 8 && len(lines) > 1: // delete
			at := r.IntN(len(lines))
			lines = append(lines[:at], lines[at+1:]...)
		default: // add at the end
			lines = append(lines, pick())
		}
		if docstore.SameLinks(before, strings.Join(lines, "\n")+"\n") {
			fast++
		}
		if _, err := s.Save(ctx, "Doc", 0, strings.Join(lines, "\n")+"\n", ana, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.CheckLinks(ctx); err != nil {
			t.Fatalf("step %d, text:\n%s\n%v", step, strings.Join(lines, "\n"), err)
		}
		if step%300 == 0 {
			mustCreate(t, s, fmt.Sprintf("Gamma %d", step), "g\n") // documents come and go beside it
		}
	}
	t.Logf("%d of 3000 saves kept the links by the line diff alone", fast)
	if fast < 100 {
		t.Errorf("only %d saves took the line diff's way: the test doesn't test it", fast)
	}
}

func TestSameLinks(t *testing.T) {
	for _, tc := range []struct {
		old, new string
		same     bool
	}{
		{"Plain one\n[[A]]\n", "Plain two\n[[A]]\n", true},
		{"[[A]]\nPlain one\n", "[[A]]\nPlain one\nPlain two\n\nMore\n", true}, // at the end
		{"Plain one\n\n    [[A]]\n", "\n    [[A]]\n", false},                  // the indented line becomes code
		{"\n    [[A]]\n", "Plain\n\n    [[A]]\n", false},
		{"Plain\n\n    [[A]]\n", "Plain\nmore\n    [[A]]\n", false}, // a blank line goes
		{"Plain one\n", "Plain [[A]]\n", false},
		{"Plain one\n", "- Plain one\n", false},
		{"a `b\nplain\nc` d\n", "a `b\nother\nc` d\n", true}, // inside a code span
		{"a `b\nplain\nc` d\n", "a `b\npl`ain\nc` d\n", false},
		{"- [[Doc 1]] is about x.\nmore\n", "- [[Doc 1]] is about y, really.\nmore\n", true}, // words beside a link
		{"- [[Doc 1]] is about x.\n", "- [[Doc 2]] is about x.\n", false},                    // the link itself
		{"See [[Doc 1]] now\n", "See [[Doc 1]] now!\n", false},
		{"[a](/document/01M8PGKZD91FPDJN4QQFFR0WBP) x\n", "[a](/document/01M8PGKZD91FPDJN4QQFFR0WBQ) x\n", false},
		{"[ref]: /document/01M8PGKZD91FPDJN4QQFFR0WBP\n", "[ref]: /document/01M8PGKZD91FPDJN4QQFFR0WBQ\n", false},
		{"1 [[A]]\n", "1. [[A]]\n", false},
		{"Some [[A]] x\n", "Some [[A]] x `y\n", false},
		{"    [[A]] x\n", "    [[A]] y\n", false}, // indented: left to the full reading
	} {
		if got := docstore.SameLinks(tc.old, tc.new); got != tc.same {
			t.Errorf("SameLinks(%q, %q) = %v, want %v", tc.old, tc.new, got, tc.same)
		}
	}
}

// Every read of links, on a file written before links, builds the index before it answers
// (it looks in its own transaction whether the index is built, and reads again once it
// is): each answers as it does after EnsureLinks, and as the index says (shows, in the
// answer printed: read without the index, it would be otherwise).
func TestEveryLinksReadOfAnOlderFileBuildsTheIndex(t *testing.T) {
	ctx := t.Context()
	reads := []struct {
		name  string
		shows string
		read  func(s *docstore.Store) (any, error)
	}{
		{"Links", "Title:Course outline", func(s *docstore.Store) (any, error) {
			d, ls, err := findLinks(t, s, "Launch plan", 10)
			return []any{d, ls}, err
		}},
		{"Read and Links", "Title:Course outline", func(s *docstore.Store) (any, error) {
			d, v, ls, err := readLinked(t, s, "Launch plan", 0, 10)
			return []any{d, v, ls}, err
		}},
		{"Backlinks", "Title:Launch plan", func(s *docstore.Store) (any, error) {
			d, docs, total, next, err := backlinks(t, s, "Pricing", "", 10)
			return []any{d, docs, total, next}, err
		}},
		{"Unlinked", "[[] 0]", func(s *docstore.Store) (any, error) { // every document here is linked
			docs, total, err := view2(t, s, func(r *docstore.Reader) ([]docstore.Document, int, error) { return r.Unlinked(10) })
			return []any{docs, total}, err
		}},
		{"BrokenLinks", "Title:Budget", func(s *docstore.Store) (any, error) {
			gs, total, err := view2(t, s, func(r *docstore.Reader) ([]docstore.BrokenGroup, int, error) { return r.BrokenLinks(10) })
			return []any{gs, total}, err
		}},
		{"Targets", "Title:Course outline", func(s *docstore.Store) (any, error) {
			d, err := find(t, s, "Launch plan")
			if err != nil {
				return nil, err
			}
			return view(t, s, func(r *docstore.Reader) (map[string]docstore.Target, error) {
				return r.Targets(d.ID, []string{"Pricing", "Budget", "Course outline"})
			})
		}},
	}
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			built := docstore.New(oldLinksFile(t), "personal")
			if err := built.EnsureLinks(ctx, nil); err != nil {
				t.Fatal(err)
			}
			want, err := r.read(built)
			if err != nil {
				t.Fatal(err)
			}
			if s := fmt.Sprintf("%+v", want); !strings.Contains(s, r.shows) {
				t.Fatalf("after EnsureLinks, %s doesn't show %s: %s", r.name, r.shows, s)
			}
			got, err := r.read(docstore.New(oldLinksFile(t), "personal"))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("on a file whose index it built:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

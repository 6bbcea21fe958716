package browser

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

const linkedPlan = "# Overview\n\nPrices are in [[Pricing]]; the budget is in [[Budget]].\n\n## Steps\n\nRecord the trailer.\n\n## Open questions\n\nWho reviews the course page?\n\n```\n[[Not a link]]\n```\n"

// The person follows a [[link]], sees the backlink on the page it leads to, sees the link
// keep its document when the agent renames it, and makes a broken link whole by making the
// document it names; a document of three headings has a table of contents. (Its first
// heading is not its title: the page shows a leading heading that repeats the title once,
// in the header, so it would not count.)
func TestLinksAPersonFollows(t *testing.T) {
	s := startServer(t)
	_, pricing := s.write(t, "Pricing", "# Pricing\n\nTwelve a month.\n")
	_, plan := s.write(t, "Launch plan", linkedPlan)
	ctx := newBrowser(t)
	s.signIn(t, ctx, plan)
	waitText(t, ctx, "Prices are in Pricing; the budget is in Budget.")

	// The table of contents, and its anchors.
	if toc := eval[string](t, ctx, `[...document.querySelectorAll("nav.toc a")].map(a => a.getAttribute("href") + " " + a.innerText).join("\n")`); toc != "#s-overview Overview\n#s-steps Steps\n#s-open-questions Open questions" {
		t.Errorf("the table of contents:\n%s", toc)
	}
	click(t, ctx, `nav.toc a[href="#s-open-questions"]`)
	if hash := eval[string](t, ctx, `location.hash`); hash != "#s-open-questions" {
		t.Errorf("the table of contents' link went to %q", hash)
	}
	// Code is code: no link in it.
	if n := eval[int](t, ctx, `[...document.querySelectorAll("#body pre a")].length`); n != 0 {
		t.Errorf("%d links in the code block", n)
	}
	// The broken link is marked, and listed under the text.
	if got := eval[string](t, ctx, `[...document.querySelectorAll("#body a.wikilink.broken")].map(a => a.innerText).join(",")`); got != "Budget" {
		t.Errorf("the broken links in the text: %q", got)
	}
	if got := eval[string](t, ctx, `document.querySelector("aside.backlinks").innerText`); !strings.Contains(got, "Broken links (1)") || !strings.Contains(got, "[[Budget]]") {
		t.Errorf("under the text:\n%s", got)
	}
	shot(t, ctx, "links")

	// A link followed; the backlink shown.
	click(t, ctx, `#body a.wikilink:not(.broken)`)
	waitText(t, ctx, "Twelve a month.")
	if path := eval[string](t, ctx, `location.pathname`); path != "/document/"+pricing {
		t.Fatalf("the [[Pricing]] link led to %s", path)
	}
	if got := eval[string](t, ctx, `document.querySelector("aside.backlinks").innerText`); !strings.Contains(got, "Linked from (1)") || !strings.Contains(got, "Launch plan") {
		t.Errorf("Pricing's backlinks:\n%s", got)
	}
	click(t, ctx, `aside.backlinks a[href="/document/`+plan+`"]`)
	waitText(t, ctx, "Prices are in Pricing")

	// The agent renames Pricing: the link keeps it, under its title now.
	s.agent(t, "write_document", "document="+pricing, "title=Prices and plans", "text=# Pricing\n\nTwelve a month.\n")
	navigate(t, ctx, s.URL+"/document/"+plan)
	waitText(t, ctx, "Prices are in Prices and plans;")
	if href := eval[string](t, ctx, `document.querySelector("#body a.wikilink:not(.broken)").getAttribute("href")`); href != "/document/"+pricing {
		t.Errorf("after the rename the link leads to %s", href)
	}

	// The broken link leads to a new document of its title; made, it makes the link whole.
	click(t, ctx, `#body a.wikilink.broken`)
	waitText(t, ctx, "New document")
	if title := eval[string](t, ctx, `document.querySelector("input[name=title]").value`); title != "Budget" {
		t.Fatalf("the new document's title is %q, want Budget", title)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("textarea[name=text]"), "Ten thousand.\n")); err != nil {
		t.Fatal(err)
	}
	click(t, ctx, "form.editor button.primary")
	waitText(t, ctx, "Ten thousand.")
	if got := eval[string](t, ctx, `document.querySelector("aside.backlinks").innerText`); !strings.Contains(got, "Linked from (1)") || !strings.Contains(got, "Launch plan") {
		t.Errorf("the new Budget's backlinks:\n%s", got)
	}
	navigate(t, ctx, s.URL+"/document/"+plan)
	waitText(t, ctx, "the budget is in Budget.")
	if n := eval[int](t, ctx, `document.querySelectorAll("a.wikilink.broken").length`); n != 0 {
		t.Errorf("%d broken links left after making Budget", n)
	}
	if answer := s.agent(t, "read_document", "document="+plan); !strings.Contains(answer, "Links to: [Budget](") || strings.Contains(answer, "Broken links") {
		t.Errorf("the agent's read after the person made Budget:\n%s", answer)
	}
}

package main

import (
	"regexp"
	"strings"
	"testing"
)

// docs blame prints every line with the version that last changed it, its kind, author
// and time, as the person reads them.
func TestBlameOnTheCommandLine(t *testing.T) {
	data := newData(t)
	cli(t, data, "people", "set", "ana", "Ana")
	cli(t, data, "call", "--agent", "north", "write_document", "title=Launch plan", "text=# Launch plan\n\nRecord the trailer.\nReview the page.\n")
	cli(t, data, "call", "--agent", "north", "edit_document", "document=launch", "old=Review the page.", "new=Review the course page.")
	if _, err := cliResult(data, "# Launch plan\n\nRecord the trailer on Tuesday.\nReview the course page.\n", "docs", "save", "launch"); err != nil {
		t.Fatal(err)
	}
	got := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d`).ReplaceAllString(cli(t, data, "docs", "blame", "launch"), "<time>")
	want := `Launch plan (<id>), version 3, 4 lines, each with the version that last changed it:
1  v1 write north for Ana <time> | # Launch plan
2  v1 write north for Ana <time> | 
3  v3 save  Ana           <time> | Record the trailer on Tuesday.
4  v2 edit  north for Ana <time> | Review the course page.
`
	got = ulidRE.ReplaceAllString(got, "<id>")
	if got != want {
		t.Errorf("docs blame (-want +got):\n%s", lineDiff(want, got))
	}
	if out, err := cliResult(data, "", "docs", "blame"); err == nil || !strings.Contains(out, "docs blame takes a document") {
		t.Errorf("docs blame without a document: %v, %q", err, out)
	}
	if out, err := cliResult(data, "", "docs", "blame", "nothing"); err == nil || !strings.Contains(out, `no document "nothing"`) {
		t.Errorf("docs blame of nothing: %v, %q", err, out)
	}
}

package command

import "testing"

// The command line's append (call append_document, the tool in-process: the page has no
// append of its own) ends as the text ended, with no blank line after what it added
// (issue 23.18), and the person's docs show reads back exactly that.
func TestDocsShowAppendEndsWithoutABlankLine(t *testing.T) {
	data := newData(t)
	for _, tc := range []struct{ title, text, want string }{
		{"Blank lines", "a\n\n\n", "a\n\nb\n"},
		{"CRLF", "a\r\n\r\n", "a\r\n\r\nb\r\n"},
		{"No break", "a", "a\n\nb"},
	} {
		if out, err := cliResult(data, tc.text, "docs", "save", "--new", tc.title); err != nil {
			t.Fatal(out)
		}
		cli(t, data, "call", "append_document", "document="+tc.title, "text=b")
		if got := cli(t, data, "docs", "show", tc.title); got != tc.want {
			t.Errorf("%q after appending b: %q, want %q", tc.text, got, tc.want)
		}
	}
}

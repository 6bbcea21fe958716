package mdscan

import (
	"strings"
	"testing"
)

func TestDocumentID(t *testing.T) {
	const id = "01M8PGKZD91FPDJN4QQFFR0WBP"
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"http://127.0.0.1:7411/document/" + id, id, true},
		{"https://compass.example/document/" + id + "/v/3", id, true},
		{"http://127.0.0.1:7411/document/" + id + "/history?x=1#top", id, true},
		{"/document/" + id, id, true},
		{"compass://document/" + id, id, true},
		{"compass://document/" + id + "/v/2", id, true},
		{"[Launch plan](http://127.0.0.1:7411/document/" + id + ")", id, true},
		{"[Launch [v2]](compass://document/" + id + ")", id, true},
		{"<http://127.0.0.1:7411/document/" + id + ">", id, true},
		{"http://127.0.0.1:7411/document/" + "01m8pgkzd91fpdjn4qqffr0wbp", id, true},
		{id, "", false},                           // an id is a name, found as it is
		{"Launch plan", "", false},                // a title
		{"Notes on /document/ layout", "", false}, // a title with the words in it
		{"http://127.0.0.1:7411/document/nope", "", false},
		{"ftp://host/document/" + id, "", false},
		{"http://127.0.0.1:7411/document/" + id + "/elsewhere", "", false},
		{"javascript:/document/" + id, "", false},
	} {
		got, ok := DocumentID(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("DocumentID(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzID: whatever it is given, ID never panics, and an id it finds is a ULID in upper
// case that its own URI gives back.
//
//	go test -fuzz=FuzzDocumentID ./mdscan
func FuzzDocumentID(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:7411/document/01M8PGKZD91FPDJN4QQFFR0WBP", "compass://document/01M8PGKZD91FPDJN4QQFFR0WBP/v/2", "[a](/document/01m8pgkzd91fpdjn4qqffr0wbp)", "Launch plan", "<>", "[](", "http://%zz/document/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := DocumentID(s)
		if !ok {
			if id != "" {
				t.Fatalf("DocumentID(%q) = %q but not ok", s, id)
			}
			return
		}
		if !isULID(id) || strings.ToUpper(id) != id {
			t.Fatalf("DocumentID(%q) = %q, not a ULID in upper case", s, id)
		}
		if again, ok := DocumentID(URIPrefix + id); !ok || again != id {
			t.Fatalf("DocumentID(%q) = %q, but its URI gives %q, %v", s, id, again, ok)
		}
	})
}

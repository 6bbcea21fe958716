package doclink

import "testing"

func TestID(t *testing.T) {
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
		got, ok := ID(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ID(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

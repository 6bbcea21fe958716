package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/compass-mcp/compass-mcp/docstore"
)

// A program holding the person's cookie is not the person (issue 34): every request of the
// page that changes something needs the browser's word that it came from the page
// (Sec-Fetch-Site: same-origin or a matching Origin) and the session's form token. A plain
// HTTP client sends neither header; one that copies a header still lacks the token of a
// page it never read... and a page's forms, read by a browser, carry both.
func TestDecisionsNeedTheBrowsersProof(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	made, err := f.docs.Create(ctx, "Plan", reviewedPlan, docstore.KindWrite, agent)
	if err != nil {
		t.Fatal(err)
	}
	id := made.Document.ID
	if _, err := f.docs.Proposing().Edit(ctx, id, "Review the page.", "Review the <course> page.", agent); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	f.signIn(c, "/")
	token := tokenOf(c, f.srv.URL)
	if token == "" {
		t.Fatal("signed in, but the jar holds no session cookie")
	}
	other := f.client()
	f.signIn(other, "/")
	if tokenOf(other, f.srv.URL) == token {
		t.Fatal("two sessions have the same form token")
	}

	// Every form that posts, on every page that has one, carries this session's token.
	forms := regexp.MustCompile(`(?s)<form\b[^>]*method="post"[^>]*>.*?</form>`)
	for _, path := range []string{"/", "/document/" + id, "/document/" + id + "/v/1", "/document/" + id + "/proposal/1", "/document/" + id + "/edit", "/document/" + id + "/comments", "/new", "/deleted"} {
		page := body(t, f.get(c, path))
		found := forms.FindAllString(page, -1)
		if len(found) == 0 {
			t.Errorf("%s has no form at all (not even sign-out)", path)
		}
		for _, form := range found {
			if !strings.Contains(form, `name="form_token" value="`+token+`"`) {
				t.Errorf("%s: a form without the session's token:\n%s", path, form)
			}
		}
	}

	decisions := []struct {
		path string
		form url.Values
	}{
		{"/document/" + id + "/proposal/1/accept", url.Values{}},
		{"/document/" + id + "/proposal/1/accept", url.Values{"text": {"mine\n"}, "base": {"1"}}},
		{"/document/" + id + "/proposal/1/decline", url.Values{"why": {"no"}}},
		{"/document/" + id + "/edit", url.Values{"base": {"1"}, "text": {"mine\n"}}},
		{"/document/" + id + "/restore", url.Values{"n": {"1"}}},
		{"/document/" + id + "/rename", url.Values{"title": {"Taken over"}}},
		{"/document/" + id + "/delete", url.Values{}},
		{"/document/" + id + "/comments", url.Values{"from": {"1"}, "to": {"1"}, "text": {"hi"}, "version": {"1"}}},
		{"/new", url.Values{"title": {"Planted"}, "text": {"x\n"}}},
		{"/signout", url.Values{}},
	}
	send := func(path string, form url.Values, header ...string) int {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := staying(c).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		page := body(t, resp)
		if resp.StatusCode == http.StatusForbidden && !strings.Contains(page, "Refused") {
			t.Errorf("POST %s: 403 without saying why:\n%s", path, page)
		}
		return resp.StatusCode
	}
	with := func(form url.Values, token string) url.Values {
		n := url.Values{"form_token": {token}}
		for k, v := range form {
			n[k] = v
		}
		return n
	}
	for _, d := range decisions {
		// A plain HTTP client keeping the cookie, even given the right token: no header says
		// a page sent it.
		if code := send(d.path, with(d.form, token)); code != http.StatusForbidden {
			t.Errorf("POST %s with the cookie and token but neither Sec-Fetch-Site nor Origin: %d, want 403", d.path, code)
		}
		if code := send(d.path, with(d.form, token), "Sec-Fetch-Site", "none"); code != http.StatusForbidden {
			t.Errorf("POST %s with Sec-Fetch-Site: none: %d, want 403", d.path, code)
		}
		if code := send(d.path, with(d.form, token), "Origin", "http://127.0.0.1:1"); code != http.StatusForbidden {
			t.Errorf("POST %s from another origin: %d, want 403", d.path, code)
		}
		// The headers, but no token, or another session's, or one in the URL only.
		if code := send(d.path, d.form, "Origin", f.srv.URL); code != http.StatusForbidden {
			t.Errorf("POST %s without a form token: %d, want 403", d.path, code)
		}
		if code := send(d.path, with(d.form, tokenOf(other, f.srv.URL)), "Sec-Fetch-Site", "same-origin"); code != http.StatusForbidden {
			t.Errorf("POST %s with another session's token: %d, want 403", d.path, code)
		}
		if code := send(d.path+"?form_token="+url.QueryEscape(token), d.form, "Sec-Fetch-Site", "same-origin"); code != http.StatusForbidden {
			t.Errorf("POST %s with the token in the URL only: %d, want 403", d.path, code)
		}
	}
	// Nothing of it happened.
	d, err := view(t, f.docs, find(id))
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != 1 || d.Title != "Plan" || d.Review == nil || d.Review.Open != 1 {
		t.Fatalf("after the refused requests: version %d, title %q, review %+v", d.Version, d.Title, d.Review)
	}
	if page := body(t, f.get(c, "/")); !strings.Contains(page, "Sign out") || strings.Contains(page, "Planted") {
		t.Fatalf("after the refused requests, signed out or a document planted:\n%s", page)
	}
	// The page's own form, as a browser sends it: accepted.
	if code := send("/document/"+id+"/proposal/1/accept", with(url.Values{}, token), "Origin", f.srv.URL, "Sec-Fetch-Site", "same-origin"); code != http.StatusSeeOther {
		t.Fatalf("accept from the page: %d, want 303", code)
	}
	if v, _ := view(t, f.docs, newest(id)); v.Number != 2 || v.Kind != docstore.KindAccept {
		t.Fatalf("after accepting: version %d, kind %s", v.Number, v.Kind)
	}
	// Sign-out from the page ends the session; then the old token is worth nothing.
	if code := send("/signout", with(url.Values{}, token), "Sec-Fetch-Site", "same-origin"); code != http.StatusOK {
		t.Fatalf("sign-out from the page: %d", code)
	}
	if code := send("/document/"+id+"/edit", with(url.Values{"base": {"2"}, "text": {"x\n"}}, token), "Sec-Fetch-Site", "same-origin"); code != http.StatusUnauthorized {
		t.Fatalf("an edit after signing out: %d, want 401", code)
	}
}

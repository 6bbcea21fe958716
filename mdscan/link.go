package mdscan

// The links that name a document: the page's URLs (http://127.0.0.1:7411/document/<id>,
// /document/<id>/v/3), the resource URIs (compass://document/<id>) and Markdown links
// around either ([Launch plan](...)). The tools take such a link wherever they take a
// document's name, the page rewrites links between documents to its own, and Links finds
// them in texts, for the links the store keeps; docstore itself stays ignorant of URLs.

import (
	"net/url"
	"strings"
)

// URIPrefix begins every document's resource URI: compass://document/<id>.
const URIPrefix = "compass://document/"

// DocumentID returns the id of the document s links to, and whether s is such a link. s may be a
// Markdown link, a URL or path whose path holds /document/<id>, or a compass:// URI; the id
// must look like a ULID (26 letters and digits of Crockford's base32), so that a title with
// "/document/" in it is not taken for a link.
func DocumentID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, ")") {
		if i := strings.LastIndex(s, "]("); i > 0 {
			s = strings.TrimSpace(s[i+2 : len(s)-1])
		}
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "<"), ">")
	var path string
	switch {
	case strings.HasPrefix(s, URIPrefix):
		path = "/document/" + s[len(URIPrefix):]
	case strings.HasPrefix(s, "/"):
		path = s
	default:
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", false
		}
		path = u.EscapedPath()
	}
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	i := strings.LastIndex(path, "/document/")
	if i < 0 {
		return "", false
	}
	rest := path[i+len("/document/"):]
	id, tail, _ := strings.Cut(rest, "/")
	if !isULID(id) {
		return "", false
	}
	switch {
	case tail == "", tail == "history", tail == "edit", tail == "diff", strings.HasPrefix(tail, "v/"):
		return strings.ToUpper(id), true
	}
	return "", false
}

// isULID reports whether s has a ULID's form: 26 characters of Crockford's base32, the
// first at most 7 (a ULID's time fits in 48 bits).
func isULID(s string) bool {
	if len(s) != 26 || s[0] > '7' {
		return false
	}
	for _, c := range strings.ToUpper(s) {
		if !strings.ContainsRune("0123456789ABCDEFGHJKMNPQRSTVWXYZ", c) {
			return false
		}
	}
	return true
}

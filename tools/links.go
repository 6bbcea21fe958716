package tools

import (
	"reflect"

	"github.com/compass-mcp/compass-mcp/mdscan"
)

// documentByLink lets a tool's document argument be one of the links the tools give (a
// page URL, a Markdown link copied whole, a compass:// URI): it becomes the id the link
// names. A name that is no link is left for docstore to find by id or title.
func documentByLink(dst any) {
	v := reflect.ValueOf(dst).Elem()
	for _, f := range fieldsOf(v.Type()) {
		if fv := v.Field(f.index); f.name == "document" && fv.Kind() == reflect.String {
			if id, ok := mdscan.DocumentID(fv.String()); ok {
				fv.SetString(id)
			}
		}
	}
}

// linkBase is the prefix of document links now: LinkBaseFunc's answer when it is set
// (the page may come and go while the server runs), else LinkBase.
func (s *Server) linkBase() string {
	if s.cfg.LinkBaseFunc != nil {
		return s.cfg.LinkBaseFunc()
	}
	return s.cfg.LinkBase
}

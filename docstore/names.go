package docstore

import "github.com/compass-mcp/compass-mcp/spaces"

// Names calls fn with people's display names as they are now, all read in one read
// transaction, so that a listing shows every row with the same names. fn runs once, after
// the transaction (what it writes is never written twice by a View run again).
func (s *Store) Names(fn func(names spaces.Names)) error {
	if s.names != nil && s.names.read { // read by the last read of a WithNames store
		fn(s.names.names)
		return nil
	}
	names, err := spaces.ReadNames(s.db)
	if err != nil {
		return err
	}
	fn(names)
	return nil
}

// Show gives who saved a version as people read it: "Ana", "north for Ana", or, for an
// accepted proposal, "north for Ana, accepted by Ana".
func (a Author) Show(names spaces.Names) string {
	who := names.ShowString(a.By)
	if a.For != "" {
		who += " for " + names.ShowString(a.For)
	}
	if a.Accepted != "" {
		who += ", accepted by " + names.ShowString(a.Accepted)
	}
	return who
}

package docstore

// ValidID reports whether id has the shape of the ids a store makes: a ULID, 26 characters
// of Crockford's base32 in upper case, the first at most 7 (its time fits in 48 bits). A
// client that takes ids from elsewhere (a sync's listing from a server) checks them with
// it before an id names anything, a file among others.
func ValidID(id string) bool {
	if len(id) != 26 || id[0] < '0' || id[0] > '7' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z' && c != 'I' && c != 'L' && c != 'O' && c != 'U':
		default:
			return false
		}
	}
	return true
}

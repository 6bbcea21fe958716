package access

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/compass-mcp/compass-mcp/spaces"
)

// Known is who and what a store has heard of: the people who are members of a space, hold
// a token, have a display name (spaces.SetName) or are the owner (WithOwner); the spaces
// that hold anything, have members, or are the owner's. An admin command checks the names it
// is given against it, so that a typo is not taken for someone, or somewhere, new.
type Known struct {
	People, Spaces []string // sorted, once each
}

// Known returns who and what the store has heard of.
func (s *Store) Known(ctx context.Context) (Known, error) {
	var k Known
	members, err := s.Members(ctx, "")
	if err != nil {
		return k, err
	}
	for _, m := range members {
		k.People, k.Spaces = append(k.People, m.Person), append(k.Spaces, m.Space)
	}
	tokens, err := s.Tokens(ctx, "")
	if err != nil {
		return k, err
	}
	for _, t := range tokens {
		k.People = append(k.People, t.Person)
	}
	named, err := spaces.People(ctx, s.db)
	if err != nil {
		return k, err
	}
	for _, p := range named {
		k.People = append(k.People, p.ID)
	}
	kept, err := spaces.List(ctx, s.db)
	if err != nil {
		return k, err
	}
	k.Spaces = append(k.Spaces, kept...)
	slices.Sort(k.People)
	slices.Sort(k.Spaces)
	k.People, k.Spaces = slices.Compact(k.People), slices.Compact(k.Spaces)
	return k, nil
}

// Person reports whether person is among k's people.
func (k Known) Person(person string) bool { _, ok := slices.BinarySearch(k.People, person); return ok }

// Space reports whether space is among k's spaces.
func (k Known) Space(space string) bool { _, ok := slices.BinarySearch(k.Spaces, space); return ok }

// List is names for a message: "none yet", or up to ten of them, comma-separated.
func List(names []string) string {
	switch {
	case len(names) == 0:
		return "none yet"
	case len(names) > 10:
		return strings.Join(names[:10], ", ") + ", …"
	}
	return strings.Join(names, ", ")
}

// Describe says everything about a token but its secret, in one line, as of now.
func (t Token) Describe(now time.Time) string {
	parts := []string{"for " + t.Person}
	if t.Agent != "" {
		parts = append(parts, "agent "+t.Agent)
	} else {
		parts = append(parts, "agent: the client's name")
	}
	if len(t.Spaces) > 0 {
		parts = append(parts, "spaces "+strings.Join(t.Spaces, ", "))
	} else {
		parts = append(parts, "every space of "+t.Person)
	}
	if t.ReadOnly {
		parts = append(parts, "read-only")
	} else {
		parts = append(parts, "read-write")
	}
	if t.Review {
		parts = append(parts, "changes reviewed")
	}
	if t.Client != "" {
		parts = append(parts, "via "+t.Client)
	}
	if t.Resource != "" {
		parts = append(parts, "bound to "+t.Resource)
	}
	const when = "2006-01-02 15:04"
	switch {
	case t.Expires.IsZero():
		parts = append(parts, "never expires")
	case now.Before(t.Expires):
		parts = append(parts, "expires "+t.Expires.Local().Format(when))
	default:
		parts = append(parts, "expired "+t.Expires.Local().Format(when))
	}
	if t.LastUsed.IsZero() {
		parts = append(parts, "never used")
	} else {
		parts = append(parts, "last used "+t.LastUsed.Local().Format(when))
	}
	if !t.Revoked.IsZero() {
		parts = append(parts, "REVOKED "+t.Revoked.Local().Format(when))
	}
	return strings.Join(parts, " · ")
}

// String is m as members list shows it: space, person and since when, tab-separated.
func (m Member) String() string {
	since := "the server's own person and space (--for, --space): no row"
	if !m.Added.IsZero() {
		since = "since " + m.Added.Local().Format("2006-01-02 15:04")
	}
	return m.Space + "\t" + m.Person + "\t" + since
}

// ParseExpiry reads when a token made at now expires: 90d (days), 12h or 30m (hours and
// minutes, as time.ParseDuration reads them) from now; "" and "never" are no expiry (zero).
func ParseExpiry(s string, now time.Time) (time.Time, error) {
	if s == "" || s == "never" {
		return time.Time{}, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n > 100*365 {
			return time.Time{}, fmt.Errorf("a token's expiry is like 90d, 12h or 30m; got %q", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return time.Time{}, fmt.Errorf("a token's expiry is like 90d, 12h or 30m; got %q", s)
		}
	}
	if d <= 0 {
		return time.Time{}, fmt.Errorf("a token's expiry must be in the future; got %q", s)
	}
	return now.Add(d), nil
}

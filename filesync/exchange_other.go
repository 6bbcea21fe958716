//go:build !linux

package filesync

import "errors"

// exchange is Linux's alone: elsewhere a write over a file looks, then renames, and a save
// that falls between the two is written over (the window is a few microseconds).
func exchange(a, b string) error { return errNoExchange }

var errNoExchange = errors.New("no atomic exchange on this system")

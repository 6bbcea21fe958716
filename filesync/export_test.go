package filesync

import "errors"

// KillAfterWrite makes the pass stop right after it writes a new document's file, once,
// having called left (where a sync killed there leaves the folder and its state). It is
// undone when the returned func is called.
func KillAfterWrite(left func()) (undo func()) {
	afterWrite = func() error {
		afterWrite = nil
		left()
		return errors.New("killed after a write")
	}
	return func() { afterWrite = nil }
}

// WhileScanning runs f as the folder's scan enters each folder (rel, slash-separated; "."
// the top), before it reads it: where an editor's move between two folders can pass the
// scan by. It is undone when the returned func is called.
func WhileScanning(f func(rel string)) (undo func()) {
	scanning = f
	return func() { scanning = nil }
}

// ReadBeneath is readBeneath, and ErrNotBeneath errNotBeneath, for the tests.
var (
	ReadBeneath   = readBeneath
	ErrNotBeneath = errNotBeneath
)

package filesync

import "sync"

// KillAfterWrite makes y's pass stop right after it writes a file, once, having called
// left, as a sync killed there stops: the state is not saved. It is undone when the
// returned func is called.
func KillAfterWrite(y *Sync, left func()) (undo func()) {
	var once sync.Once
	return KillAt(y, func(point string) bool {
		killed := false
		if point == crashWritten {
			once.Do(func() { left(); killed = true })
		}
		return killed
	})
}

// KillAt makes y's passes ask kill at each named crash point (CrashPoints), and stop there
// as a kill would (the state not saved) when it says true. kill may be called from several
// goroutines at once. It is undone when the returned func is called.
func KillAt(y *Sync, kill func(point string) bool) (undo func()) {
	y.crash = kill
	return func() { y.crash = nil }
}

// CrashPoints are the named points a pass can be killed at (crash.go).
var CrashPoints = crashPoints

// WhileScanning runs f as y's scan enters each folder (rel, slash-separated; "." the
// top), before it reads it: where an editor's move between two folders can pass the scan
// by. It is undone when the returned func is called.
func WhileScanning(y *Sync, f func(rel string)) (undo func()) {
	y.scanning = f
	return func() { y.scanning = nil }
}

// ReadBeneath is readBeneath, and ErrNotBeneath errNotBeneath, for the tests.
var (
	ReadBeneath   = readBeneath
	ErrNotBeneath = errNotBeneath
)

//go:build !unix && !windows

package clientconfig

import "os"

// lockFile does nothing where the system has no advisory lock Go reaches (wasm, plan9):
// installs there rely on Write's comparison alone.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) {}

//go:build !unix && !windows

package filesync

import "os"

// tryLock does nothing where the system has no advisory lock Go reaches (wasm, plan9):
// there, two syncs of one folder are not kept apart.
func tryLock(*os.File) (bool, error) { return false, nil }

func unlockFile(*os.File) {}

package docstore

// SetSnapshotEvery sets how often a version is stored whole, for tests; it returns a func
// that puts it back.
func SetSnapshotEvery(k int) (restore func()) {
	old := snapshotEvery
	snapshotEvery = k
	return func() { snapshotEvery = old }
}

// SameLinks is sameLinks of the change from old to new, for tests.
func SameLinks(old, new string) bool { return sameLinks(diffTexts(old, new)) }

package docstore

// SetSnapshotEvery sets how often a version is stored whole, for tests; it returns a func
// that puts it back.
func SetSnapshotEvery(k int) (restore func()) {
	old := snapshotEvery
	snapshotEvery = k
	return func() { snapshotEvery = old }
}

package filesync

// KillAfterProposal makes the next proposal a clash makes stop the pass right after it is
// made, before the sync's state notes it: where a sync killed would leave it. It is undone
// when the returned func is called.
func KillAfterProposal(err error) (undo func()) {
	afterProposal = func() error { return err }
	return func() { afterProposal = nil }
}

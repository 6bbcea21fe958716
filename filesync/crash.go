package filesync

import "errors"

// The points of a pass where a sync killed (kill -9, a crash, a laptop's lid) leaves the
// folder, the space and the state each as they are, named for what was just done: the
// state, written only at a pass's end and before what it notes ahead (State.Creating,
// State.Writing), is what the next pass finds. TestSyncCrashPoints kills a pass at each,
// and checks that the next passes lose nothing and duplicate nothing.
const (
	crashCreating  = "creating noted" // the new files noted ahead, before any is made a document
	crashCreated   = "created"        // a document made of a new file, the state not noting it
	crashWriting   = "writing noted"  // new documents' files noted ahead, before any is written
	crashWritten   = "written"        // a file written (a new document's, or a changed one's)
	crashSaved     = "saved"          // a file's text saved as a version
	crashJoining   = "joining noted"  // the files to join noted ahead, before any is joined
	crashJoined    = "joined"         // a first run's file and document joined (saved if they differed)
	crashRenamed   = "renamed"        // a document renamed for its file moved
	crashMoved     = "moved"          // a file moved for its document renamed
	crashDeleted   = "deleted"        // a document deleted for its file gone
	crashUndeleted = "undeleted"      // a document deleted in the space brought back for an edit
	crashRemoved   = "removed"        // a file removed for its document deleted in the space
)

// crashPoints are the named points, in the order a pass may reach them.
var crashPoints = []string{crashUndeleted, crashRenamed, crashMoved, crashSaved, crashWritten, crashDeleted, crashRemoved, crashJoining, crashJoined, crashCreating, crashCreated, crashWriting}

// errKilled is a pass stopped at a crash point (by a test): apply returns it without
// saving the state, as a kill would.
var errKilled = errors.New("killed (a test's crash point)")

// crash stops the pass at point if the test asks it to.
func (p *pass) crash(point string) error {
	if p.y.crash != nil && p.y.crash(point) {
		return errKilled
	}
	return nil
}

package docstore

// Work is what a call does with a document, for its weight (Document.Weight).
type Work int

const (
	WorkLines   Work = iota // cuts a few lines out of a version (ReadLines)
	WorkBlame               // follows the latest lines down the history (Blame)
	WorkSection             // finds a heading's part of a version (ReadSection)
	WorkRead                // reads a version whole and answers it (Read)
	WorkDiff                // diffs two versions (Diff, Since, a proposal)
	WorkWrite               // saves a new version: reads, diffs or merges, writes (Write, Append, Edit)
)

// workFactor is, for each Work, how many times the text's size one call holds at most,
// about, as measured with allocations per call on a 7.7 MiB document of 10 versions
// (docs/PERFORMANCE.md, section 14: go test -bench Touch
// -benchmem ./docstore), with room for the answer on its way out: a few lines are the
// version's record read (in place on bbolt, a copy on PostgreSQL); a blame 1.4 times;
// a section 2.6; a whole read 1 and its answer; a diff 2.0 and its answer; an append
// 4.6 (a merge more).
var workFactor = [...]int64{WorkLines: 1, WorkBlame: 2, WorkSection: 3, WorkRead: 4, WorkDiff: 3, WorkWrite: 6}

// Weight is the bytes a call doing w with d may hold at once, for the budget of work in
// flight (internal/inflight): w's factor times its latest text's size, or, when old (a
// version before the latest is read, rebuilt or merged from), times the largest text any
// version of it had (Largest): rebuilding an old version starts from a later version
// kept whole, which may be larger than the latest.
func (d Document) Weight(w Work, old bool) int64 {
	size := d.Bytes
	if old {
		size = max(size, d.Largest)
	}
	f := workFactor[WorkWrite]
	if w >= 0 && int(w) < len(workFactor) {
		f = workFactor[w]
	}
	return f * int64(size)
}

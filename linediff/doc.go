// Package linediff compares and merges texts line by line.
//
// It is the single diff engine of the document store: [Diff] computes the
// runs that turn one list of lines into another, [Stats] and [Unified]
// summarise and render them, and [Merge3] reconciles two edits of a common
// ancestor. A line is the text up to and including its "\n"; the last line
// of a text may lack one, so "x" and "x\n" are different lines and every
// function here treats them as such.
//
// [Diff] trims the common prefix and suffix, interns lines to integers,
// sets aside lines that occur on one side only (they can never match), and
// runs a linear-space Myers search (divide and conquer on the middle snake)
// on what remains, with the cost heuristics of git's xdiff. The result is
// minimal for small and moderate edits and as near minimal as git's on
// large ones. Pure insertions and deletions are then slid down as far as
// equal lines allow, so that, as in git, an inserted paragraph is shown
// with its trailing blank line rather than its leading one.
//
// # Bounds
//
// One call of [Diff] does linear work to trim, intern and set lines aside,
// plus at most 2^25 units of search work, a unit being one line comparison
// or one diagonal visited. A unit costs 2 to 4 ns on 1 MB texts and up to
// 10 ns on texts of a million lines, so the search takes at most about
// 150 ms on the former and half a second on the latter. Memory is linear
// in the number of lines.
//
// Two limits keep the search within that. First, as in git, the search of
// each region stops at an edit cost of about the square root of the
// region's size (at least 256) and cuts the region at the furthest point
// reached, each part then being diffed on its own: the result is still a
// correct diff, only perhaps not minimal. This alone finishes realistic
// edits in a few million units, and even a 1 MB text against a shuffled
// copy of itself in 24M units (50 ms). Second, once the 2^25 units are
// spent, every region not yet resolved is reported as wholly replaced,
// its old lines deleted and its new lines inserted: the diff stays
// correct and merely gets coarser.
//
// [Stats], [Unified] and [Merge3] run one or two diffs plus linear work,
// so the same bounds hold. A region coarsened by the budget can only turn
// a clean merge into a reported conflict, never into a wrong merge.
//
// # Beside git merge-file
//
// TestMergeAgainstGit runs [Merge3] and git merge-file on 2,000 generated
// cases. On the half whose lines each occur once, the two agree on every
// case: the same clean merges, the same clashes (git also refuses changes
// that merely touch). On the half made of few distinct lines they
// disagree on about 8 cases in 1,000, of three kinds, all from where a
// diff may align equal lines:
//
//   - We clash, git merges (about 6 in 1,000). Among repeated lines
//     several alignments are equally short, and ours and git's xdiff
//     (with its own heuristics) may pick different ones, which moves where
//     each side's change sits: ours may find the two changes touching
//     where git's find them apart. git merge-file also refines a clash
//     "zealously": lines both sides changed alike at the ends of a clashing
//     region are taken as merged, and the region shrinks or vanishes; ours
//     reports the region whole. Either way nothing is lost: the person or
//     the model is asked, where git would have decided.
//   - We merge, git clashes (about 1 in 1,000): the same difference of
//     alignment the other way round. Our merge still applies both sides'
//     changes as our diffs see them.
//   - Both merge, differently (about 1 in 1,000): one side deleted one of
//     several equal lines and which one can't be told; each tool's diff
//     picks one, and if the other side deleted an equal line nearby, one
//     merge takes the two deletions as the same change (made once) and the
//     other as two. Both are correct readings of the sides.
package linediff

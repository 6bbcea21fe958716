package filesync

import "time"

// deleteWindow is how long the guards remember the deletes the passes made: removals
// spread over passes (a cloud client evicting files one by one, a script with a sleep)
// count together, against the folder's largest size in the window, as one rm *.md would.
const deleteWindow = 10 * time.Minute

// Window is what the guards remember of the last deleteWindow (State.Window): when each
// document was deleted for a file removed, when each file was removed for a document
// deleted in the space, and the folder's sizes (documents it held) at the passes, kept as
// a sliding maximum (each size larger than every later one), so it stays short.
type Window struct {
	Deleted []int64 `json:"deleted,omitempty"` // Unix ns
	Removed []int64 `json:"removed,omitempty"`
	Sizes   []Size  `json:"sizes,omitempty"`
}

// Size is the folder's size at a pass.
type Size struct {
	At int64 `json:"at"` // Unix ns
	N  int   `json:"n"`
}

// since drops what is older than the window before now.
func (w *Window) since(now time.Time) {
	from := now.Add(-deleteWindow).UnixNano()
	keep := func(ts []int64) []int64 {
		i := 0
		for i < len(ts) && ts[i] < from {
			i++
		}
		return ts[i:]
	}
	w.Deleted, w.Removed = keep(w.Deleted), keep(w.Removed)
	i := 0
	for i < len(w.Sizes) && w.Sizes[i].At < from {
		i++
	}
	w.Sizes = w.Sizes[i:]
}

// sized notes the folder's size n at now.
func (w *Window) sized(now time.Time, n int) {
	for len(w.Sizes) > 0 && w.Sizes[len(w.Sizes)-1].N <= n {
		w.Sizes = w.Sizes[:len(w.Sizes)-1]
	}
	w.Sizes = append(w.Sizes, Size{At: now.UnixNano(), N: n})
}

// peak is the folder's largest size in the window (sized first).
func (w *Window) peak() int {
	if len(w.Sizes) == 0 {
		return 0
	}
	return w.Sizes[0].N
}

// note notes n stamps of now in ts.
func note(ts []int64, now time.Time, n int) []int64 {
	for range n {
		ts = append(ts, now.UnixNano())
	}
	return ts
}

// tooMany reports whether n more, with the window's recent, would be more than a fifth of
// the folder's peak (and more than one).
func tooMany(n, recent, peak int) bool {
	total := n + recent
	return n > 0 && total > 1 && total*5 > peak
}

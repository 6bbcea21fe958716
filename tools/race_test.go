//go:build race

package tools_test

// raceEnabled: the race detector makes CPU several times dearer, so CPU budgets are
// logged, not checked.
const raceEnabled = true

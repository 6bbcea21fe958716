//go:build !race

package docstore_test

const raceEnabled = false

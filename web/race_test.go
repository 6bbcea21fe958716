//go:build race

package web

// raceEnabled is true when the tests run with -race, which slows what they measure.
const raceEnabled = true

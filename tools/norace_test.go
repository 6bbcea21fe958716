//go:build !race

package tools_test

const raceEnabled = false

//go:build race

package testbin

// raceEnabled is true when the tests run with -race: the binary they drive is built with
// it too, so that a data race in the server fails the end-to-end tests as well.
const raceEnabled = true

// Package style holds the checks of the house style that gofmt, go vet and staticcheck don't
// make: see its tests.
package style

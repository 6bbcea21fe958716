//go:build race

package mdscan

// cpuScale: the race detector makes a scan several times dearer in CPU; a bound checked
// under it is that many times looser (still far below what a quadratic scan would take).
const cpuScale = 5

//go:build !race

package mdscan

const cpuScale = 1

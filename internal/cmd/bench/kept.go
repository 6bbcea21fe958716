package main

import (
	"bytes"
	"os"
)

// keptMarker starts the part of docs/PERFORMANCE.md that this command doesn't measure:
// figures from go test benchmarks (search), written by hand with the commands they give.
// A run keeps that part as it is, after the report it writes.
const keptMarker = "<!-- kept by bench: the sections below come from go test benchmarks -->"

// keptPart is the part of the file at path from keptMarker on, or nil.
func keptPart(path string) []byte {
	old, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	if i := bytes.Index(old, []byte(keptMarker)); i >= 0 {
		return old[i:]
	}
	return nil
}

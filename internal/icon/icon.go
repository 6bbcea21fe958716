// Package icon is compass-mcp's one picture, a compass needle (north red) on a dark blue
// rounded square with a ring, as the files each place that shows it takes: the MCP server's
// and its tools' icons, the person's page's favicon, and the Claude Desktop bundle's icon.
//
// The files are drawn from one description of the shapes by the test's generator
// (go test ./icon -update): icon.svg is those shapes as SVG, and the PNGs are them
// rasterized, so the SVG and every size of PNG are the same design.
package icon

import (
	_ "embed"
	"encoding/base64"
)

// SVG is the icon as SVG, for any size.
//
//go:embed icon.svg
var SVG []byte

// PNG48 is the icon as a 48×48 PNG: what clients show beside a server or a tool, and the
// page's favicon.
//
//go:embed icon-48.png
var PNG48 []byte

// PNG512 is the icon as a 512×512 PNG, the size Claude Desktop asks of a bundle's icon.
//
//go:embed icon-512.png
var PNG512 []byte

// Paths where the person's page serves the icon (web), which tools/list names when the
// page has an address (tools). Short on purpose: every tool in tools/list repeats one.
const (
	SVGPath = "/icon.svg"
	PNGPath = "/icon.png" // PNG48
)

// DataURI is b as a data: URI of the media type mime, base64 encoded: an icon any client
// can show without fetching anything.
func DataURI(mime string, b []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)
}

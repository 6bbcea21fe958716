package icon

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "draw icon.svg and the PNGs again from design")

// A shape of the design, on a 512×512 canvas, and how it is filled.
type shape struct {
	kind  string      // "square" (the rounded background), "ring", "disc" or "triangle"
	p     []float64   // square: corner radius; ring: cx, cy, r, width; disc: cx, cy, r; triangle: x1, y1, x2, y2, x3, y3
	color color.NRGBA // opaque
}

var (
	blue  = color.NRGBA{0x1f, 0x3a, 0x5f, 255}
	paper = color.NRGBA{0xf4, 0xf1, 0xea, 255}
	red   = color.NRGBA{0xe4, 0x57, 0x2e, 255}
)

// design is the icon, in the order shapes are painted (each over those before it): a
// rounded square, a ring, the needle (north up, red) and its hub.
var design = []shape{
	{"square", []float64{96}, blue},
	{"ring", []float64{256, 256, 211, 22}, paper},
	{"triangle", []float64{256, 70, 212, 256, 300, 256}, red},
	{"triangle", []float64{256, 442, 212, 256, 300, 256}, paper},
	{"disc", []float64{256, 256, 30}, paper},
	{"disc", []float64{256, 256, 22}, blue},
}

// has reports whether the point (x, y) of the 512×512 canvas is inside s.
func (s shape) has(x, y float64) bool {
	p := s.p
	switch s.kind {
	case "square":
		const c = 256.0
		r := p[0]
		qx, qy := math.Max(math.Abs(x-c)-(c-r), 0), math.Max(math.Abs(y-c)-(c-r), 0)
		return qx*qx+qy*qy <= r*r
	case "ring":
		return math.Abs(math.Hypot(x-p[0], y-p[1])-p[2]) < p[3]/2
	case "disc":
		return math.Hypot(x-p[0], y-p[1]) < p[2]
	case "triangle":
		d1 := (x-p[2])*(p[1]-p[3]) - (p[0]-p[2])*(y-p[3])
		d2 := (x-p[4])*(p[3]-p[5]) - (p[2]-p[4])*(y-p[5])
		d3 := (x-p[0])*(p[5]-p[1]) - (p[4]-p[0])*(y-p[1])
		neg := d1 < 0 || d2 < 0 || d3 < 0
		pos := d1 > 0 || d2 > 0 || d3 > 0
		return !(neg && pos)
	}
	panic("unknown shape " + s.kind)
}

func hex(c color.NRGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// svg is design as SVG: the same shapes, painted in the same order.
func svg() []byte {
	var b bytes.Buffer
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512">` + "\n")
	for _, s := range design {
		p := s.p
		switch s.kind {
		case "square":
			fmt.Fprintf(&b, `<rect width="512" height="512" rx="%g" fill="%s"/>`, p[0], hex(s.color))
		case "ring":
			fmt.Fprintf(&b, `<circle cx="%g" cy="%g" r="%g" fill="none" stroke="%s" stroke-width="%g"/>`, p[0], p[1], p[2], hex(s.color), p[3])
		case "disc":
			fmt.Fprintf(&b, `<circle cx="%g" cy="%g" r="%g" fill="%s"/>`, p[0], p[1], p[2], hex(s.color))
		case "triangle":
			fmt.Fprintf(&b, `<path d="M%g %gL%g %gL%g %gZ" fill="%s"/>`, p[0], p[1], p[2], p[3], p[4], p[5], hex(s.color))
		}
		b.WriteByte('\n')
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// draw rasterizes design at size×size: each pixel averages 4×4 samples, so that edges are
// smooth; outside the square is transparent.
func draw(size int) *image.NRGBA {
	const sub = 4
	scale := 512 / float64(size)
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	sample := func(x, y float64) (color.NRGBA, bool) {
		for i := len(design) - 1; i >= 0; i-- {
			if design[i].has(x, y) {
				return design[i].color, true
			}
		}
		return color.NRGBA{}, false
	}
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			var r, g, b, n float64
			for i := 0; i < sub; i++ {
				for j := 0; j < sub; j++ {
					c, ok := sample((float64(x)+(float64(i)+0.5)/sub)*scale, (float64(y)+(float64(j)+0.5)/sub)*scale)
					if ok {
						r, g, b, n = r+float64(c.R), g+float64(c.G), b+float64(c.B), n+1
					}
				}
			}
			if n == 0 {
				continue
			}
			img.SetNRGBA(x, y, color.NRGBA{
				R: uint8(math.Round(r / n)), G: uint8(math.Round(g / n)), B: uint8(math.Round(b / n)),
				A: uint8(math.Round(255 * n / sub / sub)),
			})
		}
	}
	return img
}

var pngs = []struct {
	name string
	size int
	file []byte
}{
	{"icon-48.png", 48, PNG48},
	{"icon-512.png", 512, PNG512},
}

// The committed files are what design draws: icon.svg byte for byte, the PNGs pixel by
// pixel (PNG encoders may differ in bytes between Go versions).
func TestFilesAreTheDesign(t *testing.T) {
	if *update {
		if err := os.WriteFile("icon.svg", svg(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, p := range pngs {
			var b bytes.Buffer
			if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&b, draw(p.size)); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p.name, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	if !bytes.Equal(SVG, svg()) {
		t.Errorf("icon.svg is not what design draws (go test ./icon -update)")
	}
	for _, p := range pngs {
		want := draw(p.size)
		got, err := png.Decode(bytes.NewReader(p.file))
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if got.Bounds() != want.Bounds() {
			t.Fatalf("%s is %v, design draws %v (go test ./icon -update)", p.name, got.Bounds(), want.Bounds())
		}
		for y := 0; y < p.size; y++ {
			for x := 0; x < p.size; x++ {
				if color.NRGBAModel.Convert(got.At(x, y)) != want.At(x, y) {
					t.Fatalf("%s differs from what design draws at (%d, %d) (go test ./icon -update)", p.name, x, y)
				}
			}
		}
	}
	t.Logf("icon.svg %d bytes, icon-48.png %d, icon-512.png %d", len(SVG), len(PNG48), len(PNG512))
}

// Clients are told to treat SVG icons as untrusted; this one gives them nothing to distrust:
// well-formed XML of shapes only, no script, no event attribute, no link to anything.
func TestSVGIsOnlyShapes(t *testing.T) {
	d := xml.NewDecoder(bytes.NewReader(SVG))
	allowed := map[string]bool{"svg": true, "rect": true, "circle": true, "path": true}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("icon.svg is not well-formed XML: %v", err)
		}
		if e, ok := tok.(xml.StartElement); ok {
			if !allowed[e.Name.Local] {
				t.Errorf("icon.svg has a <%s>", e.Name.Local)
			}
			for _, a := range e.Attr {
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") || a.Name.Local == "href" || strings.Contains(a.Value, "url(") {
					t.Errorf("icon.svg's <%s> has %s=%q", e.Name.Local, a.Name.Local, a.Value)
				}
			}
		}
	}
}

package main

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "draw icon.png again")

// drawIcon draws the bundle's icon, 512×512 as Claude Desktop recommends: a compass needle,
// north red, on a dark blue rounded square, with a ring; each pixel averages 4×4 samples so
// that the edges are smooth.
func drawIcon() *image.NRGBA {
	const size, sub = 512, 4
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	type rgba struct{ r, g, b, a float64 }
	background := rgba{0x1f, 0x3a, 0x5f, 255}
	ring := rgba{0xf4, 0xf1, 0xea, 255}
	north := rgba{0xe4, 0x57, 0x2e, 255}
	south := rgba{0xf4, 0xf1, 0xea, 255}
	hub := rgba{0x1f, 0x3a, 0x5f, 255}
	// inTriangle reports whether p is inside the triangle abc.
	inTriangle := func(px, py, ax, ay, bx, by, cx, cy float64) bool {
		d1 := (px-bx)*(ay-by) - (ax-bx)*(py-by)
		d2 := (px-cx)*(by-cy) - (bx-cx)*(py-cy)
		d3 := (px-ax)*(cy-ay) - (cx-ax)*(py-ay)
		neg := d1 < 0 || d2 < 0 || d3 < 0
		pos := d1 > 0 || d2 > 0 || d3 > 0
		return !(neg && pos)
	}
	sample := func(x, y float64) rgba {
		const c, r = size / 2, 96.0 // centre; corner radius of the square
		// Outside the rounded square: transparent.
		qx, qy := math.Max(math.Abs(x-c)-(c-r), 0), math.Max(math.Abs(y-c)-(c-r), 0)
		if qx*qx+qy*qy > r*r {
			return rgba{}
		}
		d := math.Hypot(x-c, y-c)
		switch {
		case d < 22:
			return hub
		case d < 30:
			return ring
		case inTriangle(x, y, c, 70, c-44, c, c+44, c): // the needle, north up
			return north
		case inTriangle(x, y, c, size-70, c-44, c, c+44, c):
			return south
		case d > 200 && d < 222:
			return ring
		}
		return background
	}
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			var sum rgba
			for i := 0; i < sub; i++ {
				for j := 0; j < sub; j++ {
					s := sample(float64(x)+(float64(i)+0.5)/sub, float64(y)+(float64(j)+0.5)/sub)
					sum.r += s.r * s.a
					sum.g += s.g * s.a
					sum.b += s.b * s.a
					sum.a += s.a
				}
			}
			if sum.a == 0 {
				continue
			}
			img.SetNRGBA(x, y, color.NRGBA{
				R: uint8(math.Round(sum.r / sum.a)), G: uint8(math.Round(sum.g / sum.a)), B: uint8(math.Round(sum.b / sum.a)),
				A: uint8(math.Round(sum.a / sub / sub)),
			})
		}
	}
	return img
}

// The committed icon.png is what drawIcon draws (compared pixel by pixel: PNG encoders may
// differ in bytes between Go versions).
func TestIcon(t *testing.T) {
	want := drawIcon()
	if *update {
		var b bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&b, want); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("icon.png", b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := png.Decode(bytes.NewReader(icon))
	if err != nil {
		t.Fatalf("icon.png: %v", err)
	}
	if got.Bounds() != want.Bounds() {
		t.Fatalf("icon.png is %v, drawIcon draws %v (go test ./internal/release -run Icon -update)", got.Bounds(), want.Bounds())
	}
	for y := 0; y < want.Rect.Dy(); y++ {
		for x := 0; x < want.Rect.Dx(); x++ {
			if color.NRGBAModel.Convert(got.At(x, y)) != want.At(x, y) {
				t.Fatalf("icon.png differs from what drawIcon draws at (%d, %d) (go test ./internal/release -run Icon -update)", x, y)
			}
		}
	}
}

package main

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"fmt"
)

// universal joins thin Mach-O executables (darwin/amd64 and darwin/arm64) into one
// universal ("fat") executable, as Apple's lipo does: macOS runs the slice of its own
// processor. A bundle's manifest can choose a command by operating system but not by
// processor, so this is how one bundle serves both kinds of Mac. Each slice is kept byte
// for byte (with the ad-hoc signature Go's linker gives darwin/arm64), at a 16 KiB boundary.
//
// The format (<mach-o/fat.h>): a big-endian header, magic 0xcafebabe and the number of
// slices, then for each its CPU type, CPU subtype, offset, size and alignment (a power of two).
func universal(thin ...[]byte) ([]byte, error) {
	const align = 14 // 2^14: the page size of arm64 macOS, and a multiple of x86-64's
	type slice struct {
		cpu, sub uint32
		data     []byte
	}
	var slices []slice
	for _, b := range thin {
		f, err := macho.NewFile(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("making a universal binary: %w", err)
		}
		slices = append(slices, slice{uint32(f.Cpu), f.SubCpu, b})
		f.Close()
	}
	var out bytes.Buffer
	binary.Write(&out, binary.BigEndian, [2]uint32{macho.MagicFat, uint32(len(slices))})
	offset := uint32(1 << align)
	for _, s := range slices {
		binary.Write(&out, binary.BigEndian, [5]uint32{s.cpu, s.sub, offset, uint32(len(s.data)), align})
		offset += (uint32(len(s.data)) + 1<<align - 1) &^ (1<<align - 1)
	}
	for _, s := range slices {
		out.Write(make([]byte, (out.Len()+1<<align-1)&^(1<<align-1)-out.Len()))
		out.Write(s.data)
	}
	return out.Bytes(), nil
}

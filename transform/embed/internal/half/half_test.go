package half

import (
	"math"
	"testing"
)

func TestFromFloat32(t *testing.T) {
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{0, 0x0000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00},
		{-2, 0xc000},
		{0.5, 0x3800},
		{1.0 / 3, 0x3555},
		{65504, 0x7bff}, // the largest half
		{65519, 0x7bff}, // rounds down to it
		{65520, 0x7c00}, // rounds up to infinity
		{float32(math.Inf(-1)), 0xfc00},
		{float32(math.NaN()), 0x7c00},             // no NaN is written
		{0x1p-24, 0x0001},                         // the smallest subnormal
		{0x1p-25, 0x0000},                         // a tie: to even, zero
		{0x1.8p-25, 0x0001},                       // above the tie
		{0x1p-14, 0x0400},                         // the smallest normal
		{1 + 0x1p-11, 0x3c00},                     // a tie: to even, down
		{1 + 0x3p-11, 0x3c02},                     // a tie: to even, up
		{2047.0 / 1024 * 0x1p-15, 0x0400},         // a subnormal rounding into the normals
		{float32(math.SmallestNonzeroFloat32), 0}, // far below
	} {
		if got := FromFloat32(c.f); got != c.want {
			t.Errorf("FromFloat32(%g) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
}

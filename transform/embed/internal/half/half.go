// Package half converts float32 values to IEEE 754 half precision, as
// model2vec models store their vectors in F16: the models pos-embed model
// train writes, and the tiny ones the tests write (statictest).
package half

import "math"

// FromFloat32 converts f to half precision, rounding to nearest even: a
// value too large (and NaN) is an infinity, one too small a zero, each of
// f's sign.
func FromFloat32(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	frac := b & 0x7fffff
	switch {
	case b&0x7fffffff == 0:
		return sign
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		frac |= 0x800000
		shift := uint(14 - exp)
		half := uint32(1) << (shift - 1)
		m := frac >> shift
		if r := frac & (1<<shift - 1); r > half || r == half && m&1 == 1 {
			m++
		}
		return sign | uint16(m)
	}
	m := frac >> 13
	if r := frac & 0x1fff; r > 0x1000 || r == 0x1000 && m&1 == 1 {
		m++
		if m == 0x400 {
			m = 0
			exp++
			if exp >= 0x1f {
				return sign | 0x7c00
			}
		}
	}
	return sign | uint16(exp)<<10 | uint16(m)
}

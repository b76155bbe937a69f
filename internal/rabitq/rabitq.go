// Package rabitq gives each vector a code of one bit per dimension and
// estimates inner products from it, with a bound on the error, after the
// RaBitQ method (Gao and Long, SIGMOD 2024). The vector scan of a search
// reads these codes first, an eighth of the bytes of its one-byte-per-
// dimension codes, and computes the exact score only for the rows whose
// estimate, plus its bound, could still place them among the best.
//
// A vector is first rotated: padded with zeros to a power of two and
// multiplied by a fixed randomized Hadamard transform (sign flips drawn
// from a fixed seed, then the fast Walsh–Hadamard transform, twice), which
// spreads its mass evenly over the coordinates, so that their signs carry
// the same information whatever the vector (without it, the signs of
// vectors whose mass sits in a few coordinates say little). The code is
// the signs of the rotated vector. For a vector o and a unit query q,
// with r = P·o and x = sign(r),
//
//	<o, q> ≈ |o|² · <x, P·q> / Σ|r_i|
//
// and the error of that estimate is, with high probability, within
// eps · |o| · sqrt(1-c²)/c / sqrt(n-1), where c = Σ|r_i| / (sqrt(n)·|o|) is
// how well the signs align with r and eps a few standard deviations
// (Theorem 3.2 of the paper).
//
// The rotation is part of the code's format: Version names it, and codes
// made with another version are not compared with this one's queries.
package rabitq

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// Version names the rotation (its seed and rounds) and the code's layout.
const Version = 1

// Eps is the bound's width in standard deviations of the estimate's
// error: a row is passed over only when its estimate is further than that
// below the score it must beat. The error is about normal, and beyond 4
// standard deviations lies less than one row in ten thousand.
const Eps = 4.0

const (
	rounds = 2
	seed   = 0x706f73 // "pos"
)

// Dims is the rotated dimension of vectors of dim dimensions: the least
// power of two that holds them, at least 64 (a code is whole uint64s).
func Dims(dim int) int {
	n := 64
	for n < dim {
		n *= 2
	}
	return n
}

// CodeBytes is the size of a code of vectors of dim dimensions.
func CodeBytes(dim int) int { return Dims(dim) / 8 }

// Rotation is the fixed rotation of vectors of one dimension.
type Rotation struct {
	dim, n int
	signs  [rounds][]float32 // ±1/sqrt(n): a round's sign flips and the transform's scale
}

// NewRotation returns the rotation of vectors of dim dimensions. It
// depends on dim only.
func NewRotation(dim int) *Rotation {
	n := Dims(dim)
	r := &Rotation{dim: dim, n: n}
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	scale := float32(1 / math.Sqrt(float64(n)))
	for k := range r.signs {
		s := make([]float32, n)
		for i := range s {
			s[i] = scale
			if rng.Uint64()&1 == 1 {
				s[i] = -scale
			}
		}
		r.signs[k] = s
	}
	return r
}

// Dim is the dimension of the vectors it rotates.
func (r *Rotation) Dim() int { return r.dim }

// apply writes the rotation of v (at most dim values; the rest count as
// zeros) into dst (n values).
func (r *Rotation) apply(dst, v []float32) {
	dst = dst[:r.n]
	clear(dst[copy(dst, v[:min(len(v), r.dim)]):])
	for _, s := range r.signs {
		for i := range dst {
			dst[i] *= s[i]
		}
		fwht(dst)
	}
}

// fwht is the unnormalized fast Walsh–Hadamard transform of x, whose
// length is a power of two.
func fwht(x []float32) {
	for h := 1; h < len(x); h *= 2 {
		for i := 0; i < len(x); i += 2 * h {
			a, b := x[i:i+h], x[i+h:i+2*h]
			for j := range a {
				a[j], b[j] = a[j]+b[j], a[j]-b[j]
			}
		}
	}
}

// Encoder makes codes; it is not safe for concurrent use.
type Encoder struct {
	r   *Rotation
	buf []float32
}

// NewEncoder returns an encoder of vectors of dim dimensions.
func NewEncoder(dim int) *Encoder {
	r := NewRotation(dim)
	return &Encoder{r: r, buf: make([]float32, r.n)}
}

// Encode writes the code of v into code (CodeBytes(dim) bytes) and
// returns the two numbers an estimate needs: mult, by which Query.Dot's
// sum is multiplied, and bound, the estimate's standard error for a unit
// query (see the package comment). A zero vector has both zero.
func (e *Encoder) Encode(code []byte, v []float32) (mult, bound float32) {
	r := e.buf
	e.r.apply(r, v)
	code = code[:e.r.n/8]
	clear(code)
	var l1, l2 float64
	for i, x := range r {
		if x >= 0 {
			code[i/8] |= 1 << (i % 8)
		}
		l1 += math.Abs(float64(x))
		l2 += float64(x) * float64(x)
	}
	if l1 == 0 || l2 == 0 {
		return 0, 0
	}
	norm := math.Sqrt(l2)
	c := min(l1/(math.Sqrt(float64(e.r.n))*norm), 1)
	return float32(l2 / l1), float32(norm * math.Sqrt(1-c*c) / c / math.Sqrt(float64(e.r.n-1)))
}

// Query is a query vector prepared for estimates against codes: for each
// byte of a code, the sum of the rotated query's values at each of the
// 256 patterns of its bits.
type Query struct {
	lut []([256]float32)
	sum float32 // the sum of the rotated query's values
}

// NewQuery prepares q (dim values) for estimates.
func (r *Rotation) NewQuery(q []float32) *Query {
	rq := make([]float32, r.n)
	r.apply(rq, q)
	lut := make([][256]float32, r.n/8)
	var sum float32
	for j := range lut {
		t := &lut[j]
		for b := 1; b < 256; b++ {
			t[b] = t[b&(b-1)] + rq[8*j+bits.TrailingZeros(uint(b))]
		}
		sum += t[255]
	}
	return &Query{lut: lut, sum: sum}
}

// Dot estimates the inner product of the query and the vector whose code
// and mult Encode gave.
func (q *Query) Dot(code []byte, mult float32) float32 {
	code = code[:len(q.lut)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+3 < len(code); i += 4 {
		s0 += q.lut[i][code[i]]
		s1 += q.lut[i+1][code[i+1]]
		s2 += q.lut[i+2][code[i+2]]
		s3 += q.lut[i+3][code[i+3]]
	}
	for ; i < len(code); i++ {
		s0 += q.lut[i][code[i]]
	}
	// Σ sign(r_i)·q_i = 2·(the sum where the sign is +) − the whole sum.
	return mult * (2*(s0+s1+s2+s3) - q.sum)
}

package rabitq

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pos-lake/pos/internal/vectest"
)

func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	n := float32(math.Sqrt(s))
	for i := range v {
		v[i] /= n
	}
	return v
}

// The rotation keeps lengths and inner products: it is orthonormal.
func TestRotationIsOrthonormal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dim := range []int{3, 64, 100, 384, 512} {
		r := NewRotation(dim)
		a, b := make([]float32, dim), make([]float32, dim)
		for i := range a {
			a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		ra, rb := make([]float32, r.n), make([]float32, r.n)
		r.apply(ra, a)
		r.apply(rb, b)
		if got, want := vectest.Dot(ra, rb), vectest.Dot(a, b); math.Abs(got-want) > 1e-3*math.Max(1, math.Abs(want)) {
			t.Errorf("dim %d: <Pa,Pb> = %g, <a,b> = %g", dim, got, want)
		}
		if got, want := vectest.Dot(ra, ra), vectest.Dot(a, a); math.Abs(got-want) > 1e-3*want {
			t.Errorf("dim %d: |Pa|² = %g, |a|² = %g", dim, got, want)
		}
	}
}

// The estimate's error, in units of its bound, is about a standard normal
// one, for dense vectors and for vectors whose mass sits in a few
// coordinates alike; and Eps of them hold it.
func TestEstimateError(t *testing.T) {
	const dim = 384
	rng := rand.New(rand.NewPCG(3, 4))
	kinds := map[string]func() []float32{
		"dense": func() []float32 {
			v := make([]float32, dim)
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
			return unit(v)
		},
		"sparse": func() []float32 {
			v := make([]float32, dim)
			for range 5 {
				v[rng.IntN(dim)] = float32(rng.NormFloat64())
			}
			v[0] += 0.1
			return unit(v)
		},
		"positive": func() []float32 { // like hashed counts: a common direction
			v := make([]float32, dim)
			for i := range v {
				v[i] = float32(rng.ExpFloat64())
			}
			return unit(v)
		},
	}
	enc := NewEncoder(dim)
	code := make([]byte, CodeBytes(dim))
	for name, gen := range kinds {
		var sum2 float64
		outside, n := 0, 0
		for range 20 {
			qv := gen()
			q := enc.r.NewQuery(qv)
			for range 200 {
				// A row near the query, as the best rows are.
				o := gen()
				for i := range o {
					o[i] += qv[i] * float32(rng.Float64()*2)
				}
				o = unit(o)
				for i := range o {
					o[i] *= 0.5 // rows need not be unit
				}
				mult, bound := enc.Encode(code, o)
				z := (float64(q.Dot(code, mult)) - vectest.Dot(qv, o)) / float64(bound)
				sum2 += z * z
				if math.Abs(z) > Eps {
					outside++
				}
				n++
			}
		}
		sd := math.Sqrt(sum2 / float64(n))
		t.Logf("%s: error %.2f bounds (sd), %d of %d beyond Eps", name, sd, outside, n)
		if sd > 1.2 || outside > n/1000 {
			t.Errorf("%s: the error is %.2f bounds (sd), %d of %d beyond Eps", name, sd, outside, n)
		}
	}
}

func TestZeroVector(t *testing.T) {
	enc := NewEncoder(10)
	code := make([]byte, CodeBytes(10))
	if m, b := enc.Encode(code, make([]float32, 10)); m != 0 || b != 0 {
		t.Errorf("a zero vector: mult %g, bound %g", m, b)
	}
	q := enc.r.NewQuery(unit([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}))
	if got := q.Dot(code, 0); got != 0 {
		t.Errorf("estimate against a zero vector: %g", got)
	}
}

func BenchmarkDot(b *testing.B) {
	const dim = 384
	enc := NewEncoder(dim)
	rng := rand.New(rand.NewPCG(5, 6))
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	code := make([]byte, CodeBytes(dim))
	mult, _ := enc.Encode(code, unit(v))
	q := enc.r.NewQuery(v)
	b.ResetTimer()
	var s float32
	for range b.N {
		s += q.Dot(code, mult)
	}
	_ = s
}

func BenchmarkEncode(b *testing.B) {
	const dim = 384
	enc := NewEncoder(dim)
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(i % 7)
	}
	code := make([]byte, CodeBytes(dim))
	for range b.N {
		enc.Encode(code, v)
	}
}

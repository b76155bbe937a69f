package query

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pos-lake/pos/internal/vectest"
)

// dotCodes agrees with the plain sum at every length, the vectorized part
// and the rest alike, for codes of every value and unaligned slices.
func TestDotCodes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 3, 15, 16, 17, 31, 32, 33, 64, 100, 255, 256, 384, 385, 768, 1536} {
		for trial := range 20 {
			buf := make([]int8, n+1)
			c := buf[trial%2:][:n] // unaligned half the time
			q := make([]float32, n)
			for i := range q {
				q[i] = float32(r.NormFloat64())
				c[i] = int8(r.IntN(256) - 128)
			}
			if trial == 0 && n > 0 {
				for i := range c {
					c[i] = -128 // the extremes
					if i%2 == 1 {
						c[i] = 127
					}
				}
			}
			got, want := float64(dotCodes(q, c)), vectest.Dot(q, c)
			if d := math.Abs(got - want); d > 1e-4*math.Max(1, math.Abs(want))+1e-3 {
				t.Fatalf("n %d trial %d: dotCodes %v, want %v", n, trial, got, want)
			}
		}
	}
}

func BenchmarkDotCodes(b *testing.B) {
	q, c := make([]float32, 384), make([]int8, 384)
	for i := range q {
		q[i], c[i] = float32(i%7)-3, int8(i%255-127)
	}
	b.SetBytes(384)
	for b.Loop() {
		dotCodes(q, c)
	}
}

// Package vectest holds the reference vector arithmetic that the tests of
// the vector code compare against: plain loops in float64, slow and
// obviously right.
package vectest

// Dot is the inner product of a and b, summed in float64 one dimension at
// a time; b is at least as long as a.
func Dot[A, B ~float32 | ~int8](a []A, b []B) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

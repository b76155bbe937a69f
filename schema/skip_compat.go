//go:build (!amd64 && !arm64) || go1.28 || !go1.17 || (arm64 && !go1.20)

package schema

// skipValue returns the length of the JSON value at the start of b (after
// any leading spaces), or -1 if it is not one. Portable version of the
// SIMD skipper sonic provides on amd64 and arm64.
func skipValue(b []byte) int {
	return skipPortable(b)
}

//go:build (amd64 && go1.17 && !go1.28) || (arm64 && go1.20 && !go1.28)

package schema

import "github.com/bytedance/sonic/decoder"

// skipValue returns the length of the JSON value at the start of b (after
// any leading spaces), or -1 if it is not one. sonic's SIMD skipper.
func skipValue(b []byte) int {
	start, end := decoder.Skip(b)
	if start < 0 {
		return -1
	}
	return end
}

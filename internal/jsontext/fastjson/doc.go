// Package fastjson makes the jsontext.Fast that reads with sonic
// (github.com/bytedance/sonic): its SIMD skipper and validator, and its
// one-pass decoder, which package schema uses for records past the first
// 16 MB a Fast has counted. A
// binary that decodes records in bulk makes one in main and passes it to
// its stages' options:
//
//	opt.Fast = fastjson.New()
//
// A binary that does not import this package does not link sonic. On a
// platform sonic's native code does not support, New returns nil, and
// jsontext and schema read in Go.
package fastjson

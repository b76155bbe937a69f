// Package fastjson plugs sonic (github.com/bytedance/sonic) into package
// schema: its SIMD skipper and validator, and its one-pass decoder for
// records past a process's first 16 MB. A binary that decodes records in
// bulk links it for its side effect:
//
//	import _ "github.com/pos-lake/pos/schema/fastjson"
//
// On a platform sonic's native code does not support, linking it changes
// nothing: schema decodes in Go.
package fastjson

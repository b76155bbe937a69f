//go:build (amd64 && go1.17 && !go1.28) || (arm64 && go1.20 && !go1.28)

package fastjson

import (
	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/decoder"
	"github.com/pos-lake/pos/internal/jsontext"
)

// New returns sonic's machinery as jsontext takes it, with its own count of
// the bytes decoded: make one per process and hand it to every stage.
func New() *jsontext.Fast {
	whole := sonic.Config{DisallowUnknownFields: true, CaseSensitive: true}.Froze()
	// Strings of nested objects are copied out of the line, so a small
	// field never keeps a multi-MB line alive.
	nested := sonic.Config{CopyString: true}.Froze()
	return &jsontext.Fast{
		Skip:            skip,
		Valid:           sonic.ConfigStd.Valid,
		Unmarshal:       whole.Unmarshal,
		UnmarshalNested: nested.Unmarshal,
	}
}

func skip(b []byte) int {
	start, end := decoder.Skip(b)
	if start < 0 {
		return -1
	}
	return end
}

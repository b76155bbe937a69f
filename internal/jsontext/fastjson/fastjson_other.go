//go:build !((amd64 && go1.17 && !go1.28) || (arm64 && go1.20 && !go1.28))

package fastjson

import "github.com/pos-lake/pos/internal/jsontext"

// New returns nil where sonic's native code does not run: jsontext and
// schema then read in Go.
func New() *jsontext.Fast { return nil }

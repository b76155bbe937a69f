package schema

import "github.com/pos-lake/pos/internal/jsontext"

// testFast is sonic's Fast, as the bulk binaries decode with it; an
// internal test cannot import schema/fastjson (it imports schema), so
// fast_ext_test.go sets it.
var testFast *jsontext.Fast

func SetTestFast(f *jsontext.Fast) { testFast = f }

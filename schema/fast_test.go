package schema

import "github.com/pos-lake/pos/internal/jsontext/fastjson"

// testFast is sonic's Fast: the package's tests decode with it, as the bulk
// binaries do (TestDecodersAgree and FuzzDecoders set its one-pass decoder
// against the member decoder, checkWithoutFast sets the member decoder
// with it against the member decoder without it).
var testFast = fastjson.New()

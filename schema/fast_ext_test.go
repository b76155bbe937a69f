package schema_test

// The package's tests run with sonic plugged in, as the bulk binaries run
// (TestDecodersAgree and FuzzDecoders set its one-pass decoder against the
// member decoder; the skipper test sets its skipper against skipPortable).
import _ "github.com/pos-lake/pos/schema/fastjson"

package schema_test

// The package's tests decode with sonic, as the bulk binaries do
// (TestDecodersAgree and FuzzDecoders set its one-pass decoder against the
// member decoder; the skipper test sets its skipper against skipPortable).
import (
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/schema/fastjson"
)

func init() { schema.SetTestFast(fastjson.New()) }

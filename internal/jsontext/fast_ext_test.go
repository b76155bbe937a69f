package jsontext_test

// The package's tests read with sonic, as the bulk binaries do (the
// skipper test and FuzzReader set it against the reader in Go alone).
import (
	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/internal/jsontext/fastjson"
)

func init() { jsontext.SetTestFast(fastjson.New()) }

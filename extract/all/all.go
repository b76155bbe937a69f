// Package all registers every platform adapter; import it for its side
// effect.
package all

import (
	_ "github.com/pos-lake/pos/extract/claudecode" // Claude Code
)

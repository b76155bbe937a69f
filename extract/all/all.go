// Package all registers every platform adapter; import it for its side
// effect.
package all

import (
	_ "github.com/pos-lake/pos/extract/aider"      // Aider
	_ "github.com/pos-lake/pos/extract/claudecode" // Claude Code
	_ "github.com/pos-lake/pos/extract/cline"      // Cline, Roo Code, Kilo Code
	_ "github.com/pos-lake/pos/extract/codex"      // Codex CLI
	_ "github.com/pos-lake/pos/extract/cursor"     // Cursor
	_ "github.com/pos-lake/pos/extract/gemini"     // Gemini CLI
	_ "github.com/pos-lake/pos/extract/push"       // pushed event logs
)

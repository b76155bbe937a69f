// Package all links every platform adapter into a program (pos-extract);
// import it for its side effect. Each adapter registers itself with package
// extract; its platform's name, aliases and capabilities are registered in
// package extract/platforms, which programs that do not read native
// histories use without the adapters.
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

// Package about declares the platform of Gemini CLI as pos knows it
// before reading any of it: its name, the other names people type for it
// and what its data supports. It holds data only, so that programs that
// list platforms import it without the adapter's parsers.
package about

import (
	"github.com/pos-lake/pos/extract/platform"
	"github.com/pos-lake/pos/schema"
)

// Name is the platform's name in records, flags and tool arguments.
const Name = "gemini"

// Platform is the platform's declaration.
var Platform = platform.Platform{
	Name:    Name,
	Title:   "Gemini CLI",
	Aliases: []string{"gemini-cli"},
	Capabilities: platform.Capabilities{
		Exchanges: platform.Yes, Timestamps: platform.Yes, Tokens: platform.Yes, Cost: platform.No,
		Models: platform.Yes, ToolCalls: platform.Yes, FileContext: platform.Partial, Subagents: platform.Partial,
		Incremental:  platform.Partial,
		Completeness: schema.CompleteFull,
		Limitations: []string{
			"Cost is not recorded; it is computed from tokens and a price table.",
			"The older session-*.json files are rewritten whole by Gemini CLI, so a changed file is read whole again (the .jsonl files are read incrementally).",
			"Messages a $rewindTo or a $set removes after an earlier run loaded them stay in the lake.",
			"Tool results are inside the assistant message that called the tool, not messages of their own.",
			"The project path is known only from the .project_root marker newer Gemini CLI writes; older hash-named folders give the SHA-256 project hash instead.",
			"Files are named only from file_path, absolute_path and paths tool arguments.",
			"Subagent chats are linked to their parent only in the chats/<parent session>/ layout.",
		},
	},
}

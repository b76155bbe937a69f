// Package about declares the platform of Codex CLI as pos knows it
// before reading any of it: its name, the other names people type for it
// and what its data supports. It holds data only, so that programs that
// list platforms import it without the adapter's parsers.
package about

import (
	"github.com/pos-lake/pos/extract/platform"
	"github.com/pos-lake/pos/schema"
)

// Name is the platform's name in records, flags and tool arguments.
const Name = "codex"

// Platform is the platform's declaration.
var Platform = platform.Platform{
	Name:    Name,
	Title:   "Codex CLI",
	Aliases: []string{"codex-cli"},
	Capabilities: platform.Capabilities{
		Exchanges: platform.Yes, Timestamps: platform.Yes, Tokens: platform.Yes, Cost: platform.No,
		Models: platform.Yes, ToolCalls: platform.Yes, FileContext: platform.Partial, Subagents: platform.Partial,
		Incremental:  platform.Yes,
		Completeness: schema.CompleteFull,
		Limitations: []string{
			"Cost is not recorded; it is computed from tokens and a price table.",
			"Reasoning is kept as its summary only: the full reasoning is encrypted in the rollout.",
			"Files come from apply_patch edits, path arguments and the plain words of shell commands (cat, sed, rg, ls, rm, redirections …, parsed by pos-normalize); a name built from variables or globs is not resolved.",
			"A tool call failed only as far as its output says so (an exit code or a failure flag).",
			"A typed prompt is told from injected user-role context by the user_message event after it, so a session that lost its events counts its context as prompts.",
			"A fork's copy of its parent's history is told from the fork's own lines by the burst it was written in; fork lines written within 100 ms of that burst count as copied.",
			"Subagents are linked to their parent session only when their session_meta names it (thread_spawn).",
		},
	},
}

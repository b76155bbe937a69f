// Package about declares the platform of Claude Code as pos knows it
// before reading any of it: its name, the other names people type for it
// and what its data supports. It holds data only, so that programs that
// list platforms import it without the adapter's parsers.
package about

import (
	"github.com/pos-lake/pos/extract/platform"
	"github.com/pos-lake/pos/schema"
)

// Name is the platform's name in records, flags and tool arguments.
const Name = "claude_code"

// Platform is the platform's declaration.
var Platform = platform.Platform{
	Name:    Name,
	Title:   "Claude Code",
	Aliases: []string{"claude", "claude-code", "claudecode"},
	Capabilities: platform.Capabilities{
		Exchanges: platform.Yes, Timestamps: platform.Yes, Tokens: platform.Yes, Cost: platform.No,
		Models: platform.Yes, ToolCalls: platform.Yes, FileContext: platform.Yes, Subagents: platform.Yes,
		Incremental:  platform.Yes,
		Completeness: schema.CompleteFull,
		Limitations: []string{
			"The full text of a compaction summary is kept only since Claude Code writes isCompactSummary lines; older sessions keep the summary labels only.",
			"Claude Code does not record cost; only tokens.",
			"Summary lines, file-history snapshots, last-prompt lines and the session's names (custom-title, agent-name, ai-title lines) have no time of their own: they take their neighbours' (ts_precision derived).",
			"A session's title is the name the user gave it (/rename: custom-title and agent-name lines), else Claude Code's own label (ai-title), else the latest summary label, else the first prompt; a rename outlasts a later label, also across incremental runs.",
			"A prompt typed while Claude Code was working is written only as an attachment (queued_command), or by earlier versions only in its queue-operation enqueue line: it is a prompt (native_type queue-operation/enqueue for the latter, placed where a remove line says the turn took it in, before the turn's next assistant line); one still queued when the file ends, pulled back into the input box (popAll) or removed for another reason is not, and stays in the raw layer. Other attachments (hook output, listings, files) stay in the raw layer, native_type attachment/<kind>.",
			"The pull requests a session linked (pr-link lines, written when one shows up in a tool's output and again on resume) are the session's pull_requests, by URL, once each.",
		},
	},
}

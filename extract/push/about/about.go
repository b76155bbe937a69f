// Package about declares the platform of agents that push their event logs (the push protocol) as pos knows it
// before reading any of it: its name, the other names people type for it
// and what its data supports. It holds data only, so that programs that
// list platforms import it without the adapter's parsers.
package about

import (
	"github.com/pos-lake/pos/extract/platform"
	"github.com/pos-lake/pos/schema"
)

// Name is the platform's name in records, flags and tool arguments.
const Name = "push"

// Platform is the platform's declaration.
var Platform = platform.Platform{
	Name:  Name,
	Title: "agents that push their logs",
	Capabilities: platform.Capabilities{
		Exchanges: platform.Yes, Timestamps: platform.Yes, Tokens: platform.Partial, Cost: platform.Partial,
		Models: platform.Partial, ToolCalls: platform.Partial, FileContext: platform.Partial, Subagents: platform.Partial,
		Incremental:  platform.Yes,
		Completeness: schema.CompleteFull,
		Limitations: []string{
			"The log holds only what the agent chose to write: models, tokens, cost, tool calls, files and subagents are there only when the writer includes them.",
			"An event without a valid RFC 3339 timestamp takes the time of the line before it, or the file's modification time (ts_precision derived or file_mtime).",
			"Lines of another protocol version (\"v\" other than 1) or of an unknown type are kept in the raw layer only.",
			"Only the push folder is read (--root, else $POS_PUSH_DIR, else $XDG_DATA_HOME/pos/push or ~/.local/share/pos/push); logs agents write elsewhere, such as a project's .praxis-os/.conversations, need --root.",
			"When sessions interleave in one file, an exchange whose prompt is more than 4 MiB before the end of the file is not derived again when later events of it are appended: write one session per file.",
		},
	},
}

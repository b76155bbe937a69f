// Package about declares the platform of Cline (and its forks Roo Code and Kilo Code) as pos knows it
// before reading any of it: its name, the other names people type for it
// and what its data supports. It holds data only, so that programs that
// list platforms import it without the adapter's parsers.
package about

import (
	"github.com/pos-lake/pos/extract/platform"
	"github.com/pos-lake/pos/schema"
)

// Name is the platform's name in records, flags and tool arguments.
const Name = "cline"

// Platform is the platform's declaration.
var Platform = platform.Platform{
	Name:    Name,
	Title:   "Cline",
	Aliases: []string{"roo", "kilo"},
	Capabilities: platform.Capabilities{
		Exchanges: platform.Yes, Timestamps: platform.Partial, Tokens: platform.Yes, Cost: platform.Yes,
		Models: platform.Yes, ToolCalls: platform.Yes, FileContext: platform.Yes, Subagents: platform.No,
		Incremental:  platform.Partial,
		Completeness: schema.CompleteFull,
		Limitations: []string{
			"Until Cline wrote a ts on each api message (Cline 3.5x and older), a message's time is joined from ui_messages.json by conversationHistoryIndex (ts_precision derived), and without that file it is the file's mtime.",
			"The history files are rewritten whole, so a task whose files changed is read again whole; unchanged tasks are skipped.",
			"Tokens and cost come from the ui's api_req_started rows; without ui_messages.json the api history's metrics give cached tokens as one number, counted as cache reads, and a request whose answer never reached the history is counted only in the session's metadata.",
			"A ui_messages.json without its api history yields messages from the chat rows only, without the tool output the model saw (completeness partial).",
			"Tasks started by new_task or subagents are separate tasks, not linked to the task that started them.",
			"Messages that an old Cline deleted from the api history to truncate the context, or that a checkpoint restore removed, are not kept, and ones already loaded stay in the lake.",
			"Only the three history files are read: focus-chain lists, settings and context_history.json are not.",
		},
	},
}

// Package about declares the platform of Cursor as pos knows it
// before reading any of it: its name, the other names people type for it
// and what its data supports. It holds data only, so that programs that
// list platforms import it without the adapter's parsers.
package about

import (
	"github.com/pos-lake/pos/extract/platform"
	"github.com/pos-lake/pos/schema"
)

// Name is the platform's name in records, flags and tool arguments.
const Name = "cursor"

// Platform is the platform's declaration.
var Platform = platform.Platform{
	Name:  Name,
	Title: "Cursor",
	Capabilities: platform.Capabilities{
		Exchanges: platform.Yes, Timestamps: platform.Partial, Tokens: platform.Partial, Cost: platform.Partial,
		Models: platform.Partial, ToolCalls: platform.Partial, FileContext: platform.Partial, Subagents: platform.Partial,
		Incremental:  platform.Partial,
		Completeness: schema.CompletePartial,
		Limitations: []string{
			"Only answers of 2025 composers carry their own time (timingInfo); prompts, tool bubbles, 2023 chat bubbles and 2024 inline bubbles take a neighbour's, the tab's or the composer's time (ts_precision derived), and agent transcripts only the file's (file_mtime).",
			"Token counts exist only on the last bubble of a 2025 composer turn (tokenCount), not on 2023 or 2024 chats nor in agent transcripts.",
			"Cost is known only per composer (usageData costInCents, in the session's meta), never per message.",
			"The model is recorded per bubble only by 2023 chats (modelType) and 2025-10+ bubbles (modelInfo); otherwise at most the composer's selected model is in the session's meta.",
			"Tool calls are recorded by 2025 composers (toolFormerData, call and result in one bubble) and agent transcripts; 2023 chats record none.",
			"Files are those named by tool arguments, attached files and code blocks; checkpoints and code-block diffs (checkpointId, codeBlockDiff rows) are not read.",
			"Cursor prunes old bubble bodies: a bubble in the conversation order whose row is gone or NULL is a metadata_only message.",
			"A database is read whole whenever it (or its -wal file) changed, through a full private copy (VACUUM INTO), which needs temporary disk space as large as the database.",
			"The project folder is known only through a workspace database's workspace.json (or a composer's workspaceIdentifier); agent transcripts name it by a lossy slug, resolved only when a workspace.json matches it.",
			"Subagents are linked only for agent transcripts (<uuid>/subagents/); database composers that are subagents are marked in the session's meta.",
			"Agent transcript lines have no ids: message ids derive from line numbers, and a conversation whose database holds the bodies keeps its transcript lines as raw records only.",
		},
	},
}

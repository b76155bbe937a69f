// Package about declares the platform of Aider as pos knows it
// before reading any of it: its name, the other names people type for it
// and what its data supports. It holds data only, so that programs that
// list platforms import it without the adapter's parsers.
package about

import (
	"github.com/pos-lake/pos/extract/platform"
	"github.com/pos-lake/pos/schema"
)

// Name is the platform's name in records, flags and tool arguments.
const Name = "aider"

// Platform is the platform's declaration.
var Platform = platform.Platform{
	Name:  Name,
	Title: "Aider",
	Capabilities: platform.Capabilities{
		Exchanges: platform.Yes, Timestamps: platform.Partial, Tokens: platform.Partial, Cost: platform.Partial,
		Models: platform.Partial, ToolCalls: platform.Partial, FileContext: platform.Partial, Subagents: platform.No,
		Incremental:  platform.Yes,
		Completeness: schema.CompleteFull,
		Limitations: []string{
			"Aider keeps its history in each project's git root and has no central location: only the --root directories given are searched for .aider.chat.history.md, and with no --root nothing is read.",
			"Prompt times come from .aider.input.history when an entry there has the prompt's text; other prompts, replies and status lines take the last time known before them, the session header's at worst (ts_precision derived).",
			"Aider writes local wall-clock times without a zone; they are read in the extracting machine's time zone (TZ), which is wrong for a history written in another zone.",
			"Token counts and costs are as Aider printed them, rounded (\"2.4k sent\", \"$0.0014\"), and there is no cost when Aider did not know the model's price.",
			"The model is the one Aider announced for the session (Model or Main model lines); in architect mode the editor model's replies are attributed to the main model.",
			"Tool calls are recognised in the reply text (SEARCH/REPLACE blocks, unified diffs, whole-file fences in the whole edit format, shell fences); their results are Aider's \"Applied edit to\" lines, and whether a shell command ran is only in the status text.",
			"Blocks are told apart by Aider's markup (\"#### \" and \"> \" lines ending in two spaces); a reply that opens with a \"> \" quote, or a file whose trailing spaces an editor stripped, can be split where Aider did not mean it.",
			"Entries of .aider.input.history that match no prompt (answers to Aider's questions) are not kept; the chat history has those answers in its status lines.",
			"A block still being appended to when it is read (usually the last status lines) stays in the raw layer in both its shorter and its final version; its message is replaced by id.",
			"A Tokens line with no reply before it (an empty or interrupted reply) is kept on the status message, which exchange and session token sums do not count.",
		},
	},
}

package extract

import (
	"slices"
	"strings"

	"github.com/pos-lake/pos/schema"
)

// declared is what each adapter declares its platform's data supports. It
// is kept here, not beside each adapter, so that a program that only reads
// the lake (pos-query, pos-mcp) lists it without linking the adapters and
// their parsers, whose start-up (sonic's native code, SQLite) costs more
// than a warm query.
var declared = map[string]Capabilities{
	schema.PlatformAider: {
		Platform:  schema.PlatformAider,
		Exchanges: Yes, Timestamps: Partial, Tokens: Partial, Cost: Partial,
		Models: Partial, ToolCalls: Partial, FileContext: Partial, Subagents: No,
		Incremental:  Yes,
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
	schema.PlatformClaudeCode: {
		Platform:  schema.PlatformClaudeCode,
		Exchanges: Yes, Timestamps: Yes, Tokens: Yes, Cost: No,
		Models: Yes, ToolCalls: Yes, FileContext: Yes, Subagents: Yes,
		Incremental:  Yes,
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
	schema.PlatformCline: {
		Platform:  schema.PlatformCline,
		Exchanges: Yes, Timestamps: Partial, Tokens: Yes, Cost: Yes,
		Models: Yes, ToolCalls: Yes, FileContext: Yes, Subagents: No,
		Incremental:  Partial,
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
	schema.PlatformCodex: {
		Platform:  schema.PlatformCodex,
		Exchanges: Yes, Timestamps: Yes, Tokens: Yes, Cost: No,
		Models: Yes, ToolCalls: Yes, FileContext: Partial, Subagents: Partial,
		Incremental:  Yes,
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
	schema.PlatformCursor: {
		Platform:  schema.PlatformCursor,
		Exchanges: Yes, Timestamps: Partial, Tokens: Partial, Cost: Partial,
		Models: Partial, ToolCalls: Partial, FileContext: Partial, Subagents: Partial,
		Incremental:  Partial,
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
	schema.PlatformGemini: {
		Platform:  schema.PlatformGemini,
		Exchanges: Yes, Timestamps: Yes, Tokens: Yes, Cost: No,
		Models: Yes, ToolCalls: Yes, FileContext: Partial, Subagents: Partial,
		Incremental:  Partial,
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
	schema.PlatformPush: {
		Platform:  schema.PlatformPush,
		Exchanges: Yes, Timestamps: Yes, Tokens: Partial, Cost: Partial,
		Models: Partial, ToolCalls: Partial, FileContext: Partial, Subagents: Partial,
		Incremental:  Yes,
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

// Declared returns the capabilities declared for a platform; ok is false
// for a platform pos does not read.
func Declared(platform string) (c Capabilities, ok bool) {
	c, ok = declared[platform]
	c.Limitations = slices.Clone(c.Limitations)
	return c, ok
}

// AllDeclared returns every platform's declared capabilities, ordered by
// platform name as Adapters orders the adapters.
func AllDeclared() []Capabilities {
	out := make([]Capabilities, 0, len(declared))
	for p := range declared {
		c, _ := Declared(p)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Capabilities) int { return strings.Compare(a.Platform, b.Platform) })
	return out
}

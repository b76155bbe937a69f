// Package cursor reads Cursor's chat and agent history: the SQLite
// databases (state.vscdb) under Cursor's User directory and the agent
// transcripts under ~/.cursor/projects/*/agent-transcripts.
//
// Databases. Cursor keeps chats as JSON values in two key/value tables,
// ItemTable and (since late 2024) cursorDiskKV, in three layouts:
//
//   - 2023: a workspace database's ItemTable row
//     workbench.panel.aichat.view.aichat.chatdata holds every chat tab with
//     its bubbles inline. Bubbles have no time of their own: a prompt takes
//     the time Cursor cached its context (contextCacheTimestamp), else the
//     tab's lastSendTime, an answer its prompt's (ts_precision derived).
//   - late 2024: a workspace database's ItemTable row composer.composerData
//     holds allComposers[] with their conversation inline.
//   - 2025: the global database's cursorDiskKV rows composerData:<id> (order
//     in fullConversationHeadersOnly) and bubbleId:<composer>:<bubble>
//     (bodies). Workspace databases keep only {type:"head"} composer heads,
//     which name the workspace (and so, through workspace.json, the project)
//     and the title. An answer's time is its timingInfo.clientRpcSendTime
//     (exact); the prompt before it takes that time, the turn's last bubble
//     clientEndTime, the others their predecessor's (derived).
//     timingInfo.clientStartTime is a performance.now() offset and is never
//     read.
//
// Safety: a database is opened read-only (file:PATH?mode=ro with a busy
// timeout), copied with VACUUM INTO to a private temporary file, read from
// that copy opened immutable, and the copy is deleted. The live file is
// never opened immutable and never written. Only whitelisted keys are read
// (ItemTable: the two chat keys above; cursorDiskKV: composerData:* and
// bubbleId:*): the databases also hold credentials (cursorAuth/*) that must
// never reach a record. The snapshot is a full copy, so it holds them too
// for as long as the read lasts, in a 0700 directory.
//
// Records: every row read is a raw record (Source.Key "<table>:<key>", Raw
// the value as one-line JSON, or {"$sqlite":"null"|"text"|"blob", …} for a
// value that is not JSON, which is also reported through Options.Skip). A
// bubble row's message follows its raw record with the same Source; a
// message from a bubble inline in a bigger row carries the row key plus a
// JSON pointer ("…#/tabs/3/bubbles/2"). Message
// ids are schema.ID(platform, composer or tab id, bubble id). Each composer
// and tab has one session record (Title from the platform, Meta with mode,
// status, model, lines added/removed, context usage, cost where Cursor
// kept them). A bubble in the conversation order whose body is missing or
// NULL (Cursor prunes old bodies) becomes a metadata_only message.
//
// Incremental: a database cannot be appended to, so it is read whole
// when it changed; its fingerprint covers the -wal file too, since writes
// land there first. Ids are stable, so a re-read dedupes at load.
//
// Agent transcripts: <uuid>/<uuid>.jsonl (Claude-style {role, message:
// {content:[…]}} lines and {type:"turn_ended"} markers), subagents under
// <uuid>/subagents/<id>.jsonl, and the legacy <uuid>.txt (user:/assistant:
// blocks). They have no times (file_mtime) and no ids (line numbers). When
// a database found in the same run (read or unchanged) holds the bodies of
// the same conversation, the transcript's lines are kept as raw records
// only, so the conversation is not counted twice.
package cursor

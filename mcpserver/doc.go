// Package mcpserver serves the pos lake to agents as MCP tools: search,
// recent_turns, session_summary, context_pack, timeline, stats and
// capabilities, the lookups of pos-query (and the actions of the seeds'
// pos_conversation_query, one tool each).
//
// Every tool has a JSON schema for its arguments (descriptions, enums,
// defaults and bounds) and one for its result. A bad argument is a tool
// error with a message that says what is wrong and what is accepted, not a
// protocol error, so the calling model can correct itself. The tools only
// read the lake, except session_summary, which stores the summaries it
// makes (a cache, keyed by the session's state).
//
// The lake is opened on the first call and again when a pos-load has
// changed it since (its run log or schema state moved), so a long-lived
// server sees sessions synced while it runs. The package reads no flags or
// environment; pos-mcp does.
//
// StdioTransport, the stdio framing pos-mcp serves over, answers a frame
// that is not a JSON-RPC 2.0 message (not JSON, not an object, a wrong
// version or id, over MaxFrameBytes or nested deeper than MaxFrameDepth)
// with a JSON-RPC error and reads on, where the SDK's transport ends the
// session.
package mcpserver

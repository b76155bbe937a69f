// Package anthropic holds the shapes of Anthropic's Messages API that
// agents other than Claude Code store as they received them: Cline's api
// history and Cursor's agent transcripts keep a message's content as these
// blocks. Claude Code's adapter decodes the same blocks without copying
// the input, into a type of its own.
package anthropic

import "encoding/json"

// Block is one element of a message's content: text, thinking, a tool
// call (tool_use) or a tool's result (tool_result, whose content is a
// string or blocks).
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

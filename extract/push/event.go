package push

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Version is the protocol version this adapter reads (the "v" member).
const Version = 1

// event is one line of a push log. The protocol is described in
// PROTOCOL.md; every member but type is optional in the wire sense (a line
// without one is still read), though the protocol asks for some.
type event struct {
	V         json.RawMessage `json:"v"`
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	SessionID string          `json:"session_id"`
	Timestamp string          `json:"timestamp"`

	// exchange
	User *string `json:"user"`
	AI   *string `json:"ai"`

	// message
	Role        string  `json:"role"`
	Text        *string `json:"text"`
	ContentType string  `json:"content_type"`
	Thinking    string  `json:"thinking"`

	// exchange and message
	Model    string          `json:"model"`
	Usage    *usage          `json:"usage"`
	CostUSD  *float64        `json:"cost_usd"`
	Files    []string        `json:"files"`
	Tools    []tool          `json:"tools"`
	Agent    string          `json:"agent"`
	Subagent *subagent       `json:"subagent"`
	Cwd      string          `json:"cwd"`
	Project  string          `json:"project"`
	Branch   string          `json:"git_branch"`
	Meta     json.RawMessage `json:"meta"`

	// context_reset
	Reason  string `json:"reason"`
	Summary string `json:"summary"`

	// session_resume
	PreviousSession string `json:"previous_session"`
	NewSession      string `json:"new_session"`

	// session
	Title string `json:"title"`
}

// usage accepts the protocol's names and the usual provider names.
type usage struct {
	Input         *int64 `json:"input"`
	Output        *int64 `json:"output"`
	CacheCreation *int64 `json:"cache_creation"`
	CacheRead     *int64 `json:"cache_read"`
	InputTokens   *int64 `json:"input_tokens"`
	OutputTokens  *int64 `json:"output_tokens"`
	Prompt        *int64 `json:"prompt_tokens"`
	Completion    *int64 `json:"completion_tokens"`
	CacheCreateIn *int64 `json:"cache_creation_input_tokens"`
	CacheReadIn   *int64 `json:"cache_read_input_tokens"`
}

type tool struct {
	Name    string          `json:"name"`
	CallID  string          `json:"call_id"`
	Input   json.RawMessage `json:"input"`
	Output  *string         `json:"output"`
	IsError bool            `json:"is_error"`
}

type subagent struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// errNotObject is a line that is JSON but not an object.
var errNotObject = errors.New("not a JSON object")

// parseEvent decodes a line. A line that is not JSON is an error; a JSON
// value that is not an object returns errNotObject; a member of the wrong
// type is left zero (the raw record keeps it) and reported in bad.
func parseEvent(b []byte) (e event, bad string, err error) {
	b = bytes.TrimSpace(b)
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return e, "", fmt.Errorf("invalid JSON: %w", err)
	}
	if len(b) == 0 || b[0] != '{' {
		return e, "", errNotObject
	}
	err = json.Unmarshal(b, &e)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return e, fmt.Sprintf("%s: %s, not %s", strings.TrimPrefix(te.Field, "."), te.Value, te.Type), nil
	}
	if err != nil {
		return e, "", fmt.Errorf("invalid JSON: %w", err)
	}
	return e, "", nil
}

// version returns the line's protocol version: 1 when absent.
func (e *event) version() (int, bool) {
	v := bytes.TrimSpace(e.V)
	if len(v) == 0 || string(v) == "null" {
		return Version, true
	}
	var n int
	if json.Unmarshal(v, &n) != nil {
		return 0, false
	}
	return n, true
}

func first(ps ...*int64) int64 {
	for _, p := range ps {
		if p != nil {
			return *p
		}
	}
	return 0
}

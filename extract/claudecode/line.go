package claudecode

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/bytedance/sonic"
	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/schema"
)

// line is the subset of a Claude Code JSONL line that pos reads. Everything
// else stays in the raw record.
type line struct {
	Type              string        `json:"type"`
	Subtype           string        `json:"subtype"`
	UUID              string        `json:"uuid"`
	ParentUUID        string        `json:"parentUuid"`
	LogicalParentUUID string        `json:"logicalParentUuid"`
	SessionID         string        `json:"sessionId"`
	Timestamp         string        `json:"timestamp"`
	Cwd               string        `json:"cwd"`
	GitBranch         string        `json:"gitBranch"`
	Version           string        `json:"version"`
	Slug              string        `json:"slug"`
	AgentID           string        `json:"agentId"`
	IsSidechain       bool          `json:"isSidechain"`
	IsMeta            bool          `json:"isMeta"`
	IsCompactSummary  bool          `json:"isCompactSummary"`
	IsAPIError        bool          `json:"isApiErrorMessage"`
	RequestID         string        `json:"requestId"`
	Message           *message      `json:"message"`
	Summary           string        `json:"summary"`  // type "summary"
	LeafUUID          string        `json:"leafUuid"` // type "summary"
	Content           rawJSON       `json:"content"`  // system and queue-operation lines
	CompactMetadata   rawJSON       `json:"compactMetadata"`
	Snapshot          *snapshot     `json:"snapshot"`        // file-history-snapshot
	Data              *progressData `json:"data"`            // progress
	ParentToolUseID   string        `json:"parentToolUseID"` // progress: the Task call it reports on
	Operation         string        `json:"operation"`       // queue-operation
	Reason            string        `json:"reason"`          // queue-operation remove, in later versions
	// The session's names (session-state lines, without a uuid or a time):
	// custom-title and agent-name are what the user named it (/rename
	// writes both), ai-title the label Claude Code made for its picker.
	// The last of each kind in a transcript holds.
	CustomTitle string `json:"customTitle"`
	AgentName   string `json:"agentName"`
	AITitle     string `json:"aiTitle"`
	Title       string `json:"title"` // ai-title, as some versions wrote it
	// pr-link: a pull request the session linked, written again on resume
	// and compaction.
	PRURL        string `json:"prUrl"`
	PRNumber     int64  `json:"prNumber"`
	PRRepository string `json:"prRepository"`
	// attachment lines: what Claude Code adds to the conversation besides
	// messages (hook output, files, listings …), among them the prompts
	// typed while it was working (queued_command), which no user line holds.
	Attachment *attachment `json:"attachment"`
}

// check makes what pos reads of a line usable, and says what it changed:
// a token count below zero is read as zero, a timestamp that is no time
// is not read (the record's time is derived from its neighbours).
func (l *line) check() error {
	var errs []error
	if l.Timestamp != "" {
		if _, ok := parseTS(l.Timestamp); !ok {
			errs = append(errs, fmt.Errorf("timestamp %q is not a time: not read", l.Timestamp))
		}
	}
	if m := l.Message; m != nil && m.Usage != nil {
		neg := m.Usage.tokens.clamp()
		for i := range m.Usage.Iterations {
			neg = m.Usage.Iterations[i].tokens.clamp() || neg
		}
		if neg {
			errs = append(errs, errors.New("message.usage: a token count below zero: read as 0"))
		}
	}
	return errors.Join(errs...)
}

// clamp reads counts below zero as zero, and reports whether there was one.
func (t *tokens) clamp() bool {
	neg := false
	for _, n := range []*int64{&t.Input, &t.Output, &t.CacheCreation, &t.CacheRead} {
		if *n < 0 {
			*n, neg = 0, true
		}
	}
	if t.Detail != nil && t.Detail.Ephemeral1h < 0 {
		t.Detail.Ephemeral1h, neg = 0, true
	}
	return neg
}

type snapshot struct {
	Timestamp string `json:"timestamp"`
}

type progressData struct {
	Type    string `json:"type"`
	AgentID string `json:"agentId"`
	// agent_progress: the subagent's transcript line, copied whole.
	Message rawJSON `json:"message"`
}

type attachment struct {
	Type        string  `json:"type"`
	Prompt      rawJSON `json:"prompt"` // queued_command: a string or content blocks
	CommandMode string  `json:"commandMode"`
	Origin      *origin `json:"origin"`
}

type origin struct {
	Kind string `json:"kind"`
}

// queuedPrompt is the text of a queued_command attachment, and whether a
// person typed it (commandMode prompt, origin human; older lines say
// neither) rather than the harness queueing a notification.
func queuedPrompt(l *line) (text string, human, ok bool) {
	a := l.Attachment
	if l.Type != "attachment" || a == nil || a.Type != "queued_command" {
		return "", false, false
	}
	c, err := parseContent(a.Prompt)
	if err != nil {
		return "", false, false
	}
	text, _ = userParts(c)
	if strings.TrimSpace(text) == "" {
		return "", false, false
	}
	human = (a.CommandMode == "" || a.CommandMode == "prompt") && (a.Origin == nil || a.Origin.Kind == "" || a.Origin.Kind == "human")
	return text, human, true
}

type message struct {
	Role       string  `json:"role"`
	Model      string  `json:"model"`
	ID         string  `json:"id"`
	Content    rawJSON `json:"content"`
	StopReason string  `json:"stop_reason"`
	Usage      *usage  `json:"usage"`
}

type usage struct {
	tokens
	Speed string `json:"speed"` // "fast": fast mode, billed at its own rates
	// Iterations split the request's usage by inference: "message" for
	// the executor's own (what the counts above add up), "advisor_message"
	// for each call of the advisor tool, billed at the advisor's model's
	// rates and not in the counts above.
	Iterations []iteration `json:"iterations"`
}

// iteration is one inference within a request (usage.iterations[]).
type iteration struct {
	Type  string `json:"type"`
	Model string `json:"model"`
	tokens
}

// tokens are the counts of a request's usage, and of each inference in it.
type tokens struct {
	Input         int64        `json:"input_tokens"`
	Output        int64        `json:"output_tokens"`
	CacheCreation int64        `json:"cache_creation_input_tokens"`
	CacheRead     int64        `json:"cache_read_input_tokens"`
	Detail        *cacheDetail `json:"cache_creation"`
}

// usage is t as pos counts it: the 1-hour share of the cache writes at
// most all of them.
func (t *tokens) usage() schema.Usage {
	u := schema.Usage{Input: t.Input, Output: t.Output, CacheCreation: t.CacheCreation, CacheRead: t.CacheRead}
	if t.Detail != nil {
		u.CacheCreation1h = min(t.Detail.Ephemeral1h, t.CacheCreation)
	}
	return u
}

type cacheDetail struct {
	Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
}

// block is one element of message.content.
type block struct {
	Type      string  `json:"type"`
	Text      string  `json:"text"`
	Thinking  string  `json:"thinking"`
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Input     rawJSON `json:"input"`
	ToolUseID string  `json:"tool_use_id"`
	Content   rawJSON `json:"content"` // tool_result: string or blocks
	IsError   bool    `json:"is_error"`
}

// api decodes what the walker refuses (walk.go). Decoded strings point
// into the line, as the walker's do. Keys match exactly, as Claude Code
// writes them and as the walker matches them: a key in another case is
// another member.
var api = sonic.Config{CaseSensitive: true}.Froze()

// rawJSON is a JSON value left undecoded. It points into the line it was
// read from (no copy): the line is the record's raw and outlives it.
type rawJSON = sonic.NoCopyRawMessage

// decode decodes JSON that lives as long as what is decoded from it.
func decode(b []byte, v any) error {
	return api.UnmarshalFromString(unsafe.String(unsafe.SliceData(b), len(b)), v)
}

// parseLine decodes a line. The decoded strings point into b, which must
// not change while the record made from it lives (it is the record's raw).
// A line the walker refuses goes to sonic (see walk.go).
func parseLine(b []byte, l *line) error {
	*l = line{}
	if walkLine(b, l) == nil {
		return nil
	}
	*l = line{}
	return decode(b, l)
}

// content is a decoded message.content: a string or blocks.
type content struct {
	str    string
	blocks []block
	isStr  bool
}

func parseContent(raw rawJSON) (content, error) {
	return contentWith(raw, func(b []byte, s *string) error {
		if walkString(b, s) == nil {
			return nil
		}
		return decode(b, s)
	}, func(b []byte, blocks *[]block) error {
		if walkBlocks(b, blocks) == nil {
			return nil
		}
		*blocks = nil
		return decode(b, blocks)
	})
}

// contentWith is parseContent with the given decoders.
func contentWith(raw rawJSON, str func([]byte, *string) error, blocks func([]byte, *[]block) error) (content, error) {
	var c content
	raw = trimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return c, nil
	}
	if raw[0] == '"' {
		c.isStr = true
		return c, str(raw, &c.str)
	}
	return c, blocks(raw, &c.blocks)
}

// resultText flattens a tool_result's content (a string, or text and image
// blocks) into text.
func resultText(raw rawJSON) string {
	c, err := parseContent(raw)
	if err != nil {
		return string(raw)
	}
	if c.isStr {
		return c.str
	}
	var sb strings.Builder
	for _, b := range c.blocks {
		t := b.Text
		if b.Type == "image" {
			t = "[image]"
		}
		if t == "" {
			continue
		}
		if sb.Len() > 0 {
			sb.WriteString("\n")
		}
		sb.WriteString(t)
	}
	return sb.String()
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// fileInputKeys are the tool input members that name a file the tool read
// or changed.
var fileInputKeys = [...]string{"file_path", "notebook_path"}

// toolFiles returns the files a tool call names.
func toolFiles(name string, input rawJSON) []string {
	if len(input) == 0 || input[0] != '{' {
		return nil
	}
	// The last of each key holds; a value that is not a string is left.
	var vals [len(fileInputKeys)]string
	err := members(input, func(w *jsontext.Reader, key string) error {
		for i, k := range fileInputKeys {
			if key == k {
				if w.Next() != '"' {
					vals[i] = ""
					return w.Skip()
				}
				return str(w, &vals[i])
			}
		}
		return w.Skip()
	})
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range vals {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

package cursor

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pos-lake/pos/extract"
)

// The native shapes below are the subset of Cursor's JSON values that pos
// reads. Everything else stays in the raw records. Cursor changed these
// shapes several times (2023 aichat tabs, late-2024 inline composers, 2025
// composerData/bubbleId rows), and a field may be a string in one version
// and an object in the next: such fields are json.RawMessage and read by
// the helpers at the end of this file.

// composer is a composerData:<id> row, an element of composer.composerData
// allComposers (full or a {type:"head"} header), or a composer head.
type composer struct {
	V             int                        `json:"_v"`
	ComposerID    string                     `json:"composerId"`
	Type          string                     `json:"type"` // "head" in workspace databases since 2025
	Name          string                     `json:"name"`
	Title         string                     `json:"title"`
	CreatedAt     flexTime                   `json:"createdAt"`
	LastUpdatedAt flexTime                   `json:"lastUpdatedAt"`
	UnifiedMode   json.RawMessage            `json:"unifiedMode"` // "agent" | "chat" | … (a number in some bubbles)
	ForceMode     string                     `json:"forceMode"`
	Status        string                     `json:"status"`
	IsAgentic     *bool                      `json:"isAgentic"`
	IsArchived    bool                       `json:"isArchived"`
	Headers       []header                   `json:"fullConversationHeadersOnly"`
	Conversation  []json.RawMessage          `json:"conversation"`    // late 2024: bubbles inline
	ConvMap       map[string]json.RawMessage `json:"conversationMap"` // some versions: bubbles by id
	UsageData     map[string]usageEntry      `json:"usageData"`
	ModelConfig   *struct {
		ModelName string `json:"modelName"`
		MaxMode   bool   `json:"maxMode"`
	} `json:"modelConfig"`
	TotalLinesAdded     *int64   `json:"totalLinesAdded"`
	TotalLinesRemoved   *int64   `json:"totalLinesRemoved"`
	FilesChangedCount   *int64   `json:"filesChangedCount"`
	ContextUsagePercent *float64 `json:"contextUsagePercent"`
	ContextTokensUsed   *int64   `json:"contextTokensUsed"`
	ContextTokenLimit   *int64   `json:"contextTokenLimit"`
	WorkspaceIdentifier *struct {
		ID  string `json:"id"`
		URI *uri   `json:"uri"`
	} `json:"workspaceIdentifier"`
	TrackedGitRepos []json.RawMessage `json:"trackedGitRepos"` // strings or {repoPath}
	IsSubagent      bool              `json:"isSubagent"`
	SubagentInfo    *struct {
		ParentComposerID string `json:"parentComposerId"`
	} `json:"subagentInfo"`
}

type usageEntry struct {
	CostInCents float64 `json:"costInCents"`
	Amount      int64   `json:"amount"`
}

// header is an element of fullConversationHeadersOnly: the order of the
// conversation, whose bodies are bubbleId rows.
type header struct {
	BubbleID       string   `json:"bubbleId"`
	Type           int      `json:"type"` // 1 user, 2 assistant
	ServerBubbleID string   `json:"serverBubbleId"`
	CreatedAt      flexTime `json:"createdAt"`
}

type uri struct {
	FsPath   string `json:"fsPath"`
	Path     string `json:"path"`
	External string `json:"external"`
	Scheme   string `json:"scheme"`
}

// bubble is one message: a bubbleId row (2025), an element of an inline
// conversation (2024) or of an aichat tab's bubbles (2023).
type bubble struct {
	V              int             `json:"_v"`
	Type           json.RawMessage `json:"type"` // 1 | 2 (composer), "user" | "ai" (aichat)
	BubbleID       string          `json:"bubbleId"`
	ID             string          `json:"id"` // aichat
	ServerBubbleID string          `json:"serverBubbleId"`
	Text           string          `json:"text"`
	RawText        string          `json:"rawText"`
	RichText       json.RawMessage `json:"richText"` // Lexical editor state, as a JSON string or object
	InitText       json.RawMessage `json:"initText"`
	Delegate       *struct {
		A string          `json:"a"`
		B json.RawMessage `json:"b"`
	} `json:"delegate"`
	Thinking          json.RawMessage   `json:"thinking"` // {text, signature} or a string
	AllThinkingBlocks []json.RawMessage `json:"allThinkingBlocks"`
	ToolFormerData    *toolFormer       `json:"toolFormerData"`
	TimingInfo        *struct {
		ClientRpcSendTime flexTime `json:"clientRpcSendTime"`
		ClientSettleTime  flexTime `json:"clientSettleTime"`
		ClientEndTime     flexTime `json:"clientEndTime"`
		// clientStartTime is a performance.now() offset, not a time: never read.
	} `json:"timingInfo"`
	TokenCount *struct {
		Input  int64 `json:"inputTokens"`
		Output int64 `json:"outputTokens"`
	} `json:"tokenCount"`
	ModelInfo *struct {
		ModelName string `json:"modelName"`
	} `json:"modelInfo"`
	ModelType             string          `json:"modelType"` // aichat
	CreatedAt             flexTime        `json:"createdAt"`
	UsageUUID             string          `json:"usageUuid"`
	ContextCacheTimestamp flexTime        `json:"contextCacheTimestamp"` // aichat user bubbles
	LongFilesFitTimestamp flexTime        `json:"longFilesFitTimestamp"`
	Context               *bubbleContext  `json:"context"`
	Selections            []selection     `json:"selections"` // aichat
	CodeBlocks            []codeBlock     `json:"codeBlocks"`
	ErrorDetails          json.RawMessage `json:"errorDetails"`
	UnifiedMode           json.RawMessage `json:"unifiedMode"`
	CapabilityType        *int            `json:"capabilityType"`
	IsThought             bool            `json:"isThought"`
}

type toolFormer struct {
	Tool         json.RawMessage `json:"tool"` // a number naming the tool
	ToolCallID   string          `json:"toolCallId"`
	Status       string          `json:"status"`
	Name         string          `json:"name"`
	RawArgs      json.RawMessage `json:"rawArgs"` // JSON in a string, or an object
	Params       json.RawMessage `json:"params"`
	Result       json.RawMessage `json:"result"`
	Error        json.RawMessage `json:"error"`
	UserDecision string          `json:"userDecision"`
}

type bubbleContext struct {
	FileSelections []struct {
		URI *uri `json:"uri"`
	} `json:"fileSelections"`
}

type selection struct {
	URI *uri `json:"uri"`
}

type codeBlock struct {
	URI *uri `json:"uri"`
}

// composerList is the ItemTable composer.composerData value.
type composerList struct {
	AllComposers []json.RawMessage `json:"allComposers"`
}

// chatData is the 2023 ItemTable workbench.panel.aichat.view.aichat.chatdata value.
type chatData struct {
	Tabs []chatTab `json:"tabs"`
}

type chatTab struct {
	TabID        string            `json:"tabId"`
	ChatTitle    string            `json:"chatTitle"`
	LastSendTime flexTime          `json:"lastSendTime"`
	TabState     string            `json:"tabState"`
	Bubbles      []json.RawMessage `json:"bubbles"`
}

// decode unmarshals a native value leniently: a field of an unexpected
// type (a newer Cursor may change one) is left empty and the others are
// filled; the native value stays whole in its raw record. Only JSON that is
// not valid, or not an object, is an error.
func decode(b []byte, v any) error {
	err := json.Unmarshal(b, v)
	var te *json.UnmarshalTypeError
	if err == nil || (errors.As(err, &te) && bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("{"))) {
		return nil
	}
	return err
}

// flexTime is a time written as epoch milliseconds (or seconds), as a
// digit string, or as an ISO-8601 string. The zero value is "absent".
type flexTime struct{ t time.Time }

func (f *flexTime) UnmarshalJSON(b []byte) error {
	f.t = parseTime(b)
	return nil
}

// Time returns the time, and whether it is a plausible one.
func (f flexTime) Time() (time.Time, bool) { return f.t, !f.t.IsZero() }

// Plausible times lie between 2015 and 2100: anything else (a
// performance.now() offset, a zero, a counter) is not a wall-clock time.
var (
	minTime = time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

func parseTime(b []byte) time.Time {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] == 'n' {
		return time.Time{}
	}
	if b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) != nil {
			return time.Time{}
		}
		s = strings.TrimSpace(s)
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return plausible(t.UTC())
		}
		b = []byte(s)
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 {
		return time.Time{}
	}
	if f < 1e11 { // seconds
		f *= 1000
	}
	if f > 1e14 {
		return time.Time{}
	}
	return plausible(time.UnixMilli(int64(f)).UTC())
}

func plausible(t time.Time) time.Time {
	if t.Before(minTime) || !t.Before(maxTime) {
		return time.Time{}
	}
	return t
}

// role returns the message role of a bubble type: 1 or "user" is the user,
// 2 or "ai" the assistant; 0 when unknown.
func bubbleRole(raw json.RawMessage, headerType int) int {
	switch strings.Trim(string(bytes.TrimSpace(raw)), `"`) {
	case "1", "user":
		return 1
	case "2", "ai", "assistant":
		return 2
	}
	if headerType == 1 || headerType == 2 {
		return headerType
	}
	return 0
}

// jsonString returns a JSON value as text: the string itself for a JSON
// string, the compacted JSON for anything else, "" for null or absent.
func jsonString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	return string(compactJSON(raw))
}

// jsonValue returns a value that may be JSON written inside a string (as
// Cursor writes rawArgs, params and result) as JSON: the embedded JSON when
// the string holds some, else the value itself; nil for null or absent.
func jsonValue(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		if t := strings.TrimSpace(s); t != "" && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
			return compactJSON([]byte(t))
		}
		if s == "" {
			return nil
		}
	}
	return compactJSON(raw)
}

// compactJSON returns valid JSON on one line, strict as a raw line is
// (extract.RawJSON); what is not JSON becomes a JSON string of its text.
func compactJSON(b []byte) json.RawMessage {
	if raw, _, err := extract.RawJSON(b); err == nil {
		return raw
	}
	s, _ := json.Marshal(string(b))
	return s
}

// thinkingText is a bubble's reasoning: thinking.text (2025), a thinking
// string, or the allThinkingBlocks texts.
func (b *bubble) thinkingText() string {
	var parts []string
	add := func(raw json.RawMessage) {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			return
		}
		if raw[0] == '"' {
			if s := jsonString(raw); strings.TrimSpace(s) != "" {
				parts = append(parts, s)
			}
			return
		}
		var o struct {
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
		}
		if decode(raw, &o) == nil {
			if s := cmp.Or(o.Text, o.Thinking); strings.TrimSpace(s) != "" {
				parts = append(parts, s)
			}
		}
	}
	add(b.Thinking)
	if len(parts) == 0 {
		for _, t := range b.AllThinkingBlocks {
			add(t)
		}
	}
	return strings.Join(parts, "\n")
}

// text is what a bubble says: its text, else its rawText, else the text of
// its rich-text editor state (2023 user bubbles keep the prompt in
// delegate.a or initText only).
func (b *bubble) text() string {
	for _, s := range []string{b.Text, b.RawText} {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	if b.Delegate != nil && strings.TrimSpace(b.Delegate.A) != "" {
		return b.Delegate.A
	}
	for _, raw := range []json.RawMessage{b.RichText, b.InitText} {
		if s := lexicalText(raw); strings.TrimSpace(s) != "" {
			return s
		}
	}
	if b.Delegate != nil {
		return lexicalText(b.Delegate.B)
	}
	return ""
}

// lexicalText extracts the text of a Lexical editor state ({"root":
// {"children": […]}}), given as a JSON object or as JSON in a string.
// Blocks are separated by newlines.
func lexicalText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		s := jsonString(raw)
		if !strings.HasPrefix(strings.TrimSpace(s), "{") {
			return ""
		}
		raw = json.RawMessage(s)
	}
	var doc struct {
		Root *lexNode `json:"root"`
	}
	if json.Unmarshal(raw, &doc) != nil || doc.Root == nil {
		return ""
	}
	var b strings.Builder
	doc.Root.write(&b, 0)
	return strings.TrimSpace(b.String())
}

type lexNode struct {
	Type     string     `json:"type"`
	Text     string     `json:"text"`
	Children []*lexNode `json:"children"`
}

func (n *lexNode) write(b *strings.Builder, depth int) {
	if n == nil || depth > 64 {
		return
	}
	if n.Text != "" {
		b.WriteString(n.Text)
	}
	if n.Type == "linebreak" {
		b.WriteByte('\n')
	}
	for i, c := range n.Children {
		c.write(b, depth+1)
		if (n.Type == "root") && i < len(n.Children)-1 {
			b.WriteByte('\n')
		}
	}
}

// tool returns the tool call a bubble's toolFormerData describes, and
// whether there is one (a toolFormerData holding only status is none).
func (t *toolFormer) tool() (name, callID string, input json.RawMessage, output string, isErr, ok bool) {
	if t == nil {
		return
	}
	name = t.Name
	if name == "" {
		if n := strings.TrimSpace(string(t.Tool)); n != "" && n != "null" && n != "0" {
			name = "tool_" + strings.Trim(n, `"`)
		}
	}
	if name == "" && t.ToolCallID == "" {
		return
	}
	input = jsonValue(t.RawArgs)
	if input == nil {
		input = jsonValue(t.Params)
	}
	output = jsonString(t.Result)
	if e := jsonString(t.Error); e != "" {
		if output == "" {
			output = e
		}
		isErr = true
	}
	if t.Status == "error" {
		isErr = true
	}
	return name, t.ToolCallID, input, output, isErr, true
}

// fileKeys are the argument names under which Cursor's tools (and the
// Claude-style tools of agent transcripts) name the file they work on.
var fileKeys = []string{"target_file", "targetFile", "relativeWorkspacePath", "file_path", "filePath", "path", "filename"}

// toolFiles returns the files a tool call's arguments name. Directory
// arguments (list_dir's) are not files.
func toolFiles(name string, input json.RawMessage) []string {
	if len(input) == 0 || input[0] != '{' || strings.Contains(strings.ToLower(name), "dir") {
		return nil
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(input, &args) != nil {
		return nil
	}
	var out []string
	for _, k := range fileKeys {
		if s := jsonString(args[k]); s != "" && !strings.ContainsAny(s, "\n\x00") && len(s) < 4096 && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// uriPath turns a VS Code URI (object or string) into a local path.
func (u *uri) path() string {
	if u == nil {
		return ""
	}
	if u.FsPath != "" {
		return u.FsPath
	}
	if u.Path != "" && (u.Scheme == "" || u.Scheme == "file") {
		return fileURIPath("file://" + u.Path)
	}
	if u.External != "" {
		return fileURIPath(u.External)
	}
	return u.Path
}

// files are the files a bubble names: files the user attached and the
// files of the code blocks it shows.
func (b *bubble) files() []string {
	var out []string
	add := func(u *uri) {
		if p := u.path(); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if b.Context != nil {
		for _, f := range b.Context.FileSelections {
			add(f.URI)
		}
	}
	for _, s := range b.Selections {
		add(s.URI)
	}
	for _, c := range b.CodeBlocks {
		add(c.URI)
	}
	return out
}

// model is the model a bubble names ("default" is Cursor's Auto setting,
// not a model).
func (b *bubble) model() string {
	m := b.ModelType
	if b.ModelInfo != nil && b.ModelInfo.ModelName != "" {
		m = b.ModelInfo.ModelName
	}
	if m == "default" {
		return ""
	}
	return m
}

func (c *composer) title() string {
	return strings.TrimSpace(cmp.Or(c.Name, c.Title))
}

// mode is the composer's unified mode (agent, chat, edit, plan …).
func modeString(raw json.RawMessage) string {
	s := jsonString(raw)
	if len(s) > 64 {
		return ""
	}
	return s
}

// validUTF8 returns s with invalid UTF-8 replaced.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

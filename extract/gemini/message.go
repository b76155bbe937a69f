package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"github.com/bytedance/sonic"
	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
)

// record is one JSONL line of a chat file, or one element of a legacy
// file's messages: a message, the initial metadata, a $set metadata update
// or a $rewindTo truncation (chatRecordingTypes.ts: MessageRecord,
// PartialMetadataRecord, MetadataUpdateRecord, RewindRecord).
type record struct {
	// MessageRecord
	ID             string     `json:"id"`
	Timestamp      string     `json:"timestamp"`
	Type           string     `json:"type"` // user | gemini | info | error | warning
	Content        rawJSON    `json:"content"`
	DisplayContent rawJSON    `json:"displayContent"`
	Thoughts       []thought  `json:"thoughts"`
	Tokens         *tokens    `json:"tokens"`
	Model          string     `json:"model"`
	ToolCalls      []toolCall `json:"toolCalls"`

	// ConversationRecord metadata (first line, $set, a legacy file's top)
	metadata

	Set      *setRecord `json:"$set"`
	RewindTo *string    `json:"$rewindTo"`
}

type metadata struct {
	SessionID   string   `json:"sessionId"`
	ProjectHash string   `json:"projectHash"`
	StartTime   string   `json:"startTime"`
	LastUpdated string   `json:"lastUpdated"`
	Summary     string   `json:"summary"`
	Kind        string   `json:"kind"` // main | subagent
	Directories []string `json:"directories"`
}

type setRecord struct {
	metadata
	Messages []rawJSON `json:"messages"`
}

type thought struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
	Timestamp   string `json:"timestamp"`
}

// tokens is Gemini's usage metadata for one response (TokensSummary):
// input = promptTokenCount (which includes the cached part), output =
// candidatesTokenCount (without thoughts), cached = cachedContentTokenCount,
// thoughts = thoughtsTokenCount, tool = toolUsePromptTokenCount, total =
// totalTokenCount = input + output + thoughts + tool.
type tokens struct {
	Input    int64 `json:"input"`
	Output   int64 `json:"output"`
	Cached   int64 `json:"cached"`
	Thoughts int64 `json:"thoughts"`
	Tool     int64 `json:"tool"`
	Total    int64 `json:"total"`
}

// usage maps Gemini's counts onto schema.Usage so that its four fields add
// up to Gemini's total without counting a token twice: Input is the
// uncached prompt plus the tool-use prompt, CacheRead the cached prompt,
// Output the candidates plus the thoughts (billed as output). Gemini
// reports no cache writes.
func (t *tokens) usage() *schema.Usage {
	in := t.Input - t.Cached
	if in < 0 {
		in = 0
	}
	return &schema.Usage{Input: in + t.Tool, Output: t.Output + t.Thoughts, CacheRead: t.Cached}
}

type toolCall struct {
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	Args          rawJSON `json:"args"`
	Result        rawJSON `json:"result"`
	Status        string  `json:"status"`
	Timestamp     string  `json:"timestamp"`
	ResultDisplay rawJSON `json:"resultDisplay"`
}

// part is a @google/genai Part, as far as pos reads it.
type part struct {
	Text             string  `json:"text"`
	Thought          bool    `json:"thought"`
	InlineData       rawJSON `json:"inlineData"`
	FileData         rawJSON `json:"fileData"`
	FunctionCall     rawJSON `json:"functionCall"`
	FunctionResponse *struct {
		ID       string  `json:"id"`
		Name     string  `json:"name"`
		Response rawJSON `json:"response"`
	} `json:"functionResponse"`
}

var api = sonic.Config{}.Froze()

type rawJSON = sonic.NoCopyRawMessage

func decode(b []byte, v any) error {
	return api.UnmarshalFromString(unsafe.String(unsafe.SliceData(b), len(b)), v)
}

// parseRecord decodes a line or element. A member of a type this adapter
// does not expect is not an error: encoding/json fills the others and the
// record stays whole in raw.
func parseRecord(b []byte, r *record) error {
	_, err := parseRecordOdd(b, r)
	return err
}

// parseRecordOdd is parseRecord, also saying which member could not be
// read for its type (odd; the record is read without it).
func parseRecordOdd(b []byte, r *record) (odd, err error) {
	*r = record{}
	if err := decode(b, r); err == nil {
		return nil, nil
	}
	*r = record{}
	err = json.Unmarshal(b, r)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return extract.FieldError(err), nil
	}
	return nil, err
}

// check makes what pos reads of a record usable, and says what it
// changed: a timestamp that is no time is not read, a token count below
// zero is read as zero. odd, from parseRecordOdd, is added; the result is
// one line.
func (r *record) check(odd error) error {
	var errs []string
	if odd != nil {
		errs = append(errs, odd.Error())
	}
	if r.Timestamp != "" {
		if _, ok := extract.ParseTime(r.Timestamp); !ok {
			errs = append(errs, fmt.Sprintf("timestamp %q is not a time: not read", r.Timestamp))
		}
	}
	if t := r.Tokens; t != nil {
		neg := false
		for _, n := range []*int64{&t.Input, &t.Output, &t.Cached, &t.Thoughts, &t.Tool, &t.Total} {
			if *n < 0 {
				*n, neg = 0, true
			}
		}
		if neg {
			errs = append(errs, "tokens: a count below zero: read as 0")
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(errs, "; "))
}

// partsOf decodes a PartListUnion: a string, a Part, or a list of both.
func partsOf(raw rawJSON) []part {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '"':
		var s string
		if decode(raw, &s) == nil {
			return []part{{Text: s}}
		}
	case '{':
		var p part
		if decode(raw, &p) == nil {
			return []part{p}
		}
	case '[':
		var items []rawJSON
		if decode(raw, &items) != nil {
			return nil
		}
		var out []part
		for _, it := range items {
			out = append(out, partsOf(it)...)
		}
		return out
	}
	return nil
}

// texts splits parts into prose, thought text and function responses.
func texts(ps []part) (text, thinking string, responses int) {
	var t, th []string
	for _, p := range ps {
		switch {
		case p.FunctionResponse != nil:
			responses++
		case p.Thought && p.Text != "":
			th = append(th, p.Text)
		case p.Text != "":
			t = append(t, p.Text)
		case len(p.InlineData) > 0 || len(p.FileData) > 0:
			t = append(t, "[file]")
		}
	}
	return strings.Join(t, "\n"), strings.Join(th, "\n"), responses
}

// resultText flattens a tool call's result: the functionResponse output
// (or error), text parts, or else the display string.
func resultText(tc *toolCall) string {
	var out []string
	for _, p := range partsOf(tc.Result) {
		switch {
		case p.FunctionResponse != nil:
			var r struct {
				Output *string `json:"output"`
				Error  *string `json:"error"`
			}
			resp := bytes.TrimSpace(p.FunctionResponse.Response)
			switch {
			case len(resp) == 0:
			case decode(resp, &r) == nil && r.Output != nil:
				out = append(out, *r.Output)
			case r.Error != nil:
				out = append(out, *r.Error)
			default:
				out = append(out, string(extract.OneLine(resp)))
			}
		case p.Text != "":
			out = append(out, p.Text)
		}
	}
	if len(out) == 0 {
		var s string
		if d := bytes.TrimSpace(tc.ResultDisplay); len(d) > 0 && d[0] == '"' && decode(d, &s) == nil {
			return s
		}
	}
	return strings.Join(out, "\n")
}

// fileArgs are the tool arguments that name a file the tool read or
// changed (read_file, write_file, replace, read_many_files).
var fileArgs = []string{"file_path", "absolute_path"}

func toolFiles(args rawJSON) []string {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || args[0] != '{' {
		return nil
	}
	var m map[string]rawJSON
	if decode(args, &m) != nil {
		return nil
	}
	var out []string
	for _, k := range fileArgs {
		var s string
		if v, ok := m[k]; ok && decode(v, &s) == nil && s != "" {
			out = append(out, s)
		}
	}
	if v, ok := m["paths"]; ok {
		var ps []string
		if decode(v, &ps) == nil {
			out = append(out, ps...)
		}
	}
	return out
}

// fill makes rec the message a MessageRecord describes. It returns false
// for a record that is not a message pos knows (kept raw only).
func fill(rec *schema.Record, m *record) bool {
	rec.NativeID = m.ID
	rec.NativeType = "message/" + m.Type
	switch m.Type {
	case "user":
		content := m.DisplayContent
		if len(bytes.TrimSpace(content)) == 0 {
			content = m.Content
		}
		text, _, responses := texts(partsOf(content))
		rec.Text = text
		rec.Role, rec.ContentType = schema.RoleUser, schema.ContentText
		if strings.TrimSpace(text) == "" && responses > 0 {
			rec.Role, rec.ContentType = schema.RoleTool, schema.ContentToolResult
		}
	case "gemini":
		text, th, _ := texts(partsOf(m.Content))
		rec.Role, rec.Text, rec.Model = schema.RoleAssistant, text, m.Model
		var thinking []string
		if th != "" {
			thinking = append(thinking, th)
		}
		for _, t := range m.Thoughts {
			switch {
			case t.Subject != "" && t.Description != "":
				thinking = append(thinking, t.Subject+": "+t.Description)
			case t.Subject != "" || t.Description != "":
				thinking = append(thinking, t.Subject+t.Description)
			}
		}
		rec.Thinking = strings.Join(thinking, "\n")
		for i := range m.ToolCalls {
			tc := &m.ToolCalls[i]
			rec.Tools = append(rec.Tools, schema.Tool{
				Name: tc.Name, CallID: tc.ID, Input: extract.OneLine(tc.Args),
				Output: resultText(tc), IsError: tc.Status == "error",
			})
			rec.Files = append(rec.Files, toolFiles(tc.Args)...)
		}
		if m.Tokens != nil {
			rec.Usage = m.Tokens.usage()
		}
		rec.ContentType = schema.AssistantContentType(rec.Text, rec.Thinking, len(rec.Tools))
	case "info", "warning":
		text, _, _ := texts(partsOf(m.Content))
		rec.Role, rec.ContentType, rec.Text = schema.RoleSystem, schema.ContentMeta, text
	case "error":
		text, _, _ := texts(partsOf(m.Content))
		rec.Role, rec.ContentType, rec.Text = schema.RoleSystem, schema.ContentError, text
	default:
		return false
	}
	return true
}

package cline

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bytedance/sonic"
	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/internal/anthropic"
	"github.com/pos-lake/pos/internal/joinstr"
	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/schema"
)

// apiMessage is one element of api_conversation_history.json: an Anthropic
// MessageParam plus what Cline and its forks add to it.
type apiMessage struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // a string or blocks
	TS        json.RawMessage `json:"ts"`      // newer Cline, Roo Code, Kilo Code: epoch ms
	ModelInfo *modelInfo      `json:"modelInfo"`
	Metrics   *struct {
		Tokens *struct {
			Prompt     float64 `json:"prompt"`
			Completion float64 `json:"completion"`
			Cached     float64 `json:"cached"`
		} `json:"tokens"`
		Cost *float64 `json:"cost"`
	} `json:"metrics"`
	IsSummary bool `json:"isSummary"` // Roo Code: the summary of a condensed context
}

type modelInfo struct {
	ModelID    string `json:"modelId"`
	ProviderID string `json:"providerId"`
	Mode       string `json:"mode"`
}

// block is one element of a message's content, as the Messages API has it.
type block = anthropic.Block

// fast decodes elements; it is several times faster than encoding/json on
// the long strings of a history. Decoded strings share the input's memory:
// the input is a record's raw, never changed once read.
var fast = sonic.Config{}.Froze()

// lenientUnmarshal decodes b into v. A member of a type this adapter does
// not expect (a newer Cline may change one) is not an error: encoding/json
// fills every other member, and the element is kept whole in the raw record.
func lenientUnmarshal(b []byte, v any) error {
	_, err := lenientOdd(b, v)
	return err
}

// lenientOdd is lenientUnmarshal, also saying which member could not be
// read for its type (odd; v is filled without it).
func lenientOdd(b []byte, v any) (odd, err error) {
	if fast.Unmarshal(b, v) == nil {
		return nil, nil
	}
	reflect.ValueOf(v).Elem().SetZero() // what the fast decoder filled before it stopped
	err = json.Unmarshal(b, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return extract.FieldError(err), nil
	}
	return nil, err
}

// blocks decodes message content: a string is one text block.
func blocks(raw json.RawMessage) []block {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		return []block{{Type: "text", Text: s}}
	}
	if raw[0] != '[' {
		return nil
	}
	var out []block
	if fast.Unmarshal(raw, &out) == nil {
		return out
	}
	// Some block is not of the expected shape: decode them one by one.
	var bs []json.RawMessage
	if json.Unmarshal(raw, &bs) != nil {
		return nil
	}
	out = make([]block, 0, len(bs))
	for _, b := range bs {
		var x block
		if lenientUnmarshal(b, &x) == nil {
			out = append(out, x)
		}
	}
	return out
}

// epochMS reads a time written as epoch milliseconds (a number, or a string
// holding one or an RFC 3339 time).
func epochMS(raw json.RawMessage) (time.Time, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, false
	}
	s := string(raw)
	if raw[0] == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return time.Time{}, false
		}
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UTC(), true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || f > 1e15 {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(f)).UTC(), true
}

// pendingTool is a tool call of the last assistant message, waiting for its
// result in the next user message.
type pendingTool struct {
	name, id string
	used     bool
}

// claim pairs a result with the first unanswered call of that tool (Cline
// answers the calls of a message in order) and returns the call's id.
func claim(calls []pendingTool, name string) string {
	for i := range calls {
		if !calls[i].used && calls[i].name == name {
			calls[i].used = true
			return calls[i].id
		}
	}
	return ""
}

// userParts is what a user message of the api history holds, sorted out:
// Cline sends tool results, the user's own words and text it injects itself
// (environment details, reminders, resumption notes) as one user message.
type userParts struct {
	prompt []string      // what the user typed: the task, feedback, new instructions
	tools  []schema.Tool // tool results
	system []string      // text Cline injected
	other  []string      // text of no known kind
	open   int           // the result whose output the next blocks are, or -1
}

var resultHead = regexp.MustCompile(`^\[([A-Za-z0-9_.:\-]+)(?: for (?s:.*))?\] Result:$`)
var notExecuted = regexp.MustCompile(`^Tool \[([A-Za-z0-9_.:\-]+)\] was not executed`)

// systemPrefixes start text that Cline (or a fork) writes into a user
// message itself.
var systemPrefixes = []string{
	"<environment_details>", "[TASK RESUMPTION]", "[ERROR]", "[NOTE]", "[IMPORTANT",
	"# task_progress", "# TODO LIST", "# Reminder", "<explicit_instructions", "<automatic_reminders",
	"<hook_context", "<system-reminder>", "<notice>",
}

// classifyUser sorts a user message's blocks. calls are the last assistant
// message's tool calls (tool results are paired with them); names maps
// tool_use ids to tool names.
func classifyUser(bs []block, calls []pendingTool, names map[string]string) userParts {
	p := userParts{open: -1}
	for _, b := range bs {
		switch b.Type {
		case "text":
			p.text(b.Text, calls)
		case "image", "document":
			if p.open >= 0 {
				p.tools[p.open].Output = joinstr.NonEmpty(p.tools[p.open].Output, "["+b.Type+"]", "\n")
			} else {
				p.other = append(p.other, "["+b.Type+"]")
			}
		case "tool_result":
			p.open = -1
			out := resultText(b.Content)
			name, body := names[b.ToolUseID], out
			if n, rest, ok := splitResult(out); ok {
				name = cmp.Or(name, n)
				body = rest
			}
			if b.ToolUseID != "" {
				for i := range calls {
					if calls[i].id == b.ToolUseID {
						calls[i].used = true
					}
				}
			}
			p.tools = append(p.tools, schema.Tool{Name: name, CallID: b.ToolUseID, Output: body, IsError: b.IsError || denied(body)})
			p.feedback(body)
		}
	}
	// Text of no known kind in a message that holds nothing else is taken
	// as typed by the user, so that it is searchable as a prompt; beside a
	// prompt or tool results it is context Cline added (it stays raw).
	if len(p.prompt) == 0 && len(p.tools) == 0 {
		p.prompt, p.other = p.other, nil
	}
	return p
}

// text sorts one text block. Older Cline and Roo Code send a result's
// header ("[read_file for 'x'] Result:") as a block of its own and the
// output in the blocks after it: those join the open result.
func (p *userParts) text(t string, calls []pendingTool) {
	s := strings.TrimSpace(t)
	if s == "" {
		return
	}
	if name, body, ok := splitResult(s); ok {
		p.open = -1
		p.tools = append(p.tools, schema.Tool{Name: name, CallID: claim(calls, name), Output: body, IsError: denied(body)})
		if body == "" {
			p.open = len(p.tools) - 1
		}
		p.feedback(body)
		return
	}
	if m := notExecuted.FindStringSubmatch(s); m != nil {
		p.open = -1
		p.tools = append(p.tools, schema.Tool{Name: m[1], CallID: claim(calls, m[1]), Output: s, IsError: true})
		return
	}
	if strings.HasPrefix(s, "<task>") {
		p.open = -1
		p.prompt = append(p.prompt, cmp.Or(between(s, "<task>", "</task>"), strings.TrimSpace(strings.TrimPrefix(s, "<task>"))))
		return
	}
	for _, pre := range systemPrefixes {
		if strings.HasPrefix(s, pre) {
			p.open = -1
			if um := between(s, "<user_message>", "</user_message>"); um != "" {
				p.prompt = append(p.prompt, um)
			}
			if pre != "<environment_details>" {
				p.system = append(p.system, s)
			}
			return
		}
	}
	if p.open >= 0 {
		tl := &p.tools[p.open]
		tl.Output = joinstr.NonEmpty(tl.Output, s, "\n")
		tl.IsError = tl.IsError || denied(tl.Output)
		p.feedback(s)
		return
	}
	if p.feedback(s) {
		return
	}
	if um := between(s, "<user_message>", "</user_message>"); um != "" {
		p.prompt = append(p.prompt, um)
		return
	}
	p.other = append(p.other, s)
}

// feedback takes what the user typed in reply to a tool call or a
// completion (<feedback>…</feedback>) as a prompt.
func (p *userParts) feedback(s string) bool {
	fb := between(s, "<feedback>", "</feedback>")
	if fb != "" {
		p.prompt = append(p.prompt, fb)
	}
	return fb != ""
}

// splitResult splits "[read_file for 'x'] Result:\n…" into the tool's name
// and what follows.
func splitResult(s string) (name, body string, ok bool) {
	s = strings.TrimLeft(s, " \t\r\n")
	head, rest, _ := strings.Cut(s, "\n")
	m := resultHead.FindStringSubmatch(strings.TrimSpace(head))
	if m == nil {
		return "", "", false
	}
	return m[1], strings.TrimSpace(rest), true
}

// denied tells a result that reports the user refused the call.
func denied(body string) bool {
	return strings.HasPrefix(body, "The user denied this operation") || strings.HasPrefix(body, "The tool execution failed")
}

// resultText flattens a tool_result's content (a string, or text and image
// blocks) into text.
func resultText(raw json.RawMessage) string {
	var parts []string
	for _, b := range blocks(raw) {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

// between returns the trimmed text between the first open tag and the last
// close tag after it, or "".
func between(s, open, close string) string {
	i := strings.Index(s, open)
	if i < 0 {
		return ""
	}
	s = s[i+len(open):]
	j := strings.LastIndex(s, close)
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(s[:j])
}

// assistantParts is an assistant message sorted out.
type assistantParts struct {
	text, thinking []string
	tools          []schema.Tool
	files          []string
}

// answerInputs are the tool inputs whose text the user reads as the
// assistant's answer (Cline shows them as prose, not as a tool call).
var answerInputs = map[string]string{
	"attempt_completion": "result", "plan_mode_respond": "response", "ask_followup_question": "question",
}

// fileTools are the tools whose "path" input names a file the agent read or
// changed (Cline's, Roo Code's and Kilo Code's names, and the ui's).
var fileTools = map[string]bool{
	"read_file": true, "write_to_file": true, "replace_in_file": true, "apply_diff": true, "insert_content": true,
	"search_and_replace": true, "edit_file": true, "new_rule": true, "apply_patch": true, "multi_apply_diff": true,
	"readFile": true, "newFileCreated": true, "editedExistingFile": true, "fileDeleted": true, "appliedDiff": true,
	"insertContent": true, "searchAndReplace": true,
}

func classifyAssistant(bs []block) assistantParts {
	var a assistantParts
	native := slices.ContainsFunc(bs, func(b block) bool { return b.Type == "tool_use" })
	for _, b := range bs {
		switch b.Type {
		case "text":
			t := b.Text
			var tools []schema.Tool
			if !native {
				var th []string
				t, th, tools = splitXML(t)
				a.thinking = append(a.thinking, th...)
			}
			if t = strings.TrimSpace(t); t != "" {
				a.text = append(a.text, t)
			}
			for _, tl := range tools {
				a.addTool(tl)
			}
		case "thinking", "reasoning":
			if t := strings.TrimSpace(cmp.Or(b.Thinking, b.Text)); t != "" {
				a.thinking = append(a.thinking, t)
			}
		case "redacted_thinking":
			a.thinking = append(a.thinking, "[redacted]")
		case "tool_use", "server_tool_use":
			a.addTool(schema.Tool{Name: b.Name, CallID: b.ID, Input: b.Input})
		}
	}
	return a
}

// addTool records a tool call, the files it names, and the answer text it
// carries.
func (a *assistantParts) addTool(t schema.Tool) {
	a.tools = append(a.tools, t)
	if len(t.Input) == 0 || t.Input[0] != '{' {
		return
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(t.Input, &in) != nil {
		return
	}
	str := func(k string) string {
		var s string
		if v, ok := in[k]; ok && json.Unmarshal(v, &s) == nil {
			return s
		}
		return ""
	}
	if k, ok := answerInputs[t.Name]; ok {
		if s := strings.TrimSpace(str(k)); s != "" {
			a.text = append(a.text, s)
		}
	}
	if fileTools[t.Name] {
		for _, k := range []string{"absolutePath", "path", "file_path"} {
			if p := str(k); p != "" {
				a.files = append(a.files, p)
				break
			}
		}
		// Roo Code's read_file takes several files as <file><path>…</path></file>.
		for _, m := range xmlPath.FindAllStringSubmatch(str("args"), -1) {
			a.files = append(a.files, strings.TrimSpace(m[1]))
		}
	}
}

var xmlPath = regexp.MustCompile(`<path>([^<]+)</path>`)

// xmlTools are the tools older Cline and Roo Code call with XML in the
// assistant's text (<read_file><path>x</path></read_file>) instead of
// tool_use blocks.
var xmlTools = map[string]bool{
	"read_file": true, "write_to_file": true, "replace_in_file": true, "execute_command": true, "search_files": true,
	"list_files": true, "list_code_definition_names": true, "browser_action": true, "use_mcp_tool": true,
	"access_mcp_resource": true, "ask_followup_question": true, "attempt_completion": true, "plan_mode_respond": true,
	"new_task": true, "apply_diff": true, "insert_content": true, "search_and_replace": true, "switch_mode": true,
	"fetch_instructions": true, "codebase_search": true, "update_todo_list": true, "load_mcp_documentation": true,
	"web_fetch": true, "new_rule": true, "condense": true, "report_bug": true, "summarize_task": true,
}

var xmlOpen = regexp.MustCompile(`<([a-z_]+)>`)

// splitXML takes <thinking> blocks and XML tool calls out of an assistant
// text. A tag without its closing tag is left in the text.
func splitXML(t string) (rest string, thinking []string, tools []schema.Tool) {
	if !strings.Contains(t, "<") {
		return t, nil, nil
	}
	var out strings.Builder
	var unclosed map[string]bool // tags with no closing tag in the rest: not searched again
	for {
		loc := xmlOpen.FindStringSubmatchIndex(t)
		if loc == nil {
			out.WriteString(t)
			break
		}
		name := t[loc[2]:loc[3]]
		if (name != "thinking" && !xmlTools[name]) || unclosed[name] {
			out.WriteString(t[:loc[1]])
			t = t[loc[1]:]
			continue
		}
		closeTag := "</" + name + ">"
		j := strings.Index(t[loc[1]:], closeTag)
		if j < 0 {
			if unclosed == nil {
				unclosed = map[string]bool{}
			}
			unclosed[name] = true
			out.WriteString(t[:loc[1]])
			t = t[loc[1]:]
			continue
		}
		inner := t[loc[1] : loc[1]+j]
		out.WriteString(t[:loc[0]])
		t = t[loc[1]+j+len(closeTag):]
		if name == "thinking" {
			if s := strings.TrimSpace(inner); s != "" {
				thinking = append(thinking, s)
			}
			continue
		}
		tools = append(tools, schema.Tool{Name: name, Input: xmlParams(inner)})
	}
	return out.String(), thinking, tools
}

// xmlParams turns "<path>a</path><content>b</content>" into a JSON object.
func xmlParams(inner string) json.RawMessage {
	b := []byte{'{'}
	n := 0
	var unclosed map[string]bool
	for {
		loc := xmlOpen.FindStringSubmatchIndex(inner)
		if loc == nil {
			break
		}
		name := inner[loc[2]:loc[3]]
		closeTag := "</" + name + ">"
		j := -1
		if !unclosed[name] {
			// A file's content may hold its own closing tag: content and
			// diff run to the last one.
			if name == "content" || name == "diff" {
				j = strings.LastIndex(inner[loc[1]:], closeTag)
			} else {
				j = strings.Index(inner[loc[1]:], closeTag)
			}
		}
		if j < 0 {
			if unclosed == nil {
				unclosed = map[string]bool{}
			}
			unclosed[name] = true
			inner = inner[loc[1]:]
			continue
		}
		v := strings.TrimSuffix(strings.TrimPrefix(inner[loc[1]:loc[1]+j], "\n"), "\n")
		if n > 0 {
			b = append(b, ',')
		}
		b = jsontext.AppendString(b, name)
		b = append(b, ':')
		b = jsontext.AppendString(b, v)
		n++
		inner = inner[loc[1]+j+len(closeTag):]
	}
	return append(b, '}')
}

var cwdRE = regexp.MustCompile(`# Current (?:Working|Workspace) Directory \(([^)\n]+)\)`)

// findCwd returns the working directory Cline names in its environment
// details, or "".
func findCwd(s string) string {
	if m := cwdRE.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}

// resolve makes a path the agent named relative to the task's working
// directory absolute, in the working directory's own style.
func resolve(cwd, p string) string {
	p = strings.TrimSpace(p)
	if p == "" || cwd == "" || isAbs(p) {
		return p
	}
	sep := "/"
	if strings.Contains(cwd, `\`) && !strings.Contains(cwd, "/") {
		sep = `\`
	}
	p = strings.TrimPrefix(strings.TrimPrefix(p, "./"), `.\`)
	return strings.TrimRight(cwd, `/\`) + sep + p
}

func isAbs(p string) bool {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || strings.HasPrefix(p, "~") {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '/' || p[2] == '\\') &&
		(p[0]|0x20) >= 'a' && (p[0]|0x20) <= 'z'
}

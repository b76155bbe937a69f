package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/bytedance/sonic"

	"github.com/pos-lake/pos/extract"
)

// line is a rollout line: {timestamp, type, payload}. Rollouts written
// before Codex wrapped its lines (mid 2025) hold bare response items
// ({"type":"message",…}) after a first line {id, timestamp, instructions};
// those are read too, the line itself being the payload.
type line struct {
	Timestamp  string  `json:"timestamp"`
	Type       string  `json:"type"`
	Payload    rawJSON `json:"payload"`
	ID         string  `json:"id"`          // legacy first line
	RecordType string  `json:"record_type"` // legacy {"record_type":"state"}
}

// payload is the union of the payload members pos reads, over every line
// type; everything else stays in the raw record.
type payload struct {
	Type string `json:"type"`

	// session_meta
	ID            string  `json:"id"`
	Timestamp     string  `json:"timestamp"`
	Cwd           string  `json:"cwd"`
	Originator    string  `json:"originator"`
	CLIVersion    string  `json:"cli_version"`
	Source        rawJSON `json:"source"` // "cli" | "vscode" | "exec" | {"subagent": …}
	ThreadSource  string  `json:"thread_source"`
	ModelProvider string  `json:"model_provider"`
	ForkedFromID  string  `json:"forked_from_id"`
	AgentNickname string  `json:"agent_nickname"`
	AgentRole     string  `json:"agent_role"`
	Git           *struct {
		CommitHash    string `json:"commit_hash"`
		Branch        string `json:"branch"`
		RepositoryURL string `json:"repository_url"`
	} `json:"git"`

	// turn_context
	TurnID string `json:"turn_id"`
	Model  string `json:"model"`

	// response_item
	Role      string  `json:"role"`
	Content   rawJSON `json:"content"` // message: [{type, text}]; reasoning: [{type, text}] or null
	Phase     string  `json:"phase"`
	Summary   rawJSON `json:"summary"` // reasoning: [{type, text}] (turn_context: a string)
	Name      string  `json:"name"`
	Arguments rawJSON `json:"arguments"` // function_call: a JSON string
	Input     rawJSON `json:"input"`     // custom_tool_call: a string
	CallID    string  `json:"call_id"`
	Output    rawJSON `json:"output"` // a string, content items, or {content, success}
	Status    string  `json:"status"`
	Action    rawJSON `json:"action"` // local_shell_call, web_search_call
	Success   *bool   `json:"success"`

	// event_msg (and the compacted line's message)
	Message            rawJSON    `json:"message"`
	Info               *tokenInfo `json:"info"`
	Reason             string     `json:"reason"`
	ThreadName         string     `json:"thread_name"`
	ReplacementHistory rawJSON    `json:"replacement_history"`
}

type tokenInfo struct {
	Total *tokens `json:"total_token_usage"`
	Last  *tokens `json:"last_token_usage"`
}

// tokens is Codex's TokenUsage. input_tokens includes cached_input_tokens
// (OpenAI's convention); output_tokens includes reasoning_output_tokens.
type tokens struct {
	Input      int64 `json:"input_tokens"`
	Cached     int64 `json:"cached_input_tokens"`
	CacheWrite int64 `json:"cache_write_input_tokens"`
	Output     int64 `json:"output_tokens"`
	Reasoning  int64 `json:"reasoning_output_tokens"`
	Total      int64 `json:"total_tokens"`
}

func (t tokens) sub(o tokens) tokens {
	return tokens{Input: t.Input - o.Input, Cached: t.Cached - o.Cached, CacheWrite: t.CacheWrite - o.CacheWrite,
		Output: t.Output - o.Output, Reasoning: t.Reasoning - o.Reasoning, Total: t.Total - o.Total}
}

func (t tokens) add(o tokens) tokens {
	return tokens{Input: t.Input + o.Input, Cached: t.Cached + o.Cached, CacheWrite: t.CacheWrite + o.CacheWrite,
		Output: t.Output + o.Output, Reasoning: t.Reasoning + o.Reasoning, Total: t.Total + o.Total}
}

// atLeast reports whether every counter of t is at least o's: a cumulative
// total that grew (or stayed).
func (t tokens) atLeast(o tokens) bool {
	return t.Input >= o.Input && t.Cached >= o.Cached && t.CacheWrite >= o.CacheWrite &&
		t.Output >= o.Output && t.Reasoning >= o.Reasoning
}

func (t tokens) isZero() bool { return t == tokens{} }

// String encodes tokens for a checkpoint's context.
func (t tokens) String() string {
	return fmt.Sprintf("%d,%d,%d,%d,%d,%d", t.Input, t.Cached, t.CacheWrite, t.Output, t.Reasoning, t.Total)
}

func parseTokens(s string) (tokens, bool) {
	f := strings.Split(s, ",")
	if len(f) != 6 {
		return tokens{}, false
	}
	var v [6]int64
	for i, x := range f {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return tokens{}, false
		}
		v[i] = n
	}
	return tokens{v[0], v[1], v[2], v[3], v[4], v[5]}, true
}

// api decodes native lines. Decoded strings share the copy of the line
// sonic is given, which is the record's raw and outlives them.
var api = sonic.Config{}.Froze()

// rawJSON is a JSON value left undecoded, pointing into its line.
type rawJSON = sonic.NoCopyRawMessage

func decode(b []byte, v any) error {
	return api.UnmarshalFromString(unsafe.String(unsafe.SliceData(b), len(b)), v)
}

// parseLine decodes a line and its payload. A payload member of a type
// this adapter does not expect (a newer Codex may change one) is not an
// error: encoding/json fills the others and the line stays whole in raw.
func parseLine(b []byte, l *line, p *payload) error {
	_, err := parseLineOdd(b, l, p)
	return err
}

// parseLineOdd is parseLine, also saying which field of the line could not
// be read for its type (odd; the line is read without it).
func parseLineOdd(b []byte, l *line, p *payload) (odd, err error) {
	*l, *p = line{}, payload{}
	if err := decode(b, l); err != nil {
		*l = line{}
		var ok bool
		if odd, ok = lenient(b, l); !ok {
			return nil, err
		}
	}
	body := []byte(l.Payload)
	if len(body) == 0 || string(body) == "null" {
		body = b // legacy: the line is the payload
	}
	if len(trimSpace(body)) == 0 || trimSpace(body)[0] != '{' {
		return odd, nil // a payload that is not an object: the line is kept raw
	}
	if err := decode(body, p); err != nil {
		*p = payload{}
		podd, _ := lenient(body, p)
		if podd != nil && len(l.Payload) > 0 {
			podd = fmt.Errorf("payload.%w", podd)
		}
		odd = errors.Join(odd, podd)
	}
	return odd, nil
}

// lenient decodes b into v with encoding/json, which reads every field but
// those of another type than v's; odd says which one it left out.
func lenient(b []byte, v any) (odd error, ok bool) {
	err := json.Unmarshal(b, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return extract.FieldError(err), true
	}
	return nil, err == nil
}

// check makes what pos reads of a line usable, and says what it changed:
// a timestamp that is no time is not read, a token count below zero is
// read as zero.
func check(l *line, p *payload) error {
	var errs []error
	if l.Timestamp != "" {
		if _, ok := extract.ParseTime(l.Timestamp); !ok {
			errs = append(errs, fmt.Errorf("timestamp %q is not a time: not read", l.Timestamp))
		}
	}
	if i := p.Info; i != nil && (i.Total.clamp() || i.Last.clamp()) {
		errs = append(errs, errors.New("payload.info: a token count below zero: read as 0"))
	}
	return errors.Join(errs...)
}

// clamp reads counts below zero as zero, and reports whether there was one.
func (t *tokens) clamp() bool {
	if t == nil {
		return false
	}
	neg := false
	for _, n := range []*int64{&t.Input, &t.Cached, &t.CacheWrite, &t.Output, &t.Reasoning, &t.Total} {
		if *n < 0 {
			*n, neg = 0, true
		}
	}
	return neg
}

func trimSpace(b []byte) []byte { return bytes.TrimSpace(b) }

// str decodes a JSON string value; anything else is "".
func str(raw rawJSON) string {
	raw = trimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if decode(raw, &s) != nil {
		return ""
	}
	return s
}

// part is an element of message content, reasoning summary or content,
// or a tool output's content items.
type part struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func parts(raw rawJSON) []part {
	raw = trimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil
	}
	var ps []part
	if decode(raw, &ps) != nil {
		return nil
	}
	return ps
}

// contentText joins the text of content items; images are "[image]".
func contentText(raw rawJSON) string {
	if s := str(raw); s != "" {
		return s
	}
	var out []string
	for _, p := range parts(raw) {
		switch {
		case p.Text != "":
			out = append(out, p.Text)
		case strings.Contains(p.Type, "image"):
			out = append(out, "[image]")
		}
	}
	return strings.Join(out, "\n")
}

// toolInput is a call's input as JSON: function_call arguments are a JSON
// string holding JSON (kept as that JSON when it parses), custom tool input
// is free text (kept as a JSON string).
func toolInput(raw rawJSON) json.RawMessage {
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] != '"' {
		return extract.OneLine(raw)
	}
	s := str(raw)
	if t := strings.TrimSpace(s); t != "" && (t[0] == '{' || t[0] == '[') {
		// Arguments sent as a JSON text: kept as the JSON they hold, made
		// strict as a raw line is.
		if in, _, err := extract.RawJSON([]byte(t)); err == nil {
			var buf bytes.Buffer
			if json.Compact(&buf, in) == nil {
				return buf.Bytes()
			}
		}
	}
	return extract.OneLine(raw)
}

// toolOutput flattens a call output and tells whether it reports a
// failure. Codex writes a string, content items, or {content, success};
// older shell output is a JSON string {"output", "metadata": {"exit_code"}},
// newer text begins with "Exit code: N" or carries "Process exited with
// code N".
func toolOutput(raw rawJSON, success *bool) (string, bool) {
	raw = trimSpace(raw)
	isErr := success != nil && !*success
	var text string
	switch {
	case len(raw) == 0:
	case raw[0] == '"':
		text = str(raw)
	case raw[0] == '[':
		text = contentText(raw)
	case raw[0] == '{':
		var o struct {
			Content rawJSON `json:"content"`
			Success *bool   `json:"success"`
		}
		if decode(raw, &o) == nil {
			text = contentText(o.Content)
			if o.Success != nil && !*o.Success {
				isErr = true
			}
		} else {
			text = string(raw)
		}
	default:
		text = string(raw)
	}
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") && strings.Contains(t, `"metadata"`) {
		var o struct {
			Output   *string `json:"output"`
			Metadata struct {
				ExitCode *int64 `json:"exit_code"`
			} `json:"metadata"`
		}
		if json.Unmarshal([]byte(t), &o) == nil && o.Output != nil {
			text = *o.Output
			if c := o.Metadata.ExitCode; c != nil && *c != 0 {
				isErr = true
			}
			return text, isErr
		}
	}
	head := text
	if len(head) > 2048 {
		head = head[:2048]
	}
	if m := exitRE.FindStringSubmatch(head); m != nil && m[1] != "0" && m[2] != "0" {
		isErr = true
	}
	return text, isErr
}

var exitRE = regexp.MustCompile(`(?m)^(?:Exit code: (-?\d+)|Process exited with code (-?\d+))\s*$`)

// patchFiles returns the files an apply_patch body names.
func patchFiles(patch, cwd string) []string {
	if !strings.Contains(patch, "*** ") {
		return nil
	}
	var out []string
	for _, l := range strings.Split(patch, "\n") {
		l = strings.TrimRight(l, "\r")
		for _, p := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if rest, ok := strings.CutPrefix(l, p); ok {
				if f := strings.TrimSpace(rest); f != "" {
					if !filepath.IsAbs(f) && !strings.HasPrefix(f, "/") && cwd != "" {
						f = filepath.Join(cwd, f)
					}
					if !slices.Contains(out, f) {
						out = append(out, f)
					}
				}
			}
		}
	}
	return out
}

// callFiles returns the files a tool call changes or reads, as far as its
// input says: apply_patch bodies (as custom tool input, as a function
// argument or inside a shell command) and path arguments.
func callFiles(name string, input json.RawMessage, cwd string) []string {
	if len(input) == 0 {
		return nil
	}
	if input[0] == '"' {
		var s string
		if json.Unmarshal(input, &s) == nil {
			return patchFiles(s, cwd)
		}
		return nil
	}
	if input[0] != '{' {
		return nil
	}
	var args struct {
		Input    string          `json:"input"`
		Patch    string          `json:"patch"`
		Command  json.RawMessage `json:"command"`
		Cmd      string          `json:"cmd"`
		Path     string          `json:"path"`
		FilePath string          `json:"file_path"`
	}
	if json.Unmarshal(input, &args) != nil {
		return nil
	}
	var out []string
	for _, s := range []string{args.Input, args.Patch, args.Cmd} {
		out = append(out, patchFiles(s, cwd)...)
	}
	var argv []string
	if json.Unmarshal(args.Command, &argv) == nil {
		for _, a := range argv {
			out = append(out, patchFiles(a, cwd)...)
		}
	} else {
		var s string
		if json.Unmarshal(args.Command, &s) == nil {
			out = append(out, patchFiles(s, cwd)...)
		}
	}
	for _, f := range []string{args.FilePath, args.Path} {
		if f != "" && (strings.Contains(name, "file") || strings.Contains(name, "read") || strings.Contains(name, "write") || strings.Contains(name, "edit")) {
			if !filepath.IsAbs(f) && !strings.HasPrefix(f, "/") && cwd != "" {
				f = filepath.Join(cwd, f)
			}
			out = append(out, f)
		}
	}
	var uniq []string
	for _, f := range out {
		if !slices.Contains(uniq, f) {
			uniq = append(uniq, f)
		}
	}
	return uniq
}

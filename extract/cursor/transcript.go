package cursor

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/internal/anthropic"
	"github.com/pos-lake/pos/schema"
)

// Agent transcripts (~/.cursor/projects/<slug>/agent-transcripts/):
//
//	<uuid>/<uuid>.jsonl                 one JSON object per line
//	<uuid>/subagents/<agent>.jsonl      a subagent of conversation <uuid>
//	<uuid>.txt                          legacy plain text
//
// A .jsonl line is {"role":"user"|"assistant","message":{"content":…}}
// with content a string or Claude-style blocks (text, tool_use,
// tool_result, thinking), or a {"type":"turn_ended","status":…} marker.
// Lines carry no id and no time. The .txt format is "user:" and "A:" (or
// "assistant:") blocks; a user block wraps the prompt in <user_query>, an
// assistant block marks [Thinking], [Tool call] Name (with indented
// "arg: value" lines) and [Tool result] Name.

// trIdentity is what a transcript's path says: its conversation, its
// subagent, and its project's slug.
type trIdentity struct {
	session, agent, slug string
}

func transcriptIdentity(path string) trIdentity {
	parts := strings.Split(filepath.ToSlash(path), "/")
	base := parts[len(parts)-1]
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	at := -1
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] == "agent-transcripts" {
			at = i
			break
		}
	}
	id := trIdentity{session: stem}
	if at < 0 {
		// A transcript given as a root, outside its tree.
		if n := len(parts); n >= 3 && parts[n-2] == "subagents" {
			id.session, id.agent = parts[n-3], stem
		}
		return id
	}
	if at > 0 && parts[at-1] != "projects" {
		id.slug = parts[at-1]
	}
	rest := parts[at+1:]
	switch {
	case len(rest) == 2:
		id.session = rest[0]
	case len(rest) == 3 && rest[1] == "subagents":
		id.session, id.agent = rest[0], stem
	}
	return id
}

// trRun reads one transcript.
type trRun struct {
	*run
	emit    extract.Emit
	path    string
	mtime   time.Time
	id      trIdentity
	project string
	dup     bool // a database holds this conversation: raw records only
	prevID  string
	n       int
}

func (r *run) transcript(ctx context.Context, sf extract.SourceFile, src *extract.Source, emit extract.Emit) error {
	id := transcriptIdentity(sf.Path)
	tr := &trRun{run: r, emit: emit, path: sf.Path, mtime: src.FP.Mtime, id: id,
		project: r.idx.slugs[strings.ToLower(id.slug)]}
	tr.dup = r.idx.bodied[cmp.Or(id.agent, id.session)]
	if strings.HasSuffix(sf.Path, ".txt") {
		return tr.text(ctx, src)
	}
	return tr.jsonl(ctx, src)
}

func (tr *trRun) newRec(kind schema.Kind, line, offset int64) *schema.Record {
	rec := schema.New(kind)
	rec.Platform = platform
	rec.SessionID = tr.id.session
	rec.Source = &schema.Source{Path: tr.path, Line: line, Offset: offset, Mtime: tr.mtime}
	rec.Project = tr.project
	rec.TS, rec.TSPrecision = tr.mtime, schema.PrecisionFileMtime
	rec.Completeness = schema.CompleteFull
	tr.opt.Stamp(rec, platform, AdapterVersion)
	return rec
}

// emitLine emits a line's record: a message as its raw record followed by
// the message; raw records only for a conversation a database holds.
func (tr *trRun) emitLine(rec *schema.Record) error {
	if rec.Kind == schema.KindMessage {
		if tr.dup {
			rec.Kind, rec.ID, rec.ParentID = schema.KindRaw, "", ""
			rec.Role, rec.ContentType, rec.Text, rec.Thinking, rec.Tools, rec.Files, rec.Agent = "", "", "", "", nil, nil, nil
		} else {
			tr.prevID = rec.ID
			tr.n++
			raw := schema.SplitRaw(rec)
			rec.Raw = nil
			if err := emitOut(tr.opt, tr.emit, raw); err != nil {
				return err
			}
			return emitOut(tr.opt, tr.emit, rec)
		}
	}
	rec.Agent = nil
	rec.ID = schema.RawID(rec)
	return emitOut(tr.opt, tr.emit, rec)
}

func (tr *trRun) msgID(line int64) string {
	return schema.ID(platform, tr.id.session, tr.id.agent, "line", strconv.FormatInt(line, 10))
}

func (tr *trRun) agent() *schema.Agent {
	if tr.id.agent == "" {
		return nil
	}
	return &schema.Agent{ID: tr.id.agent, Type: "subagent", Sidechain: true}
}

// trLine is a .jsonl line.
type trLine struct {
	Role    string `json:"role"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	Message *struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Model   string          `json:"model"`
	} `json:"message"`
	Content   json.RawMessage `json:"content"`
	Timestamp flexTime        `json:"timestamp"`
	CreatedAt flexTime        `json:"createdAt"`
	Model     string          `json:"model"`
}

// trBlock is a content block, as the Messages API has it.
type trBlock = anthropic.Block

// jsonl reads a .jsonl transcript from its watermark. It resumes at the
// last prompt, so the open exchange is read whole again next time.
func (tr *trRun) jsonl(ctx context.Context, src *extract.Source) error {
	plan := src.Plan
	if c := plan.Context; c != nil {
		tr.prevID = c["prev_id"]
	}
	lr, err := src.LineReader(nil, schema.NewLineReaderAt, plan.Start, plan.Lines)
	if err != nil {
		return err
	}
	resume, resumeLines, resumePrev := plan.Start, plan.Lines, tr.prevID
	var l trLine
	line := func(raw []byte, ln extract.Line, parsed bool) error {
		rec, prompt := tr.jsonLine(&l, parsed, raw, ln)
		if prompt {
			resume, resumeLines, resumePrev = ln.Offset, ln.Num-1, tr.prevID
		}
		return tr.emitLine(rec)
	}
	read, err := tr.opt.ReadLines(ctx, lr, tr.path, false, extract.LineFuncs{
		Parse: func(raw []byte) error {
			l = trLine{}
			return decode(raw, &l)
		},
		Line:    func(raw []byte, ln extract.Line) error { return line(raw, ln, true) },
		RawOnly: func(raw []byte, ln extract.Line) error { return line(raw, ln, false) },
	})
	if err != nil {
		return err
	}
	consumed, consumedLines := read.Consumed, read.Lines
	if resume > consumed {
		resume, resumeLines, resumePrev = consumed, consumedLines, tr.prevID
	}
	if plan.Start == 0 || tr.n > 0 {
		if err := tr.session(layoutJSONL); err != nil {
			return err
		}
	}
	return tr.checkpoint(src, consumed, resume, resumeLines, map[string]string{"prev_id": resumePrev})
}

// jsonLine makes the record of one .jsonl line (l, its line decoded, when
// parsed), and says whether it is a prompt. A line of another shape is kept
// raw.
func (tr *trRun) jsonLine(l *trLine, parsed bool, b []byte, ln extract.Line) (*schema.Record, bool) {
	rec := tr.newRec(schema.KindRaw, ln.Num, ln.Offset)
	rec.Source.Altered = ln.Altered()
	rec.Raw = compactJSON(b)
	if !parsed {
		return rec, false
	}
	if t, ok := l.Timestamp.Time(); ok {
		rec.TS, rec.TSPrecision = t, schema.PrecisionExact
	} else if t, ok := l.CreatedAt.Time(); ok {
		rec.TS, rec.TSPrecision = t, schema.PrecisionExact
	}
	role := l.Role
	var content json.RawMessage
	if l.Message != nil {
		role = cmp.Or(role, l.Message.Role)
		content = l.Message.Content
		l.Model = cmp.Or(l.Message.Model, l.Model)
	}
	if len(content) == 0 {
		content = l.Content
	}
	rec.NativeType = cmp.Or(l.Type, role)
	if l.Type != "" && l.Status != "" {
		rec.NativeType = l.Type + "/" + l.Status
	}
	if role != "user" && role != "assistant" && role != "system" && role != "tool" {
		return rec, false // turn_ended markers and future line types
	}
	rec.Kind, rec.ID = schema.KindMessage, tr.msgID(ln.Num)
	rec.ParentID = tr.prevID
	rec.NativeID = strconv.FormatInt(ln.Num, 10)
	rec.Agent = tr.agent()
	var text, thinking []string
	var blocks []trBlock
	if s := jsonString(content); len(bytes.TrimSpace(content)) > 0 && bytes.TrimSpace(content)[0] == '"' {
		text = append(text, s)
	} else if json.Unmarshal(content, &blocks) != nil {
		blocks = nil
		var one trBlock // a single block, not in an array
		if decode(content, &one) == nil && one.Type != "" {
			blocks = []trBlock{one}
		}
	}
	for _, bl := range blocks {
		switch bl.Type {
		case "text", "input_text", "output_text":
			text = append(text, bl.Text)
		case "thinking", "reasoning", "redacted_thinking":
			thinking = append(thinking, cmp.Or(bl.Thinking, bl.Text))
		case "tool_use", "tool_call":
			in := jsonValue(bl.Input)
			rec.Tools = append(rec.Tools, schema.Tool{Name: bl.Name, CallID: bl.ID, Input: in})
			for _, f := range toolFiles(bl.Name, in) {
				if f = resolve(tr.project, f); !slices.Contains(rec.Files, f) {
					rec.Files = append(rec.Files, f)
				}
			}
		case "tool_result":
			rec.Tools = append(rec.Tools, schema.Tool{CallID: bl.ToolUseID, Output: validUTF8(resultText(bl.Content)), IsError: bl.IsError})
		case "image":
			text = append(text, "[image]")
		}
	}
	rec.Text = validUTF8(strings.Join(text, "\n"))
	rec.Thinking = validUTF8(strings.Join(thinking, "\n"))
	prompt := false
	switch role {
	case "user":
		rec.Role, rec.ContentType = schema.RoleUser, schema.ContentText
		if q, ok := userQuery(rec.Text); ok {
			rec.Text = q
		}
		if len(rec.Tools) > 0 && strings.TrimSpace(rec.Text) == "" {
			rec.Role, rec.ContentType = schema.RoleTool, schema.ContentToolResult
		} else {
			prompt = tr.id.agent == ""
		}
	case "assistant":
		rec.Role = schema.RoleAssistant
		rec.Model = l.Model
		rec.ContentType = schema.AssistantContentType(rec.Text, rec.Thinking, len(rec.Tools))
	case "tool":
		rec.Role, rec.ContentType = schema.RoleTool, schema.ContentToolResult
	default:
		rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentMeta
	}
	return rec, prompt
}

// resultText is a tool_result's content: a string or text blocks.
func resultText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		return jsonString(raw)
	}
	var blocks []trBlock
	if json.Unmarshal(raw, &blocks) == nil {
		var out []string
		for _, b := range blocks {
			if b.Type == "text" {
				out = append(out, b.Text)
			}
		}
		return strings.Join(out, "\n")
	}
	return jsonString(raw)
}

var userQueryRE = regexp.MustCompile(`(?s)<user_query>(.*?)(?:</user_query>|$)`)

// userQuery extracts what the user typed from a prompt Cursor wrapped with
// context (<user_info>, <attached_files> …) and <user_query> tags.
func userQuery(s string) (string, bool) {
	m := userQueryRE.FindAllStringSubmatch(s, -1)
	if len(m) == 0 {
		return "", false
	}
	var out []string
	for _, x := range m {
		if t := strings.TrimSpace(x[1]); t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n"), true
}

// session emits a main transcript's session record: its project and
// layout (pos-normalize counts the messages).
func (tr *trRun) session(layout string) error {
	if tr.id.agent != "" || tr.dup {
		return nil
	}
	s := tr.newRec(schema.KindSession, 0, 0)
	s.Source.Line = 0
	s.ID = schema.SessionRecordID(platform, tr.id.session)
	s.Session = &schema.Session{}
	m := sessionMeta{Layout: layout, ProjectSlug: tr.id.slug}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	s.Meta = b
	return emitOut(tr.opt, tr.emit, s)
}

func (tr *trRun) checkpoint(src *extract.Source, consumed, resume, resumeLines int64, ctx map[string]string) error {
	if tr.opt.State == nil {
		return nil
	}
	cp, err := extract.Checkpoint(platform, src.File, tr.path, src.FP, consumed, resume, resumeLines, ctx)
	if err != nil {
		return err
	}
	return emitOut(tr.opt, tr.emit, cp)
}

// The legacy .txt format.
var (
	markerRE     = regexp.MustCompile(`^(user|assistant|A):(?:\s|$)`)
	toolCallRE   = regexp.MustCompile(`^\s*\[Tool call\]\s*(.*?)\s*$`)
	toolResultRE = regexp.MustCompile(`^\s*\[Tool result\]\s*(.*?)\s*$`)
	thinkingRE   = regexp.MustCompile(`^\s*\[Thinking\]\s?(.*)$`)
	toolArgRE    = regexp.MustCompile(`^\s+([A-Za-z_][A-Za-z0-9_]*):\s?(.*)$`)
)

// textBlock is a user: or assistant: block of a .txt transcript.
type textBlock struct {
	role         string // "user", "assistant" or "" (text before the first marker)
	line, offset int64
	lines        []string
}

// text reads a legacy .txt transcript whole (it is rewritten, not
// appended to), one raw record and message per block.
func (tr *trRun) text(ctx context.Context, src *extract.Source) error {
	var cur *textBlock
	markers := 0
	flush := func() error {
		if cur == nil {
			return nil
		}
		b := cur
		cur = nil
		return tr.textBlock(b)
	}
	read, err := tr.opt.ReadText(ctx, schema.NewLineReader(src.File), tr.path, func(ln schema.Line) error {
		s := validUTF8(strings.TrimRight(string(ln.Bytes), "\r"))
		if m := markerRE.FindStringSubmatch(s); m != nil {
			if err := flush(); err != nil {
				return err
			}
			markers++
			role := "assistant"
			if m[1] == "user" {
				role = "user"
			}
			cur = &textBlock{role: role, line: ln.Num, offset: ln.Offset}
			if rest := strings.TrimSpace(s[len(m[0]):]); rest != "" {
				cur.lines = append(cur.lines, rest)
			}
			return nil
		}
		if cur == nil {
			if strings.TrimSpace(s) == "" {
				return nil
			}
			cur = &textBlock{line: ln.Num, offset: ln.Offset}
		}
		cur.lines = append(cur.lines, s)
		return nil
	})
	if err != nil {
		return err
	}
	if markers == 0 {
		return tr.opt.Skip(&schema.BadInput{Path: tr.path, Err: errors.New("not a Cursor agent transcript: no user: or assistant: block")})
	}
	if err := flush(); err != nil {
		return err
	}
	if err := tr.session(layoutText); err != nil {
		return err
	}
	return tr.checkpoint(src, read.Consumed, 0, 0, nil)
}

// textBlock emits one block of a .txt transcript.
func (tr *trRun) textBlock(b *textBlock) error {
	if tr.opt.Stats != nil {
		tr.opt.Stats.Lines.Add(1)
	}
	body := strings.Trim(strings.Join(b.lines, "\n"), "\n")
	raw, _ := json.Marshal(struct {
		Role string `json:"role,omitempty"`
		Text string `json:"text"`
	}{b.role, body})
	rec := tr.newRec(schema.KindRaw, b.line, b.offset)
	rec.Raw = raw
	rec.NativeType = cmp.Or(b.role, "preamble")
	if b.role == "" {
		return tr.emitLine(rec)
	}
	rec.Kind, rec.ID = schema.KindMessage, tr.msgID(b.line)
	rec.ParentID = tr.prevID
	rec.NativeID = strconv.FormatInt(b.line, 10)
	rec.Agent = tr.agent()
	if b.role == "user" {
		rec.Role, rec.ContentType = schema.RoleUser, schema.ContentText
		rec.Text = strings.TrimSpace(body)
		if q, ok := userQuery(body); ok {
			rec.Text = q
		}
		return tr.emitLine(rec)
	}
	rec.Role = schema.RoleAssistant
	var text, thinking []string
	var tool *schema.Tool
	var args map[string]string
	inResult := false
	endTool := func() {
		if tool != nil && args != nil {
			tool.Input, _ = json.Marshal(args) // keys sorted: canonical
		}
		args = nil
	}
	for _, l := range b.lines {
		switch {
		case toolCallRE.MatchString(l):
			endTool()
			inResult = false
			rec.Tools = append(rec.Tools, schema.Tool{Name: toolCallRE.FindStringSubmatch(l)[1]})
			tool = &rec.Tools[len(rec.Tools)-1]
			args = map[string]string{}
		case toolResultRE.MatchString(l):
			endTool()
			inResult = true
			name := toolResultRE.FindStringSubmatch(l)[1]
			tool = nil
			for i := len(rec.Tools) - 1; i >= 0; i-- {
				if rec.Tools[i].Name == name || name == "" {
					tool = &rec.Tools[i]
					break
				}
			}
		case thinkingRE.MatchString(l):
			endTool()
			inResult = false
			thinking = append(thinking, thinkingRE.FindStringSubmatch(l)[1])
		case args != nil && toolArgRE.MatchString(l):
			m := toolArgRE.FindStringSubmatch(l)
			args[m[1]] = m[2]
		case inResult && tool != nil:
			tool.Output = strings.TrimLeft(tool.Output+"\n"+l, "\n")
		default:
			endTool()
			inResult = false
			text = append(text, l)
		}
	}
	endTool()
	for i := range rec.Tools {
		t := &rec.Tools[i]
		t.Output = strings.TrimRight(t.Output, "\n\r\t ")
		for _, f := range toolFiles(t.Name, t.Input) {
			if f = resolve(tr.project, f); !slices.Contains(rec.Files, f) {
				rec.Files = append(rec.Files, f)
			}
		}
	}
	rec.Text = strings.TrimSpace(strings.Join(text, "\n"))
	rec.Thinking = strings.TrimSpace(strings.Join(thinking, "\n"))
	rec.ContentType = schema.AssistantContentType(rec.Text, rec.Thinking, len(rec.Tools))
	return tr.emitLine(rec)
}

package claudecode

import (
	"bytes"
	"cmp"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
)

// msgID is the record id of the line with the given uuid. Claude Code uuids
// are global, so a line replayed into a resumed session gets the same id and
// is stored once.
func msgID(uuid string) string {
	if uuid == "" {
		return ""
	}
	return schema.ID(platform, uuid)
}

func parseTS(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || !schema.TimeInRange(t) {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// line turns one parsed line into a record and queues it.
func (r *run) line(fs *fileState, l *line, b []byte, eln extract.Line) error {
	ln := eln.Line
	rec := schema.New(schema.KindRaw)
	rec.Platform = platform
	rec.NativeType = l.Type
	rec.NativeID = l.UUID
	rec.Source = &schema.Source{Path: fs.path, Line: ln.Num, Offset: ln.Offset, Mtime: fs.mtime, Replay: ln.Offset < fs.replayBelow,
		Altered: eln.Altered()}
	rec.Completeness = schema.CompleteFull
	rec.Raw = b // the caller's copy of the line
	r.opt.Stamp(rec, platform, AdapterVersion)

	if l.SessionID != "" && fs.session == "" {
		fs.session = l.SessionID
	}
	rec.SessionID = l.SessionID
	if l.Cwd != "" && fs.project == "" {
		fs.project = l.Cwd
	}
	if l.Slug != "" && fs.slug == "" {
		fs.slug = l.Slug
	}
	rec.Cwd, rec.GitBranch = l.Cwd, l.GitBranch
	if l.Cwd != "" {
		fs.info.cwd = l.Cwd
	}
	if l.GitBranch != "" {
		fs.info.branch = l.GitBranch
	}
	if l.Version != "" {
		fs.info.version = l.Version
	}
	ts, ok := parseTS(l.Timestamp)
	if !ok && l.Snapshot != nil {
		ts, ok = parseTS(l.Snapshot.Timestamp)
	}
	if ok {
		rec.TS, rec.TSPrecision = ts, schema.PrecisionExact
	}

	// The (sub)agent thread.
	if l.AgentID != "" || fs.agentID != "" || l.IsSidechain {
		a := &schema.Agent{ID: cmp.Or(l.AgentID, fs.agentID), Type: fs.agentTy, Sidechain: l.IsSidechain}
		if a.ID == "" && l.IsSidechain && l.UUID != "" {
			// v1.0 inline sidechain: the thread is named by its root line.
			root, ok := fs.sideRoot[l.ParentUUID]
			if !ok {
				root = l.UUID
			}
			fs.sideRoot[l.UUID] = root
			a.ID = "side-" + root
		}
		rec.Agent = a
	}

	if main := !l.IsSidechain && l.AgentID == "" && fs.agentID == ""; main && (len(fs.queued) > 0 || len(fs.absorbed) > 0) {
		if text := queueCarrier(l); text != "" {
			fs.carried(text)
		}
		if l.Type == "assistant" && len(fs.absorbed) > 0 {
			if err := r.absorbedMessages(fs); err != nil {
				return err
			}
		}
	}
	switch l.Type {
	case "user":
		if l.Message != nil {
			if err := r.userLine(fs, rec, l, ln); err != nil {
				return err
			}
		}
	case "assistant":
		if l.Message != nil {
			r.assistantLine(rec, l)
			fs.notePlans(rec.Files)
		}
	case "system":
		rec.NativeType = "system/" + l.Subtype
		switch l.Subtype {
		case "compact_boundary":
			rec.Kind, rec.ID = schema.KindMessage, msgID(l.UUID)
			rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentCompactBoundary
			rec.Text = stringContent(l.Content)
			rec.ParentID = msgID(cmp.Or(l.LogicalParentUUID, l.ParentUUID))
			if len(l.CompactMetadata) > 0 {
				rec.Meta = compact(l.CompactMetadata)
			}
		case "local_command":
			rec.Kind, rec.ID = schema.KindMessage, msgID(l.UUID)
			rec.Role = schema.RoleSystem
			text := stringContent(l.Content)
			if strings.Contains(text, "<command-name>") {
				rec.ContentType, rec.Text = schema.ContentCommand, commandText(text)
			} else {
				rec.ContentType, rec.Text = schema.ContentCommandOutput, stripTags(text)
			}
			rec.ParentID = msgID(l.ParentUUID)
		}
	case "summary":
		rec.Kind = schema.KindMessage
		rec.ID = schema.ID(platform, "summary", l.LeafUUID, l.Summary)
		rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentSummaryLabel
		rec.Text = l.Summary
		rec.ParentID = msgID(l.LeafUUID)
	case "progress":
		if l.Data != nil && l.Data.Type != "" {
			rec.NativeType = "progress/" + l.Data.Type
		}
		if l.Data != nil && l.Data.AgentID != "" && l.ParentToolUseID != "" {
			if t, ok := r.taskTypes[l.ParentToolUseID]; ok {
				r.agentTypes[cmp.Or(l.SessionID, fs.session)+"/"+l.Data.AgentID] = t
			}
		}
		if l.Data != nil && l.Data.Type == "agent_progress" && l.Data.AgentID != "" && len(l.Data.Message) > 0 {
			r.progressCopy(fs, rec, l)
		}
	case "queue-operation":
		if l.Operation != "" {
			rec.NativeType = "queue-operation/" + l.Operation
		}
		if fs.agentID == "" {
			r.queueLine(fs, l, rec)
		}
	case "custom-title", "agent-name":
		if t := strings.TrimSpace(cmp.Or(l.CustomTitle, l.AgentName)); t != "" {
			fs.userTitle = strings.Clone(t)
		}
	case "ai-title":
		if t := strings.TrimSpace(cmp.Or(l.AITitle, l.Title)); t != "" {
			fs.aiTitle = strings.Clone(t)
		}
	case "attachment":
		if l.Attachment != nil && l.Attachment.Type != "" {
			rec.NativeType = "attachment/" + l.Attachment.Type
		}
		if text, human, ok := queuedPrompt(l); ok {
			r.queuedLine(fs, rec, l, ln, text, human)
		}
	case "pr-link":
		u := strings.TrimSpace(l.PRURL)
		if u == "" && l.PRRepository != "" && l.PRNumber > 0 {
			u = "https://github.com/" + l.PRRepository + "/pull/" + strconv.FormatInt(l.PRNumber, 10)
		}
		if u != "" && !slices.Contains(fs.prs, u) {
			fs.prs = append(fs.prs, strings.Clone(u))
		}
	}
	if rec.Kind == schema.KindRaw {
		rec.Agent = nil // the id is set once the session is known (flush)
	} else if rec.Agent == nil && l.UUID != "" {
		fs.lastMain = rec.ID
	}
	return r.queue(fs, rec)
}

func (r *run) userLine(fs *fileState, rec *schema.Record, l *line, ln schema.Line) error {
	c, err := parseContent(l.Message.Content)
	if err != nil {
		// The line is valid JSON but its content is not what Claude Code
		// writes: keep it as a raw record and say so.
		return r.opt.Skip(&schema.BadInput{Path: fs.path, Line: ln.Num, Err: err})
	}
	rec.Kind, rec.ID = schema.KindMessage, msgID(l.UUID)
	rec.ParentID = msgID(l.ParentUUID)
	rec.Role, rec.ContentType = schema.RoleUser, schema.ContentText
	rec.Text, rec.Tools = userParts(c)
	switch {
	case len(rec.Tools) > 0:
		rec.Role, rec.ContentType = schema.RoleTool, schema.ContentToolResult
	case l.IsCompactSummary:
		rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentCompactSummary
		rec.ParentID = msgID(cmp.Or(l.LogicalParentUUID, l.ParentUUID))
	case l.IsMeta:
		rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentMeta
	default:
		rec.Role, rec.ContentType, rec.Text = classifyUserText(rec.Text)
	}
	opened(fs, rec, ln)
	return nil
}

// opened notes what a user message tells of the file: a real prompt of
// the main thread opens an exchange, where the next run resumes.
func opened(fs *fileState, rec *schema.Record, ln schema.Line) {
	if rec.Agent != nil && rec.Agent.Sidechain {
		return
	}
	fs.sawMain = true
	if rec.Role == schema.RoleUser && (rec.ContentType == schema.ContentText || rec.ContentType == schema.ContentCommand) {
		fs.resume, fs.resumeLines = ln.Offset, ln.Num-1
	}
}

// queuedLine makes a message of a prompt queued while Claude Code was
// working (an attachment line of type queued_command): the only place the
// words a person typed mid-turn are written. A notification the harness
// queued is text Claude Code wrote itself (role system, meta).
func (r *run) queuedLine(fs *fileState, rec *schema.Record, l *line, ln schema.Line, text string, human bool) {
	rec.Kind, rec.ID = schema.KindMessage, msgID(l.UUID)
	if rec.ID == "" {
		rec.ID = schema.ID(platform, "queued", cmp.Or(l.SessionID, fs.session), l.Timestamp, text)
	}
	rec.ParentID = msgID(l.ParentUUID)
	rec.Role, rec.ContentType, rec.Text = classifyUserText(text)
	if !human && rec.Role == schema.RoleUser {
		rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentMeta
	}
	opened(fs, rec, ln)
}

// userParts is a user line's text (images and documents as placeholders)
// and its tool results.
func userParts(c content) (string, []schema.Tool) {
	var text []string
	var results []schema.Tool
	if c.isStr {
		text = append(text, c.str)
	}
	for _, b := range c.blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "image":
			text = append(text, "[image]")
		case "document":
			text = append(text, "[document]")
		case "tool_result":
			results = append(results, schema.Tool{CallID: b.ToolUseID, Output: resultText(b.Content), IsError: b.IsError})
		}
	}
	return strings.Join(text, "\n"), results
}

// classifyUserText tells a prompt the user typed from text Claude Code
// wrote into a user line itself.
func classifyUserText(t string) (schema.Role, schema.ContentType, string) {
	s := strings.TrimSpace(t)
	switch {
	case strings.HasPrefix(s, "<command-name>"), strings.HasPrefix(s, "<command-message>"):
		return schema.RoleUser, schema.ContentCommand, commandText(s)
	case strings.HasPrefix(s, "<local-command-stdout>"), strings.HasPrefix(s, "<local-command-stderr>"):
		return schema.RoleSystem, schema.ContentCommandOutput, stripTags(s)
	case strings.HasPrefix(s, "<local-command-caveat>"), strings.HasPrefix(s, "<system-reminder>"),
		strings.HasPrefix(s, "<task-notification>"), strings.HasPrefix(s, "<user-prompt-submit-hook>"):
		return schema.RoleSystem, schema.ContentMeta, t
	case strings.HasPrefix(s, "[Request interrupted by user"):
		return schema.RoleUser, schema.ContentInterrupt, t
	}
	return schema.RoleUser, schema.ContentText, t
}

// commandText renders "<command-name>/x</command-name>…<command-args>a</command-args>"
// as "/x a".
func commandText(s string) string {
	name := between(s, "<command-name>", "</command-name>")
	if name == "" {
		name = "/" + between(s, "<command-message>", "</command-message>")
	}
	if args := strings.TrimSpace(between(s, "<command-args>", "</command-args>")); args != "" {
		return name + " " + args
	}
	return name
}

func between(s, open, close string) string {
	i := strings.Index(s, open)
	if i < 0 {
		return ""
	}
	s = s[i+len(open):]
	if j := strings.Index(s, close); j >= 0 {
		return strings.TrimSpace(s[:j])
	}
	return ""
}

// stripTags removes the <local-command-…> wrapper tags.
func stripTags(s string) string {
	for _, t := range []string{"<local-command-stdout>", "</local-command-stdout>", "<local-command-stderr>", "</local-command-stderr>"} {
		s = strings.ReplaceAll(s, t, "")
	}
	return strings.TrimSpace(s)
}

// progressCopy makes a message of a subagent's assistant line that
// Claude Code copied into the parent session's agent_progress line, when
// the subagent has no transcript of its own (a session copied or exported
// without its subagents folder): the copy is then the only record of the
// tokens the subagent used. A subagent with a transcript is read from it,
// and its copies are passed over. The message keeps the copied line's
// uuid, so that a transcript that shows up later gives the same ids.
func (r *run) progressCopy(fs *fileState, rec *schema.Record, l *line) {
	agent := l.Data.AgentID
	if r.hasTranscript(fs, agent) {
		return
	}
	var in line
	if parseLine(l.Data.Message, &in) != nil || in.Type != "assistant" || in.UUID == "" ||
		in.Message == nil || in.Message.Usage == nil {
		return
	}
	if ts, ok := parseTS(in.Timestamp); ok {
		rec.TS, rec.TSPrecision = ts, schema.PrecisionExact
	}
	r.assistantLine(rec, &in)
	session := cmp.Or(l.SessionID, fs.session)
	rec.Agent = &schema.Agent{ID: agent, Type: r.agentTypes[session+"/"+agent], Sidechain: true}
}

// hasTranscript reports whether the subagent has a transcript beside the
// session file being read: <session>/subagents/agent-<id>.jsonl (Claude
// Code 2.1) or agent-<id>.jsonl in the project folder (2.0).
func (r *run) hasTranscript(fs *fileState, agent string) bool {
	if ok, seen := fs.transcripts[agent]; seen {
		return ok
	}
	dir, name := filepath.Dir(fs.path), "agent-"+agent+".jsonl"
	ok := false
	for _, p := range []string{
		filepath.Join(dir, strings.TrimSuffix(filepath.Base(fs.path), ".jsonl"), "subagents", name),
		filepath.Join(dir, name),
	} {
		if r.opt.IsFile(p) {
			ok = true
			break
		}
	}
	if fs.transcripts == nil {
		fs.transcripts = map[string]bool{}
	}
	fs.transcripts[agent] = ok
	return ok
}

// fastSuffix marks a message made in fast mode (usage.speed "fast"): its
// model is written <model>-fast, which pricing.Normalize keeps.
const fastSuffix = "-fast"

func (r *run) assistantLine(rec *schema.Record, l *line) {
	m := l.Message
	rec.Kind, rec.ID = schema.KindMessage, msgID(l.UUID)
	rec.ParentID = msgID(l.ParentUUID)
	rec.Role = schema.RoleAssistant
	rec.Model = m.Model
	rec.RequestID = l.RequestID
	rec.NativeID = l.UUID
	if m.ID != "" {
		// The API message id groups the lines of one assistant message
		// (pos-normalize merges them); the line's own uuid is in the raw.
		rec.NativeID = m.ID
	}
	if u := m.Usage; u != nil {
		n := u.usage()
		rec.Usage = &n
		if u.Speed == "fast" && rec.Model != "" {
			// Fast mode is billed at its own rates (6x on Opus 4.6): its
			// messages are their model's "-fast" variant, as ccusage names
			// them, so stats price and list the two speeds apart.
			rec.Model += fastSuffix
		}
		for _, it := range u.Iterations {
			// The advisor's calls are billed at its model's rates, outside
			// the request's top-level usage (the executor's).
			if it.Type != "advisor_message" || it.Model == "" {
				continue
			}
			rec.Advisor = append(rec.Advisor, schema.ModelUsage{Model: it.Model, Usage: it.usage()})
		}
	}
	c, _ := parseContent(m.Content)
	var text, thinking []string
	if c.isStr {
		text = append(text, c.str)
	}
	for _, b := range c.blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "thinking":
			thinking = append(thinking, b.Thinking)
		case "tool_use", "server_tool_use":
			rec.Tools = append(rec.Tools, schema.Tool{Name: b.Name, CallID: b.ID, Input: compact(b.Input)})
			rec.Files = append(rec.Files, toolFiles(b.Name, b.Input)...)
			if b.Name == "Task" || b.Name == "Agent" {
				if t := stringMember(b.Input, "subagent_type"); t != "" {
					r.taskTypes[b.ID] = t
				}
			}
		}
	}
	rec.Text = strings.Join(text, "\n")
	rec.Thinking = strings.Join(thinking, "\n")
	rec.ContentType = schema.AssistantContentType(rec.Text, rec.Thinking, len(rec.Tools))
	if l.IsAPIError {
		rec.ContentType = schema.ContentError
	}
}

func stringContent(raw rawJSON) string {
	c, err := parseContent(raw)
	if err != nil || !c.isStr {
		return ""
	}
	return c.str
}

// compact returns v on one line (JSON inside a record must not break
// NDJSON): v itself when it is, else a compacted copy.
func compact(v rawJSON) json.RawMessage {
	if len(v) == 0 {
		return nil
	}
	if bytes.IndexByte(v, '\n') < 0 && bytes.IndexByte(v, '\r') < 0 {
		return json.RawMessage(v)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return bytes.Clone(v)
	}
	return buf.Bytes()
}

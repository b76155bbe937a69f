package push

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"

	"github.com/pos-lake/pos/schema"
)

// contentTypes are the content types a message event may name.
var contentTypes = map[string]bool{
	schema.ContentText: true, schema.ContentToolUse: true, schema.ContentToolResult: true,
	schema.ContentThinking: true, schema.ContentCommand: true, schema.ContentCommandOutput: true,
	schema.ContentInterrupt: true, schema.ContentMeta: true, schema.ContentSummaryLabel: true,
	schema.ContentCompactBoundary: true, schema.ContentCompactSummary: true, schema.ContentPlan: true,
	schema.ContentError: true,
}

// messages makes the messages of a known event and notes what it says
// about its session.
func (r *run) messages(fs *fileState, e *event, session string, raw *schema.Record, ln schema.Line, bad string) []*schema.Record {
	info := fs.session(session)
	info.seen = true
	if raw.TS.After(info.lastTS) {
		info.lastTS = raw.TS
	}
	if e.Agent != "" {
		info.Agent = e.Agent
	}
	info.Project = cmp.Or(e.Project, info.Project)
	info.Cwd = cmp.Or(e.Cwd, info.Cwd)
	info.Branch = cmp.Or(e.Branch, info.Branch)

	nid := e.ID
	if nid == "" {
		// No id: the line's place and content name it.
		nid = "line:" + fs.base + ":" + strconv.FormatInt(ln.Offset, 10) + ":" + schema.ContentHash(raw.Raw)
	}
	msg := func(part string, role schema.Role) *schema.Record {
		m := schema.New(schema.KindMessage)
		m.ID = schema.ID(platform, session, nid, part)
		m.Platform, m.SessionID = platform, session
		m.TS, m.TSPrecision = raw.TS, raw.TSPrecision
		m.Role = role
		m.NativeType, m.NativeID = e.Type, e.ID
		m.Cwd, m.Project, m.GitBranch = e.Cwd, e.Project, e.Branch
		if e.Subagent != nil && e.Subagent.ID != "" {
			m.Agent = &schema.Agent{ID: e.Subagent.ID, Type: e.Subagent.Type, Sidechain: true}
		}
		m.User, m.Machine = r.opt.User, r.opt.Machine
		m.Completeness = schema.CompleteFull
		m.Source, m.Adapter, m.IngestedAt = raw.Source, raw.Adapter, raw.IngestedAt
		return m
	}
	prompt := func() {
		if e.Subagent == nil || e.Subagent.ID == "" {
			fs.prompts[session] = promptAt{ln.Offset, ln.Num - 1}
		}
	}
	extra := map[string]any{}
	if e.Agent != "" {
		extra["agent"] = e.Agent
	}
	if bad != "" {
		extra["ignored"] = bad // a member of the wrong type
	}
	switch e.Type {
	case "exchange":
		var out []*schema.Record
		var user *schema.Record
		if e.User != nil && *e.User != "" {
			user = msg("user", schema.RoleUser)
			user.ContentType, user.Text = schema.ContentText, *e.User
			user.Meta = meta(nil, extra)
			out = append(out, user)
			prompt()
		}
		if (e.AI != nil && *e.AI != "") || len(e.Tools) > 0 {
			ai := msg("ai", schema.RoleAssistant)
			if e.AI != nil {
				ai.Text = *e.AI
			}
			answer(ai, e, extra)
			if user != nil {
				ai.ParentID = user.ID
			}
			out = append(out, ai)
		}
		return out
	case "message":
		if e.Text == nil && len(e.Tools) == 0 {
			return nil
		}
		m := msg("message", e.Role)
		if e.Text != nil {
			m.Text = *e.Text
		}
		switch e.Role {
		case schema.RoleUser:
			m.ContentType = schema.ContentText
			m.Files = e.Files
			m.Meta = meta(e.Meta, extra)
		case schema.RoleAssistant:
			answer(m, e, extra)
		case schema.RoleSystem:
			m.ContentType = schema.ContentMeta
			m.Meta = meta(e.Meta, extra)
		case schema.RoleTool:
			m.ContentType = schema.ContentToolResult
			m.Tools = tools(e.Tools)
			m.Files = e.Files
			m.Meta = meta(e.Meta, extra)
		default:
			return nil // no role this protocol knows: raw only
		}
		if contentTypes[e.ContentType] {
			m.ContentType = e.ContentType
		}
		if m.Role == schema.RoleUser && (m.ContentType == schema.ContentText || m.ContentType == schema.ContentCommand) {
			prompt()
		}
		return []*schema.Record{m}
	case "context_reset":
		m := msg("context_reset", schema.RoleSystem)
		m.ContentType = schema.ContentCompactBoundary
		switch {
		case e.Summary != "":
			m.Text = e.Summary
		case e.Reason != "":
			m.Text = "context reset: " + e.Reason
		default:
			m.Text = "context reset"
		}
		if e.Reason != "" {
			extra["reason"] = e.Reason
		}
		m.Meta = meta(e.Meta, extra)
		return []*schema.Record{m}
	case "session_resume":
		if e.PreviousSession != "" && e.PreviousSession != session {
			info.Previous = e.PreviousSession
			extra["previous_session"] = e.PreviousSession
		}
		m := msg("session_resume", schema.RoleSystem)
		m.ContentType = schema.ContentMeta
		m.Text = "session resumed"
		if info.Previous != "" {
			m.Text += " from " + info.Previous
		}
		m.Meta = meta(e.Meta, extra)
		return []*schema.Record{m}
	case "session":
		if e.Title != "" {
			info.Title = e.Title
		}
	}
	return nil
}

// answer fills an assistant message from an event.
func answer(m *schema.Record, e *event, extra map[string]any) {
	m.Model = e.Model
	m.Thinking = e.Thinking
	m.Tools = tools(e.Tools)
	m.Files = e.Files
	if u := e.Usage; u != nil {
		m.Usage = &schema.Usage{
			Input:         first(u.Input, u.InputTokens, u.Prompt),
			Output:        first(u.Output, u.OutputTokens, u.Completion),
			CacheCreation: first(u.CacheCreation, u.CacheCreateIn),
			CacheRead:     first(u.CacheRead, u.CacheReadIn),
		}
	}
	if e.CostUSD != nil {
		extra["cost_usd"] = *e.CostUSD
	}
	m.ContentType = schema.AssistantContentType(m.Text, m.Thinking, len(m.Tools))
	m.Meta = meta(e.Meta, extra)
}

func tools(in []tool) []schema.Tool {
	var out []schema.Tool
	for _, t := range in {
		st := schema.Tool{Name: t.Name, CallID: t.CallID, IsError: t.IsError}
		if len(t.Input) > 0 && string(t.Input) != "null" {
			var buf bytes.Buffer
			if json.Compact(&buf, t.Input) == nil {
				st.Input = validUTF8(buf.Bytes())
			}
		}
		if t.Output != nil {
			st.Output = *t.Output
		}
		out = append(out, st)
	}
	return out
}

// meta is the event's "meta" object with the adapter's keys added, as one
// line of JSON with sorted keys; nil when empty.
func meta(obj json.RawMessage, extra map[string]any) json.RawMessage {
	m := map[string]any{}
	if len(obj) > 0 && obj[0] == '{' {
		var in map[string]json.RawMessage
		if json.Unmarshal(obj, &in) == nil {
			for k, v := range in {
				m[k] = v
			}
		}
	}
	for k, v := range extra {
		m[k] = v
	}
	if len(m) == 0 {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil
	}
	return validUTF8(bytes.TrimRight(buf.Bytes(), "\n"))
}

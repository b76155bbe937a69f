package codex

import (
	"cmp"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
)

// Hold limits: records waiting for their request's token count are
// released regardless beyond these.
const (
	maxPending      = 4096
	maxPendingBytes = 64 << 20
)

// itemTypes are the response item types a legacy rollout writes bare.
var itemTypes = map[string]bool{
	"message": true, "reasoning": true, "function_call": true, "function_call_output": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "local_shell_call": true,
	"web_search_call": true, "ghost_snapshot": true, "compaction": true,
}

// line turns one parsed line into records.
func (r *run) line(fs *fileState, l *line, p *payload, raw []byte, eln extract.Line) error {
	ln := eln.Line
	rec := schema.New(schema.KindRaw)
	rec.Platform = platform
	rec.Source = &schema.Source{Path: fs.path, Line: ln.Num, Offset: ln.Offset, Mtime: fs.mtime, Altered: eln.Altered()}
	rec.Completeness = schema.CompleteFull
	rec.Raw = raw
	r.opt.Stamp(rec, platform, AdapterVersion)
	ts, ok := extract.ParseTime(l.Timestamp)
	switch {
	case ok:
		rec.TS, rec.TSPrecision = ts, schema.PrecisionExact
		fs.lastTS = ts
	case !fs.lastTS.IsZero():
		rec.TS, rec.TSPrecision = fs.lastTS, schema.PrecisionDerived
	default:
		rec.TS, rec.TSPrecision = fs.mtime, schema.PrecisionFileMtime
	}

	kind := l.Type
	if len(l.Payload) == 0 {
		switch {
		case itemTypes[l.Type]:
			kind, fs.legacy = "response_item", true
		case l.Type == "" && l.ID != "":
			kind, fs.legacy = "session_meta", true
		case l.RecordType != "":
			kind = l.RecordType
		}
	}
	rec.NativeType = kind
	if p.Type != "" && kind != "session_meta" && kind != "turn_context" && kind != "compacted" {
		rec.NativeType = kind + "/" + p.Type
	}

	if fs.replaying {
		if !ok || ts.Before(fs.ownStart) || ts.Sub(fs.lastReplay) <= replayGap {
			if ts.After(fs.lastReplay) {
				fs.lastReplay = ts
			}
			return r.replayed(fs, rec, kind, p)
		}
		fs.replaying = false
	}

	switch kind {
	case "session_meta":
		if !r.sessionMeta(fs, p, rec.TS) {
			fs.replaying, fs.lastReplay = true, rec.TS
			return r.replayed(fs, rec, kind, p)
		}
	case "turn_context":
		fs.model = cmp.Or(p.Model, fs.model)
		fs.turn = cmp.Or(p.TurnID, fs.turn)
		fs.cwd = cmp.Or(p.Cwd, fs.cwd)
	case "response_item":
		if err := r.decideAt(fs, false); err != nil {
			return err
		}
		return r.item(fs, rec, p, ln)
	case "compacted":
		if err := r.decideAt(fs, false); err != nil {
			return err
		}
		r.closeRequest(fs)
		r.message(fs, rec, ln, schema.RoleSystem, schema.ContentCompactSummary)
		rec.Text = str(p.Message)
		return r.add(fs, rec, false)
	case "event_msg":
		return r.event(fs, rec, p, ln)
	}
	return r.add(fs, rec, false)
}

// sessionMeta reads a session_meta line; it returns false for a line of
// another session: the start of a copied parent history.
func (r *run) sessionMeta(fs *fileState, p *payload, ts time.Time) bool {
	if fs.haveMeta && p.ID != "" && p.ID != fs.own {
		return false
	}
	first := !fs.haveMeta
	fs.haveMeta = true
	if first {
		fs.own = cmp.Or(p.ID, fs.own)
		fs.session = fs.own
		if t, ok := extract.ParseTime(p.Timestamp); ok {
			fs.ownStart = t
		} else {
			fs.ownStart = ts
		}
		fs.project = p.Cwd
	}
	fs.cwd = cmp.Or(p.Cwd, fs.cwd)
	set := func(k, v string) {
		if v != "" {
			fs.meta[k] = v
		}
	}
	set("cli_version", p.CLIVersion)
	set("originator", p.Originator)
	set("thread_source", p.ThreadSource)
	set("model_provider", p.ModelProvider)
	set("forked_from_id", p.ForkedFromID)
	if p.Git != nil {
		fs.branch = cmp.Or(p.Git.Branch, fs.branch)
		set("git_commit", p.Git.CommitHash)
		set("repository_url", p.Git.RepositoryURL)
	}
	if s := str(p.Source); s != "" {
		set("source", s)
	} else if src := trimSpace(p.Source); len(src) > 0 && src[0] == '{' {
		set("source", string(extract.OneLine(src)))
		var sub struct {
			Subagent json.RawMessage `json:"subagent"`
		}
		if json.Unmarshal(src, &sub) == nil && len(sub.Subagent) > 0 {
			var spawn struct {
				ThreadSpawn *struct {
					ParentThreadID string `json:"parent_thread_id"`
					AgentNickname  string `json:"agent_nickname"`
					AgentRole      string `json:"agent_role"`
				} `json:"thread_spawn"`
			}
			var kind string
			if json.Unmarshal(sub.Subagent, &kind) != nil && json.Unmarshal(sub.Subagent, &spawn) == nil && spawn.ThreadSpawn != nil {
				t := spawn.ThreadSpawn
				if first && t.ParentThreadID != "" {
					// A spawned subagent is a sidechain thread of its parent's
					// session, as Claude Code's subagents are.
					fs.session = t.ParentThreadID
					set("parent_thread_id", t.ParentThreadID)
					fs.agent = &schema.Agent{ID: fs.own, Type: cmp.Or(cmp.Or(t.AgentRole, p.AgentRole), cmp.Or(t.AgentNickname, p.AgentNickname)), Sidechain: true}
					if fs.agent.Type == "" {
						fs.agent.Type = "subagent"
					}
				}
			} else if kind != "" {
				set("subagent", kind)
			}
		}
	}
	return true
}

// replayed handles a line of a copied parent history: kept raw; its token
// counts only move the cumulative baseline, its turn contexts the model.
func (r *run) replayed(fs *fileState, rec *schema.Record, kind string, p *payload) error {
	rec.Meta = json.RawMessage(`{"replayed":true}`)
	switch {
	case kind == "event_msg" && p.Type == "token_count" && p.Info != nil && p.Info.Total != nil:
		fs.total, fs.haveTotal = *p.Info.Total, true
	case kind == "turn_context":
		fs.model = cmp.Or(p.Model, fs.model)
	}
	return r.add(fs, rec, false)
}

// message makes rec a message of the own session.
func (r *run) message(fs *fileState, rec *schema.Record, ln schema.Line, role schema.Role, ct schema.ContentType) {
	rec.Kind = schema.KindMessage
	rec.ID = schema.ID(platform, fs.own, "L"+strconv.FormatInt(ln.Num, 10))
	rec.Role, rec.ContentType = role, ct
	rec.ParentID = fs.prev
	fs.prev = rec.ID
}

// injectedRE matches the context Codex writes as user-role items: a whole
// message in one <tag>…</tag>, or the AGENTS.md preamble.
var injectedRE = regexp.MustCompile(`(?s)^(?:<([a-zA-Z_][a-zA-Z0-9_ -]*)>.*</([a-zA-Z_][a-zA-Z0-9_ -]*)>|# AGENTS\.md instructions.*)$`)

func injected(text string) bool {
	m := injectedRE.FindStringSubmatch(strings.TrimSpace(text))
	return m != nil && m[1] == m[2]
}

func (r *run) item(fs *fileState, rec *schema.Record, p *payload, ln schema.Line) error {
	switch p.Type {
	case "message":
		text := contentText(p.Content)
		switch p.Role {
		case "assistant":
			r.assistant(fs, rec, ln)
			rec.Text = text
			rec.ContentType = schema.AssistantContentType(rec.Text, "", 0)
			return r.add(fs, rec, true)
		case "user":
			r.closeRequest(fs)
			if err := r.flush(fs, false); err != nil {
				return err
			}
			r.message(fs, rec, ln, schema.RoleUser, schema.ContentText)
			rec.Text = text
			def := !injected(text)
			switch {
			case fs.eventLine > 0 && fs.eventLine == ln.Num-1:
				// Its user_message event came first: a typed prompt.
				r.prompt(fs, rec, fs.snap(ln.Offset, ln.Num-1))
				fs.eventLine = 0
			case fs.legacy:
				// Legacy rollouts have no events: the text decides.
				if def {
					r.prompt(fs, rec, fs.snap(ln.Offset, ln.Num-1))
				} else {
					rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentMeta
				}
			default:
				fs.undecided, fs.undecidedDef, fs.undecidedAt = len(fs.pending), def, fs.snap(ln.Offset, ln.Num-1)
				fs.pending = append(fs.pending, rec)
				fs.pendingBytes += len(rec.Raw) + len(rec.Text)
				return nil
			}
			return r.add(fs, rec, false)
		case "developer", "system":
			r.message(fs, rec, ln, schema.RoleSystem, schema.ContentMeta)
			rec.Text = text
		}
	case "reasoning":
		var th []string
		for _, s := range parts(p.Summary) {
			if s.Text != "" {
				th = append(th, s.Text)
			}
		}
		if len(th) == 0 {
			for _, s := range parts(p.Content) {
				if s.Text != "" {
					th = append(th, s.Text)
				}
			}
		}
		if len(th) == 0 {
			break // encrypted only: nothing to read
		}
		r.assistant(fs, rec, ln)
		rec.Thinking = strings.Join(th, "\n")
		rec.ContentType = schema.ContentThinking
		return r.add(fs, rec, true)
	case "function_call", "custom_tool_call", "local_shell_call", "web_search_call":
		r.assistant(fs, rec, ln)
		t := schema.Tool{Name: p.Name, CallID: p.CallID}
		switch p.Type {
		case "function_call":
			t.Input = toolInput(p.Arguments)
		case "custom_tool_call":
			t.Input = toolInput(p.Input)
		case "local_shell_call":
			t.Name, t.Input = cmp.Or(t.Name, "local_shell"), extract.OneLine(p.Action)
		case "web_search_call":
			t.Name, t.Input = cmp.Or(t.Name, "web_search"), extract.OneLine(p.Action)
		}
		rec.Tools = []schema.Tool{t}
		rec.Files = callFiles(t.Name, t.Input, fs.cwd)
		if t.CallID != "" {
			fs.calls[t.CallID] = t.Name
			fs.ids[t.CallID] = rec.ID
		}
		rec.ContentType = schema.ContentToolUse
		return r.add(fs, rec, true)
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		fs.req = ""
		r.message(fs, rec, ln, schema.RoleTool, schema.ContentToolResult)
		out, isErr := toolOutput(p.Output, p.Success)
		rec.Tools = []schema.Tool{{Name: fs.calls[p.CallID], CallID: p.CallID, Output: out, IsError: isErr}}
		rec.NativeID = p.CallID
		if id, ok := fs.ids[p.CallID]; ok {
			rec.ParentID = id
			delete(fs.ids, p.CallID)
			delete(fs.calls, p.CallID)
		}
	}
	return r.add(fs, rec, false)
}

// assistant makes rec an item of the open request. The items of one model
// request (reasoning, message, tool calls) share a native id, so that
// pos-normalize merges them into one assistant message as it does the
// lines of one Claude Code message.
func (r *run) assistant(fs *fileState, rec *schema.Record, ln schema.Line) {
	r.message(fs, rec, ln, schema.RoleAssistant, schema.ContentText)
	if fs.req == "" {
		fs.req = fs.own + "/L" + strconv.FormatInt(ln.Num, 10)
	}
	rec.NativeID, rec.RequestID = fs.req, fs.req
	rec.Model = fs.model
	rec.Agent = fs.agent
}

// prompt marks a user item as a prompt the person typed: it opens an
// exchange, and the next run resumes here.
func (r *run) prompt(fs *fileState, rec *schema.Record, at snapshot) {
	rec.Role, rec.ContentType = schema.RoleUser, schema.ContentText
	fs.resume, fs.resumeLines, fs.resumeSnap = at.offset, at.lines, at
}

// decideAt settles the user item waiting for its event: a user_message
// event makes it a prompt; a following response item means it was context
// Codex injected; at the end of the file it is what its text suggests.
func (r *run) decideAt(fs *fileState, isPrompt bool) error {
	if fs.undecided < 0 {
		return nil
	}
	rec := fs.pending[fs.undecided]
	if isPrompt {
		r.prompt(fs, rec, fs.undecidedAt)
	} else {
		rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentMeta
	}
	fs.undecided = -1
	return r.flush(fs, false)
}

func (r *run) event(fs *fileState, rec *schema.Record, p *payload, ln schema.Line) error {
	switch p.Type {
	case "user_message":
		if fs.undecided >= 0 {
			if err := r.decideAt(fs, true); err != nil {
				return err
			}
		} else {
			fs.eventLine = ln.Num
		}
	case "token_count":
		if err := r.tokenCount(fs, p); err != nil {
			return err
		}
	case "context_compacted":
		r.message(fs, rec, ln, schema.RoleSystem, schema.ContentCompactBoundary)
	case "turn_aborted":
		r.closeRequest(fs)
		r.message(fs, rec, ln, schema.RoleSystem, schema.ContentInterrupt)
		rec.Text = "turn aborted"
		if p.Reason != "" {
			rec.Text += ": " + p.Reason
		}
	case "thread_name_updated":
		fs.title = cmp.Or(p.ThreadName, fs.title)
	}
	return r.add(fs, rec, false)
}

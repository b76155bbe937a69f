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

// replayGap is how close together the lines of a fork's copied history
// are: Codex writes the parent's lines in one burst, with fresh timestamps,
// before the fork's own first turn.
const replayGap = 100 * time.Millisecond

// Hold limits: records waiting for their request's token count are
// released regardless beyond these.
const (
	maxPending      = 4096
	maxPendingBytes = 64 << 20
)

// fileState is what is known about the rollout being read.
type fileState struct {
	path  string
	mtime time.Time

	own      string // the rollout's own session (thread) id
	session  string // the session its records belong to: the parent's for a spawned subagent
	haveMeta bool
	legacy   bool // bare response items (rollouts before mid 2025)
	agent    *schema.Agent
	project  string // the session's cwd
	cwd      string // the current turn's cwd
	branch   string
	title    string
	meta     map[string]string // cli_version, originator, source … for the session record
	ownStart time.Time

	model, turn string
	total       tokens // the last cumulative total seen
	haveTotal   bool
	carry       tokens // usage of a request that had no assistant item to carry it

	replaying  bool
	lastReplay time.Time

	req   string            // the open request: the line of its first assistant item
	calls map[string]string // call_id -> tool name
	ids   map[string]string // call_id -> the call's record id
	prev  string            // the previous message's id

	pending      []*schema.Record
	pendingBytes int
	holdFrom     int  // first assistant record of the request waiting for its token count, or -1
	lastAsst     int  // last assistant record in pending, or -1
	undecided    int  // a user-role item waiting for its user_message event, or -1
	undecidedDef bool // what it is if nothing decides: a prompt (true) or injected context
	undecidedAt  snapshot
	eventLine    int64 // the line of a user_message event that came before its item

	lastTS      time.Time
	resume      int64
	resumeLines int64
	resumeSnap  snapshot
}

// snapshot is the state at a prompt, saved with the checkpoint that
// resumes there.
type snapshot struct {
	offset, lines int64
	model, turn   string
	total         tokens
	haveTotal     bool
	cwd           string
}

func newFileState(path string, mtime time.Time) *fileState {
	own := sessionFromName(path)
	return &fileState{path: path, mtime: mtime, own: own, session: own, meta: map[string]string{},
		calls: map[string]string{}, ids: map[string]string{}, holdFrom: -1, lastAsst: -1, undecided: -1}
}

func (fs *fileState) snap(offset, lines int64) snapshot {
	return snapshot{offset: offset, lines: lines, model: fs.model, turn: fs.turn, total: fs.total, haveTotal: fs.haveTotal, cwd: fs.cwd}
}

// context is what the next run needs at the resume point.
func (fs *fileState) context() map[string]string {
	c := map[string]string{"own": fs.own, "session": fs.session, "project": fs.project, "branch": fs.branch, "title": fs.title}
	for k, v := range fs.meta {
		c["meta."+k] = v
	}
	if fs.haveMeta {
		c["have_meta"] = "1"
	}
	if fs.legacy {
		c["legacy"] = "1"
	}
	if !fs.ownStart.IsZero() {
		c["own_start"] = fs.ownStart.Format(time.RFC3339Nano)
	}
	if a := fs.agent; a != nil {
		c["agent_id"], c["agent_type"] = a.ID, a.Type
	}
	s := fs.resumeSnap
	c["model"], c["turn"], c["cwd"] = s.model, s.turn, s.cwd
	if s.haveTotal {
		c["total"] = s.total.String()
	}
	for k, v := range c {
		if v == "" {
			delete(c, k)
		}
	}
	return c
}

// restore takes the context a checkpoint saved.
func (fs *fileState) restore(c map[string]string) {
	if c == nil {
		fs.resumeSnap = fs.snap(0, 0)
		return
	}
	fs.own, fs.session = cmp.Or(c["own"], fs.own), cmp.Or(c["session"], fs.session)
	fs.project, fs.branch, fs.title = c["project"], c["branch"], c["title"]
	fs.haveMeta, fs.legacy = c["have_meta"] == "1", c["legacy"] == "1"
	for k, v := range c {
		if m, ok := strings.CutPrefix(k, "meta."); ok {
			fs.meta[m] = v
		}
	}
	if t, ok := parseTS(c["own_start"]); ok {
		fs.ownStart = t
	}
	if c["agent_id"] != "" {
		fs.agent = &schema.Agent{ID: c["agent_id"], Type: c["agent_type"], Sidechain: true}
	}
	fs.model, fs.turn, fs.cwd = c["model"], c["turn"], c["cwd"]
	if t, ok := parseTokens(c["total"]); ok {
		fs.total, fs.haveTotal = t, true
	}
	fs.resumeSnap = fs.snap(0, 0)
}

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
	rec.Adapter = &schema.Adapter{Name: platform, Version: AdapterVersion}
	rec.User, rec.Machine = r.opt.User, r.opt.Machine
	rec.Completeness = schema.CompleteFull
	rec.Raw = raw
	if r.opt.Now != nil {
		rec.IngestedAt = r.opt.Now()
	}
	ts, ok := parseTS(l.Timestamp)
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
		if t, ok := parseTS(p.Timestamp); ok {
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
		set("source", string(compact(src)))
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
			t.Name, t.Input = cmp.Or(t.Name, "local_shell"), compact(p.Action)
		case "web_search_call":
			t.Name, t.Input = cmp.Or(t.Name, "web_search"), compact(p.Action)
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

// tokenCount attaches the usage a token_count adds to the request it
// closes. Re-emitted totals add nothing; a total that went down (a session
// whose counters restarted) counts its last request.
func (r *run) tokenCount(fs *fileState, p *payload) error {
	if p.Info == nil || (p.Info.Total == nil && p.Info.Last == nil) {
		return nil
	}
	var inc tokens
	switch t := p.Info.Total; {
	case t == nil:
		inc = *p.Info.Last
	case fs.haveTotal && *t == fs.total:
		return nil // re-emitted
	case fs.haveTotal && t.atLeast(fs.total):
		inc = t.sub(fs.total)
	case p.Info.Last != nil:
		// No baseline (or the counters restarted): the last request only.
		// A first total larger than its last request includes usage this
		// file does not show (a fork's inherited counters).
		inc = *p.Info.Last
	default:
		inc = *t
	}
	if t := p.Info.Total; t != nil {
		fs.total, fs.haveTotal = *t, true
	}
	inc = inc.add(fs.carry)
	fs.carry = tokens{}
	if fs.lastAsst < 0 {
		fs.carry = inc
		return nil
	}
	a := fs.pending[fs.lastAsst]
	u := usage(inc)
	if a.Usage != nil {
		u.Add(a.Usage)
	}
	a.Usage = &u
	r.closeRequest(fs)
	return r.flush(fs, false)
}

// usage maps Codex's counters onto schema.Usage. Codex counts cached input
// inside input_tokens (OpenAI's convention): Input is the uncached part and
// CacheRead the cached one, so that summing the four never counts a token
// twice. output_tokens already includes reasoning_output_tokens. OpenAI
// does not bill cache writes; a provider that reports them
// (cache_write_input_tokens) has them moved from Input to CacheCreation.
func usage(t tokens) schema.Usage {
	in := t.Input - t.Cached - t.CacheWrite
	if in < 0 {
		in = 0
	}
	return schema.Usage{Input: in, Output: t.Output, CacheCreation: t.CacheWrite, CacheRead: t.Cached}
}

// closeRequest ends the open request: its items are no longer held for
// a token count, and the next assistant item starts a new request.
func (r *run) closeRequest(fs *fileState) {
	fs.holdFrom, fs.lastAsst, fs.req = -1, -1, ""
}

// settleUndecided gives the user item still waiting for its event what its
// text suggests: a prompt, unless it looks like injected context.
func (r *run) settleUndecided(fs *fileState) {
	if fs.undecided < 0 {
		return
	}
	rec := fs.pending[fs.undecided]
	if fs.undecidedDef {
		r.prompt(fs, rec, fs.undecidedAt)
	} else {
		rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentMeta
	}
	fs.undecided = -1
}

// add queues a record behind those still held, or emits it.
func (r *run) add(fs *fileState, rec *schema.Record, asst bool) error {
	if asst {
		if fs.holdFrom < 0 {
			fs.holdFrom = len(fs.pending)
		}
		fs.lastAsst = len(fs.pending)
	}
	if len(fs.pending) == 0 && !asst {
		return r.out(fs, rec)
	}
	fs.pending = append(fs.pending, rec)
	fs.pendingBytes += len(rec.Raw) + len(rec.Text) + len(rec.Thinking)
	if len(fs.pending) > maxPending || fs.pendingBytes > maxPendingBytes {
		return r.flush(fs, true)
	}
	return r.flush(fs, false)
}

// flush emits the queued records up to the first one still held (all of
// them with force).
func (r *run) flush(fs *fileState, force bool) error {
	n := len(fs.pending)
	if !force {
		if fs.undecided >= 0 {
			n = min(n, fs.undecided)
		}
		if fs.holdFrom >= 0 {
			n = min(n, fs.holdFrom)
		}
	} else {
		r.settleUndecided(fs)
	}
	if n == 0 {
		return nil
	}
	for _, rec := range fs.pending[:n] {
		if err := r.out(fs, rec); err != nil {
			return err
		}
	}
	rest := copy(fs.pending, fs.pending[n:])
	clear(fs.pending[rest:])
	fs.pending = fs.pending[:rest]
	fs.pendingBytes = 0
	for _, rec := range fs.pending {
		fs.pendingBytes += len(rec.Raw) + len(rec.Text) + len(rec.Thinking)
	}
	shift := func(i *int) {
		if *i >= 0 {
			if *i -= n; *i < 0 {
				*i = -1
			}
		}
	}
	shift(&fs.undecided)
	shift(&fs.holdFrom)
	shift(&fs.lastAsst)
	if force {
		fs.holdFrom, fs.lastAsst = -1, -1
	}
	return nil
}

// finish emits everything still held at the end of the file.
func (r *run) finish(fs *fileState) error {
	r.settleUndecided(fs)
	return r.flush(fs, true)
}

// out completes a record with what the file taught and emits it (a
// message after its native line's raw record).
func (r *run) out(fs *fileState, rec *schema.Record) error {
	rec.SessionID = fs.session
	rec.Project = fs.project
	if rec.Kind == schema.KindMessage {
		rec.Cwd, rec.GitBranch = fs.cwd, fs.branch
		rec.Agent = fs.agent
	}
	if rec.Kind == schema.KindRaw && rec.ID == "" {
		rec.ID = schema.RawID(rec)
	}
	if !r.opt.Since.IsZero() && rec.TS.Before(r.opt.Since) {
		return nil
	}
	if rec.Kind != schema.KindRaw && len(rec.Raw) > 0 {
		if err := r.emit(schema.SplitRaw(rec)); err != nil {
			return err
		}
		rec.Raw = nil
	}
	return r.emit(rec)
}

// sessionRecord emits what Codex knows about the session beyond its
// messages: cwd, branch, thread name, CLI version, originator and source.
// A spawned subagent's rollout belongs to its parent's session and emits
// none.
func (r *run) sessionRecord(fs *fileState) error {
	if !fs.haveMeta || fs.agent != nil {
		return nil
	}
	rec := schema.New(schema.KindSession)
	rec.ID = schema.SessionRecordID(platform, fs.session)
	rec.Platform, rec.SessionID = platform, fs.session
	rec.TS, rec.TSPrecision = fs.lastTS, schema.PrecisionExact
	if rec.TS.IsZero() {
		rec.TS, rec.TSPrecision = fs.mtime, schema.PrecisionFileMtime
	}
	rec.Project, rec.Cwd, rec.GitBranch = fs.project, cmp.Or(fs.project, fs.cwd), fs.branch
	rec.Title = fs.title
	rec.Model = fs.model
	rec.User, rec.Machine = r.opt.User, r.opt.Machine
	rec.Completeness = schema.CompleteFull
	rec.Source = &schema.Source{Path: fs.path, Mtime: fs.mtime}
	rec.Adapter = &schema.Adapter{Name: platform, Version: AdapterVersion}
	rec.Session = &schema.Session{}
	if rec.Title != "" {
		rec.Session.TitleSource = schema.TitlePlatform
	}
	if len(fs.meta) > 0 {
		b, _ := json.Marshal(fs.meta) // sorted keys
		rec.Meta = b
	}
	if r.opt.Now != nil {
		rec.IngestedAt = r.opt.Now()
	}
	return r.emit(rec)
}

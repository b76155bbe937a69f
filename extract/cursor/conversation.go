package cursor

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/schema"
)

// Layouts, as named in a session's meta.
const (
	layoutAIChat = "aichat"          // 2023 ItemTable chat tabs
	layoutInline = "composer_inline" // 2024 ItemTable composers with inline conversations
	layoutKV     = "composer_kv"     // 2025 cursorDiskKV composerData + bubbleId rows
	layoutHead   = "composer_head"   // a workspace's composer head without a body
	layoutJSONL  = "transcript_jsonl"
	layoutText   = "transcript_txt"
)

// convEntry is one bubble of a conversation, in order.
type convEntry struct {
	b    *bubble         // nil when the body is absent, NULL or unreadable
	role int             // 1 user, 2 assistant, 0 unknown
	id   string          // bubble id
	key  string          // Source.Key of the message
	raw  json.RawMessage // the bubble's own row, if it has one
	hdr  *header         // its place in fullConversationHeadersOnly (2025)
	hint time.Time       // a derived time (2023 prompts)

	ts   time.Time
	prec string
}

// conversation turns a composer's or tab's bubbles into messages, one turn
// (a prompt and the answers after it) at a time: an answer knows when the
// turn was sent, the prompt does not, so times are settled per turn.
// Memory is bounded by the longest turn.
type conversation struct {
	dr       *dbRun
	sid      string
	project  string
	layout   string
	turn     []*convEntry
	prevID   string
	prevTS   time.Time
	fallback time.Time // when nothing in the conversation has a time
	fbPrec   string

	n, missing     int // bubbles, bubbles without a body
	firstTS        time.Time
	firstPrec      string
	diffs          bool // added/removed come from tool results
	added, removed int64
}

func (dr *dbRun) newConversation(sid, project, layout string) *conversation {
	return &conversation{dr: dr, sid: sid, project: project, layout: layout,
		fallback: dr.d.mtime, fbPrec: schema.PrecisionFileMtime}
}

func (cv *conversation) add(e *convEntry) error {
	if e.role == 1 && len(cv.turn) > 0 {
		if err := cv.flush(); err != nil {
			return err
		}
	}
	cv.turn = append(cv.turn, e)
	return nil
}

// flush settles the times of the open turn and emits its messages.
func (cv *conversation) flush() error {
	if len(cv.turn) == 0 {
		return nil
	}
	turn := cv.turn
	cv.turn = cv.turn[:0:0]
	// Exact times: a bubble's own createdAt (or its header's), an answer's
	// clientRpcSendTime. The turn started (S) at the first of them and
	// ended (E) at the latest clientSettleTime/clientEndTime.
	var start, end time.Time
	for _, e := range turn {
		if e.b != nil {
			if t, ok := e.b.CreatedAt.Time(); ok {
				e.ts, e.prec = t, schema.PrecisionExact
			}
		}
		if e.ts.IsZero() && e.hdr != nil {
			if t, ok := e.hdr.CreatedAt.Time(); ok {
				e.ts, e.prec = t, schema.PrecisionExact
			}
		}
		if e.b != nil && e.b.TimingInfo != nil {
			ti := e.b.TimingInfo
			if t, ok := ti.ClientRpcSendTime.Time(); ok {
				if e.ts.IsZero() && e.role != 1 {
					e.ts, e.prec = t, schema.PrecisionExact
				}
				if start.IsZero() {
					start = t
				}
			}
			for _, f := range []flexTime{ti.ClientSettleTime, ti.ClientEndTime} {
				if t, ok := f.Time(); ok && t.After(end) {
					end = t
				}
			}
		}
		if start.IsZero() && !e.ts.IsZero() {
			start = e.ts
		}
	}
	if first := turn[0]; first.ts.IsZero() && first.role == 1 && first.hint.IsZero() && !start.IsZero() {
		first.hint = start // the prompt was sent when the answer was requested
	}
	if last := turn[len(turn)-1]; len(turn) > 1 && last.ts.IsZero() && last.hint.IsZero() && !end.IsZero() {
		last.hint = end
	}
	fillTimes(turn, cv.prevTS, cv.fallback, cv.fbPrec)

	// A model named on the prompt (Cursor 2025-10+) is the turn's.
	turnModel := ""
	if turn[0].role == 1 && turn[0].b != nil {
		turnModel = turn[0].b.model()
	}
	for _, e := range turn {
		rec := cv.message(e, turnModel)
		cv.prevID, cv.prevTS = rec.ID, rec.TS
		if cv.firstTS.IsZero() {
			cv.firstTS, cv.firstPrec = rec.TS, rec.TSPrecision
		}
		if err := cv.dr.message(rec); err != nil {
			return err
		}
	}
	return nil
}

// fillTimes gives every entry a time: its own, else its hint (derived),
// else its predecessor's, else its successor's (derived), else the
// fallback.
func fillTimes(turn []*convEntry, prev, fallback time.Time, fbPrec string) {
	for _, e := range turn {
		if e.ts.IsZero() && !e.hint.IsZero() {
			e.ts, e.prec = e.hint, schema.PrecisionDerived
		}
	}
	last := prev
	for _, e := range turn {
		if e.ts.IsZero() {
			if !last.IsZero() {
				e.ts, e.prec = last, schema.PrecisionDerived
			}
			continue
		}
		last = e.ts
	}
	var next time.Time
	for i := len(turn) - 1; i >= 0; i-- {
		e := turn[i]
		if e.ts.IsZero() {
			if !next.IsZero() {
				e.ts, e.prec = next, schema.PrecisionDerived
			}
			continue
		}
		next = e.ts
	}
	for _, e := range turn {
		if e.ts.IsZero() {
			e.ts, e.prec = fallback, fbPrec
			if fallback.IsZero() {
				e.prec = schema.PrecisionUnknown
			}
		}
	}
}

// message builds the message of an entry.
func (cv *conversation) message(e *convEntry, turnModel string) *schema.Record {
	dr := cv.dr
	rec := dr.newRec(schema.KindMessage, e.key)
	rec.ID = schema.ID(platform, cv.sid, e.id)
	rec.SessionID, rec.ParentID = cv.sid, cv.prevID
	rec.NativeID = e.id
	rec.NativeType = "bubble"
	if cv.layout == layoutAIChat {
		rec.NativeType = "aichat.bubble"
	}
	rec.TS, rec.TSPrecision = e.ts, e.prec
	rec.Project = cv.project
	rec.Raw = e.raw
	rec.Completeness = schema.CompleteFull
	cv.n++
	switch e.role {
	case 1:
		rec.Role, rec.ContentType = schema.RoleUser, schema.ContentText
	case 2:
		rec.Role, rec.ContentType = schema.RoleAssistant, schema.ContentText
	default:
		rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentMeta
	}
	b := e.b
	if b == nil {
		// The order names the bubble but its body is gone.
		cv.missing++
		rec.Completeness = schema.CompleteMetadata
		return rec
	}
	rec.RequestID = b.UsageUUID // the generation the bubble belongs to
	rec.Text = validUTF8(b.text())
	rec.Files = b.files()
	if e.role != 2 {
		return rec
	}
	rec.Thinking = validUTF8(b.thinkingText())
	rec.Model = cmp.Or(b.model(), turnModel)
	if name, callID, input, output, isErr, ok := b.ToolFormerData.tool(); ok {
		rec.Tools = []schema.Tool{{Name: name, CallID: callID, Input: input, Output: validUTF8(output), IsError: isErr}}
		for _, f := range toolFiles(name, input) {
			if f = resolve(cv.project, f); !slices.Contains(rec.Files, f) {
				rec.Files = append(rec.Files, f)
			}
		}
		if b.ToolFormerData.UserDecision != "rejected" && !isErr {
			if a, r, ok := diffLines(b.ToolFormerData.Result); ok {
				cv.diffs = true
				cv.added += a
				cv.removed += r
			}
		}
	}
	if tc := b.TokenCount; tc != nil && (tc.Input != 0 || tc.Output != 0) {
		rec.Usage = &schema.Usage{Input: tc.Input, Output: tc.Output}
	}
	rec.ContentType = schema.AssistantContentType(rec.Text, rec.Thinking, len(rec.Tools))
	if rec.Text == "" && len(rec.Tools) == 0 && len(b.ErrorDetails) > 0 && string(b.ErrorDetails) != "null" {
		rec.ContentType = schema.ContentError
		rec.Text = errorText(b.ErrorDetails)
	}
	return rec
}

// errorText is the message of a bubble's errorDetails.
func errorText(raw json.RawMessage) string {
	var e struct {
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if decode(raw, &e) == nil {
		if e.Message != "" {
			return e.Message
		}
		if s := jsonString(e.Error); s != "" {
			return s
		}
	}
	return jsonString(raw)
}

// diffLines sums the linesAdded/linesRemoved of an edit's result diff.
func diffLines(result json.RawMessage) (added, removed int64, ok bool) {
	v := jsonValue(result)
	if len(v) == 0 || v[0] != '{' || !strings.Contains(string(v), `"diff"`) {
		return 0, 0, false
	}
	var r struct {
		Diff *struct {
			Chunks []struct {
				LinesAdded   int64 `json:"linesAdded"`
				LinesRemoved int64 `json:"linesRemoved"`
			} `json:"chunks"`
		} `json:"diff"`
	}
	if decode(v, &r) != nil || r.Diff == nil {
		return 0, 0, false
	}
	for _, c := range r.Diff.Chunks {
		added += c.LinesAdded
		removed += c.LinesRemoved
	}
	return added, removed, true
}

// sessionMeta is a session's platform metadata (Record.Meta).
type sessionMeta struct {
	Layout              string   `json:"layout"`
	Mode                string   `json:"mode,omitempty"` // agent | chat | edit | plan … (unifiedMode)
	ForceMode           string   `json:"force_mode,omitempty"`
	Status              string   `json:"status,omitempty"`
	Agentic             *bool    `json:"agentic,omitempty"`
	Archived            bool     `json:"archived,omitempty"`
	Model               string   `json:"model,omitempty"` // the composer's selected model
	MaxMode             bool     `json:"max_mode,omitempty"`
	LinesAdded          *int64   `json:"lines_added,omitempty"`
	LinesRemoved        *int64   `json:"lines_removed,omitempty"`
	LinesSource         string   `json:"lines_source,omitempty"` // "tool_diffs" when summed from edit results
	FilesChanged        *int64   `json:"files_changed,omitempty"`
	ContextUsagePercent *float64 `json:"context_usage_percent,omitempty"`
	ContextTokensUsed   *int64   `json:"context_tokens_used,omitempty"`
	ContextTokenLimit   *int64   `json:"context_token_limit,omitempty"`
	CostCents           *float64 `json:"cost_cents,omitempty"`
	Requests            *int64   `json:"requests,omitempty"`
	CreatedAt           string   `json:"created_at,omitempty"`
	LastUpdatedAt       string   `json:"last_updated_at,omitempty"`
	Workspace           string   `json:"workspace,omitempty"` // workspaceStorage directory
	Subagent            bool     `json:"subagent,omitempty"`
	ParentComposer      string   `json:"parent_composer,omitempty"`
	TabState            string   `json:"tab_state,omitempty"`
	ProjectSlug         string   `json:"project_slug,omitempty"` // agent transcripts: ~/.cursor/projects/<slug>
	Bubbles             int      `json:"bubbles,omitempty"`
	BodiesMissing       int      `json:"bodies_missing,omitempty"`
}

// composerMeta gathers what a composer (and its head) say about the
// session.
func composerMeta(c *composer, head *headInfo, layout string) *sessionMeta {
	m := &sessionMeta{Layout: layout, Mode: modeString(c.UnifiedMode), ForceMode: c.ForceMode, Status: c.Status,
		Agentic: c.IsAgentic, Archived: c.IsArchived, LinesAdded: c.TotalLinesAdded, LinesRemoved: c.TotalLinesRemoved,
		FilesChanged: c.FilesChangedCount, ContextUsagePercent: c.ContextUsagePercent,
		ContextTokensUsed: c.ContextTokensUsed, ContextTokenLimit: c.ContextTokenLimit, Subagent: c.IsSubagent}
	if head != nil {
		m.Mode = cmp.Or(m.Mode, head.mode)
		m.ForceMode = cmp.Or(m.ForceMode, head.forceMode)
	}
	if mc := c.ModelConfig; mc != nil && mc.ModelName != "default" {
		m.Model, m.MaxMode = mc.ModelName, mc.MaxMode
	}
	if len(c.UsageData) > 0 {
		var cents float64
		var n int64
		var models []string
		keys := make([]string, 0, len(c.UsageData))
		for k := range c.UsageData {
			keys = append(keys, k)
		}
		slices.Sort(keys) // a fixed order: float sums depend on it
		for _, k := range keys {
			u := c.UsageData[k]
			cents += u.CostInCents
			n += u.Amount
			if k != "default" {
				models = append(models, k)
			}
		}
		m.CostCents, m.Requests = &cents, &n
		if m.Model == "" && len(models) == 1 {
			m.Model = models[0]
		}
	}
	if t, ok := c.CreatedAt.Time(); ok {
		m.CreatedAt = t.Format(time.RFC3339Nano)
	} else if head != nil && !head.created.IsZero() {
		m.CreatedAt = head.created.Format(time.RFC3339Nano)
	}
	if t, ok := c.LastUpdatedAt.Time(); ok {
		m.LastUpdatedAt = t.Format(time.RFC3339Nano)
	} else if head != nil && !head.updated.IsZero() {
		m.LastUpdatedAt = head.updated.Format(time.RFC3339Nano)
	}
	if c.SubagentInfo != nil {
		m.ParentComposer = c.SubagentInfo.ParentComposerID
	}
	return m
}

// resolve makes a path a tool names relative to the workspace absolute,
// when the workspace's folder is known.
func resolve(project, p string) string {
	if project == "" || p == "" || isAbs(p) || strings.Contains(project, "://") {
		return p
	}
	sep := "/"
	if strings.Contains(project, `\`) && !strings.Contains(project, "/") {
		sep = `\`
	}
	return strings.TrimRight(project, `/\`) + sep + strings.TrimPrefix(strings.TrimPrefix(p, "./"), ".\\")
}

// isAbs tells an absolute path in either OS's style.
func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || (len(p) >= 2 && p[1] == ':' && isLetter(p[0]))
}

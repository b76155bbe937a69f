package cline

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/schema"
)

// readAPI reads api_conversation_history.json: a raw record per element and
// the messages made from it.
func (t *task) readAPI(ctx context.Context, s *source) error {
	var calls []pendingTool      // the last assistant message's tool calls
	names := map[string]string{} // tool_use id -> tool name
	reqPos, loosePos := 0, 0
	end, err := t.records(ctx, s, func(rec *schema.Record, i int, raw []byte) error {
		var m apiMessage
		if len(raw) == 0 || raw[0] != '{' || lenientUnmarshal(raw, &m) != nil || m.Role == "" {
			t.fallbackTime(rec, s)
			return t.emit(rec) // another shape: kept raw only
		}
		rec.NativeType = m.Role
		// The requests that produced an assistant message: those started
		// before it entered the history and not taken by an earlier one.
		var reqs []request
		own, hasOwn := epochMS(m.TS)
		if m.Role == "assistant" {
			for reqPos < len(t.ui.reqs) && t.ui.reqs[reqPos].index < i {
				reqs = append(reqs, t.ui.reqs[reqPos])
				reqPos++
			}
			for hasOwn && loosePos < len(t.ui.loose) && !t.ui.loose[loosePos].ts.After(own) {
				reqs = append(reqs, t.ui.loose[loosePos])
				loosePos++
			}
		}
		switch {
		case hasOwn:
			rec.TS, rec.TSPrecision = own, schema.PrecisionExact
		default:
			ts, ok := t.joinedTime(i, m.Role, reqs)
			if ok {
				rec.TS, rec.TSPrecision = ts, schema.PrecisionDerived
			} else {
				t.fallbackTime(rec, s)
			}
		}
		var msgs []*schema.Record
		switch m.Role {
		case "assistant":
			msgs = []*schema.Record{t.assistant(rec, i, &m, reqs)}
			calls = calls[:0]
			for _, tl := range msgs[0].Tools {
				calls = append(calls, pendingTool{name: tl.Name, id: tl.CallID})
				if tl.CallID != "" {
					names[tl.CallID] = tl.Name
				}
			}
		case "user":
			msgs = t.user(rec, i, &m, calls, names)
			calls = calls[:0]
		default:
			msgs = []*schema.Record{t.other(rec, i, &m)}
		}
		if !rec.TS.IsZero() {
			t.lastTS = rec.TS
		}
		return t.emit(rec, msgs...)
	})
	// Requests after the last answer (failed, cancelled, or still
	// streaming) are counted in the session only.
	for _, r := range t.ui.reqs[min(reqPos, len(t.ui.reqs)):] {
		t.loose.Add(&r.usage)
	}
	for _, r := range t.ui.loose[min(loosePos, len(t.ui.loose)):] {
		t.loose.Add(&r.usage)
	}
	return t.endArray(s, end, err)
}

// joinedTime is an api message's time from the ui rows at its place in the
// history: for a user message, when the user wrote it or the request that
// sent it started; for an assistant message, its first streamed row, else
// the start of its request.
func (t *task) joinedTime(i int, role string, reqs []request) (time.Time, bool) {
	ui := &t.ui
	if role == "user" {
		u, uok := ui.userTS[i]
		r, rok := ui.reqTS[i]
		switch {
		case uok && (!rok || u.Before(r)):
			return u, true
		case rok:
			return r, true
		}
	}
	if ts, ok := ui.rowTS[i]; ok {
		return ts, true
	}
	if len(reqs) > 0 && !reqs[len(reqs)-1].ts.IsZero() {
		return reqs[len(reqs)-1].ts, true
	}
	return time.Time{}, false
}

// fallbackTime gives a record without a time of its own the previous
// message's time, else the file's mtime.
func (t *task) fallbackTime(rec *schema.Record, s *source) {
	if !t.lastTS.IsZero() {
		rec.TS, rec.TSPrecision = t.lastTS, schema.PrecisionDerived
		return
	}
	rec.TS, rec.TSPrecision = s.fp.Mtime, schema.PrecisionFileMtime
}

func (t *task) msgID(parts ...string) string {
	return schema.ID(append([]string{platform, t.id}, parts...)...)
}

// messageMeta is what an assistant message knows beyond the schema's
// fields.
type messageMeta struct {
	Cost     *float64 `json:"cost,omitempty"`
	Provider string   `json:"provider,omitempty"`
	Mode     string   `json:"mode,omitempty"`
	Requests int      `json:"requests,omitempty"` // when more than one request produced it (retries)
}

// addRequests puts what the requests behind an assistant message used into
// rec's usage and meta: the sum of their tokens and of their costs, and
// their number when retries made more than one. What mi lacks of the model
// comes from the first request that names it.
func addRequests(rec *schema.Record, meta *messageMeta, mi *modelInfo, reqs []request) {
	var u schema.Usage
	cost, hasCost := 0.0, false
	for _, r := range reqs {
		u.Add(&r.usage)
		if r.hasCost {
			cost += r.cost
			hasCost = true
		}
		mi.ModelID = cmp.Or(mi.ModelID, r.model.ModelID)
		mi.ProviderID = cmp.Or(mi.ProviderID, r.model.ProviderID)
		mi.Mode = cmp.Or(mi.Mode, r.model.Mode)
	}
	if !u.IsZero() {
		rec.Usage = &u
	}
	if hasCost {
		meta.Cost = &cost
	}
	if len(reqs) > 1 {
		meta.Requests = len(reqs)
	}
}

func (t *task) assistant(raw *schema.Record, i int, m *apiMessage, reqs []request) *schema.Record {
	rec := t.message(raw, t.msgID(apiFile, strconv.Itoa(i)))
	rec.Role = schema.RoleAssistant
	a := classifyAssistant(blocks(m.Content))
	rec.Text = strings.Join(a.text, "\n\n")
	rec.Thinking = strings.Join(a.thinking, "\n\n")
	rec.Tools = a.tools
	for _, f := range a.files {
		if f = resolve(t.cwd, f); !slices.Contains(rec.Files, f) {
			rec.Files = append(rec.Files, f)
		}
	}
	rec.ContentType = schema.AssistantContentType(rec.Text, rec.Thinking, len(rec.Tools))
	if m.IsSummary {
		rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentCompactSummary
	}
	var meta messageMeta
	var mi modelInfo
	if m.ModelInfo != nil {
		mi = *m.ModelInfo
	}
	if len(reqs) > 0 {
		addRequests(rec, &meta, &mi, reqs)
	} else if mt := m.Metrics; mt != nil && mt.Tokens != nil {
		// No ui row for the request: the api history's own metrics, whose
		// cached count mixes cache reads and writes.
		rec.Usage = &schema.Usage{Input: int64(mt.Tokens.Prompt), Output: int64(mt.Tokens.Completion), CacheRead: int64(mt.Tokens.Cached)}
		meta.Cost = mt.Cost
		if !t.costSeen && mt.Cost != nil {
			t.cost += *mt.Cost
		}
	}
	if ui, ok := t.ui.models[i]; ok {
		mi.ModelID = cmp.Or(mi.ModelID, ui.ModelID)
		mi.ProviderID = cmp.Or(mi.ProviderID, ui.ProviderID)
		mi.Mode = cmp.Or(mi.Mode, ui.Mode)
	}
	mi = t.settleModel(rec, mi)
	meta.Provider, meta.Mode = mi.ProviderID, mi.Mode
	rec.Meta = t.marshal(meta)
	t.lastID = rec.ID
	return rec
}

// modelAt is the model task_metadata.json says was in use at ts.
func (t *task) modelAt(ts time.Time) modelInfo {
	var mi modelInfo
	for _, u := range t.meta.ModelUsage {
		if at, ok := epochMS(u.TS); ok && at.After(ts) && mi.ModelID != "" {
			break
		}
		mi = modelInfo{ModelID: u.ModelID, ProviderID: u.Provider, Mode: u.Mode}
	}
	return mi
}

// settleModel gives an assistant message its model: mi as far as the
// message and its requests name it, else the one the task metadata says
// was in use at the message's time, else the model of the message before.
// The model becomes the one in use, and the task's list of models and
// modes gains it.
func (t *task) settleModel(rec *schema.Record, mi modelInfo) modelInfo {
	if mi.ModelID == "" {
		mi = t.modelAt(rec.TS)
	}
	if mi.ModelID == "" {
		mi = t.lastModel // the model in use goes on until another is named
	}
	t.lastModel = mi
	rec.Model = mi.ModelID
	t.noteModel(mi)
	return mi
}

func (t *task) noteModel(mi modelInfo) {
	if mi.ModelID != "" && !slices.Contains(t.models, mi.ModelID) {
		t.models = append(t.models, mi.ModelID)
	}
	if mi.Mode != "" && !slices.Contains(t.modes, mi.Mode) {
		t.modes = append(t.modes, mi.Mode)
	}
}

// user makes the messages of a user api message: its tool results (role
// tool), what the user typed (role user, a prompt), or else the text Cline
// injected (role system).
func (t *task) user(raw *schema.Record, i int, m *apiMessage, calls []pendingTool, names map[string]string) []*schema.Record {
	p := classifyUser(blocks(m.Content), calls, names)
	id := t.msgID(apiFile, strconv.Itoa(i))
	var out []*schema.Record
	if len(p.tools) > 0 {
		rec := t.message(raw, id)
		rec.Role, rec.ContentType = schema.RoleTool, schema.ContentToolResult
		rec.Tools = p.tools
		out = append(out, rec)
		t.lastID = rec.ID
		id = t.msgID(apiFile, strconv.Itoa(i), "prompt")
	}
	if len(p.prompt) > 0 {
		rec := t.message(raw, id)
		rec.Role, rec.ContentType = schema.RoleUser, schema.ContentText
		rec.Text = strings.Join(p.prompt, "\n\n")
		out = append(out, rec)
		t.lastID = rec.ID
		if t.firstMsg == "" {
			t.firstMsg = rec.Text
		}
	}
	if len(out) == 0 {
		rec := t.message(raw, id)
		rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentMeta
		rec.Text = strings.Join(p.system, "\n\n")
		out = append(out, rec)
		t.lastID = rec.ID
	}
	return out
}

// other is a message of a role Cline does not write (kept as system text).
func (t *task) other(raw *schema.Record, i int, m *apiMessage) *schema.Record {
	rec := t.message(raw, t.msgID(apiFile, strconv.Itoa(i)))
	rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentMeta
	var text []string
	for _, b := range blocks(m.Content) {
		if s := strings.TrimSpace(b.Text); s != "" {
			text = append(text, s)
		}
	}
	rec.Text = strings.Join(text, "\n\n")
	t.lastID = rec.ID
	return rec
}

func (t *task) marshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "{}" {
		return nil
	}
	return b
}

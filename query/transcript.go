package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/schema"
)

// A transcript is a whole session laid out for reading: its prompts,
// replies and tool calls in order, its subagents' threads nested where
// they started and its compaction points marked. Export and the pages of
// serve render it (Markdown, HTML); both read it with Transcript.

// Kinds of transcript entries.
const (
	EntryPrompt     = "prompt"     // what the user typed (or a slash command)
	EntryReply      = "reply"      // the assistant's text, its thinking and tool calls
	EntryCompaction = "compaction" // the context was compacted here; Summary is what replaced it
	EntryNote       = "note"       // a system line, a command's output, an interruption, an error
	EntrySubagent   = "subagent"   // a subagent's thread, in Thread
)

// Entry is one step of a transcript.
type Entry struct {
	Kind     string     `json:"kind"`
	TS       time.Time  `json:"ts"`
	Role     string     `json:"role,omitempty"`
	Type     string     `json:"content_type,omitempty"`
	Model    string     `json:"model,omitempty"`
	Text     string     `json:"text,omitempty"`
	Thinking string     `json:"thinking,omitempty"`
	Summary  string     `json:"summary,omitempty"`
	Calls    []ToolCall `json:"tool_calls,omitempty"`
	Thread   *Thread    `json:"thread,omitempty"`
}

// Thread is the main thread of a session or one subagent's.
type Thread struct {
	AgentID   string  `json:"agent_id,omitempty"`
	AgentType string  `json:"agent_type,omitempty"`
	Entries   []Entry `json:"entries"`
}

// Transcript is a session's whole conversation.
type Transcript struct {
	Session SessionRef `json:"session"`
	Main    Thread     `json:"main"`
	// Prompts, Replies, Calls and Subagents count the transcript's
	// entries, subagents' included.
	Prompts, Replies, Calls, Subagents int
}

// MaxToolInput bounds the characters of a tool call's input a transcript
// shows (a Write of a whole file); the rest is cut with a note.
const MaxToolInput = 4000

// TranscriptOptions choose the session of a transcript.
type TranscriptOptions struct {
	// Session is a session id or a unique prefix of one; empty means the
	// most recently active session.
	Session  string
	Platform string
}

// transcriptRow is one message as a transcript reads it.
type transcriptRow struct {
	ts                                 time.Time
	role, ctype, text, thinking, model string
	agentID, agentType                 string
	tools                              []toolRow
}

type toolRow struct {
	Name, CallID, Input, Output string
	OutputChars                 int64
	IsError                     bool
}

// Transcript reads a session's messages, all of its threads, in order.
func (d *DB) Transcript(ctx context.Context, opt TranscriptOptions) (*Transcript, error) {
	ref, err := d.ResolveSession(ctx, opt.Session, opt.Platform, "")
	if err != nil {
		return nil, err
	}
	messages, _, err := d.sessionViews(ctx, ref)
	if err != nil {
		return nil, err
	}
	// Tool outputs are cut in the query: a transcript shows their start.
	q := `SELECT ts, coalesce(role, ''), coalesce(content_type, ''), coalesce(text, ''), coalesce(thinking, ''),
  coalesce(model, ''), coalesce(agent_id, ''), coalesce(agent_type, ''),
  [{'name': coalesce(t.name, ''), 'call_id': coalesce(t.call_id, ''), 'input': left(coalesce(t.input, ''), $3),
    'output': left(coalesce(t.output, ''), $4), 'chars': length(coalesce(t.output, '')), 'err': coalesce(t.is_error, false)}
   FOR t IN coalesce(tools, [])]
FROM ` + messages + `
WHERE platform = $1 AND session_id = $2
ORDER BY ts NULLS FIRST, source_path, source_line, source_offset, id`
	rows, err := d.db.QueryContext(ctx, q, ref.Platform, ref.SessionID, MaxToolInput+excerpt.MaxMarker, MaxToolOutput+excerpt.MaxMarker)
	if err != nil {
		return nil, sqlErr(err)
	}
	defer rows.Close()
	var msgs []transcriptRow
	for rows.Next() {
		var m transcriptRow
		var ts sql.NullTime
		var tools toolList
		if err := rows.Scan(&ts, &m.role, &m.ctype, &m.text, &m.thinking, &m.model, &m.agentID, &m.agentType, &tools); err != nil {
			return nil, sqlErr(err)
		}
		m.ts, m.tools = utc(ts), tools
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return nil, sqlErr(err)
	}
	return buildTranscript(ref, msgs), nil
}

// toolList scans the list of tool structs the transcript query makes.
type toolList []toolRow

func (l *toolList) Scan(v any) error {
	list, _ := v.([]any)
	out := make([]toolRow, 0, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		s := func(k string) string { x, _ := m[k].(string); return x }
		t := toolRow{Name: s("name"), CallID: s("call_id"), Input: s("input"), Output: s("output")}
		switch n := m["chars"].(type) {
		case int64:
			t.OutputChars = n
		case int32:
			t.OutputChars = int64(n)
		}
		t.IsError, _ = m["err"].(bool)
		out = append(out, t)
	}
	*l = out
	return nil
}

// buildTranscript lays out a session's messages, in time order: the
// results of tool calls joined to their calls (by call id, within a
// thread), each subagent's messages in a thread placed in the main thread
// where the subagent started.
func buildTranscript(ref SessionRef, msgs []transcriptRow) *Transcript {
	type result struct {
		output  string
		chars   int64
		isError bool
	}
	results := map[[2]string]result{}
	for _, m := range msgs {
		if m.role == "assistant" {
			continue
		}
		for _, t := range m.tools {
			if t.CallID != "" {
				results[[2]string{m.agentID, t.CallID}] = result{t.Output, t.OutputChars, t.IsError}
			}
		}
	}
	tr := &Transcript{Session: ref}
	threads := map[string]*Thread{}
	var order []string // subagents, in the order they started
	var starts []time.Time
	for _, m := range msgs {
		th := &tr.Main
		if m.agentID != "" {
			if th = threads[m.agentID]; th == nil {
				th = &Thread{AgentID: m.agentID, AgentType: m.agentType}
				threads[m.agentID] = th
				order = append(order, m.agentID)
				starts = append(starts, m.ts)
			}
		}
		e, ok := entryOf(m)
		if !ok {
			continue
		}
		for _, t := range m.tools {
			if m.role != "assistant" || t.Name == "" {
				continue
			}
			// A cut input is no longer JSON: it is kept as a string.
			c := ToolCall{Name: t.Name, Input: rawJSON(excerpt.PrefixRunes(t.Input, MaxToolInput))}
			if r, ok := results[[2]string{m.agentID, t.CallID}]; ok && t.CallID != "" {
				c.Output, c.OutputChars, c.IsError = excerpt.PrefixRunes(r.output, MaxToolOutput), r.chars, r.isError
			}
			e.Calls = append(e.Calls, c)
			tr.Calls++
		}
		if e.Kind == EntryReply && e.Text == "" && e.Thinking == "" && len(e.Calls) == 0 {
			continue
		}
		if e.Kind == EntryCompaction && m.ctype == "compact_summary" {
			// The summary joins the boundary it follows.
			e.Summary, e.Text = e.Text, ""
			if n := len(th.Entries); n > 0 && th.Entries[n-1].Kind == EntryCompaction && th.Entries[n-1].Summary == "" {
				th.Entries[n-1].Summary = e.Summary
				continue
			}
		}
		switch e.Kind {
		case EntryPrompt:
			tr.Prompts++
		case EntryReply:
			tr.Replies++
		}
		th.Entries = append(th.Entries, e)
	}
	// Each subagent goes where it started among the main thread's entries.
	var main []Entry
	k := 0
	for _, e := range tr.Main.Entries {
		for k < len(order) && !e.TS.IsZero() && starts[k].Before(e.TS) {
			main = append(main, Entry{Kind: EntrySubagent, TS: starts[k], Thread: threads[order[k]]})
			k++
		}
		main = append(main, e)
	}
	for ; k < len(order); k++ {
		main = append(main, Entry{Kind: EntrySubagent, TS: starts[k], Thread: threads[order[k]]})
	}
	tr.Main.Entries, tr.Subagents = main, len(order)
	return tr
}

// entryOf is the entry a message makes; false for a message that has no
// entry of its own (a tool result, shown with its call).
func entryOf(m transcriptRow) (Entry, bool) {
	// Texts keep their lines; the blank lines around them are dropped.
	e := Entry{TS: m.ts, Role: m.role, Type: m.ctype, Model: m.model, Text: strings.Trim(m.text, "\r\n"),
		Thinking: strings.Trim(m.thinking, "\r\n")}
	switch {
	case m.ctype == "compact_boundary" || m.ctype == "compact_summary":
		e.Kind = EntryCompaction
	case m.role == "user" && (m.ctype == "text" || m.ctype == "command"):
		e.Kind = EntryPrompt
	case m.role == "assistant" && m.ctype != "error":
		e.Kind = EntryReply
		if m.ctype == "thinking" && e.Thinking == "" {
			e.Thinking, e.Text = e.Text, ""
		}
	case m.role == "tool" || m.ctype == "tool_result":
		return e, false
	default:
		if e.Text == "" {
			return e, false
		}
		e.Kind = EntryNote
	}
	return e, true
}

// ExportMessages writes a session's messages as canonical NDJSON records
// (kind message, schema.Version), in time order, as they are in the lake:
// scrubbed text stays scrubbed.
func (d *DB) ExportMessages(ctx context.Context, ref SessionRef, w io.Writer) error {
	messages, _, err := d.sessionViews(ctx, ref)
	if err != nil {
		return err
	}
	q := `SELECT id, platform, session_id, coalesce(parent_id, ''), ts, coalesce(ts_precision, ''), coalesce(role, ''),
  coalesce(content_type, ''), coalesce(native_type, ''), coalesce(native_id, ''), coalesce(request_id, ''),
  coalesce(title, ''), coalesce(text, ''), coalesce(thinking, ''),
  [{'name': coalesce(t.name, ''), 'call_id': coalesce(t.call_id, ''), 'input': coalesce(t.input, ''),
    'output': coalesce(t.output, ''), 'chars': 0, 'err': coalesce(t.is_error, false)} FOR t IN coalesce(tools, [])],
  coalesce(model, ''), coalesce(input_tokens, 0), coalesce(output_tokens, 0), coalesce(cache_creation_tokens, 0),
  coalesce(cache_creation_1h_tokens, 0), coalesce(cache_read_tokens, 0),
  coalesce(agent_id, ''), coalesce(agent_type, ''), coalesce(sidechain, false),
  coalesce(cwd, ''), coalesce(git_branch, ''), coalesce(project, ''), coalesce("user", ''), coalesce(machine, ''),
  coalesce(files, []), coalesce(completeness, ''), coalesce(source_path, ''), coalesce(source_line, 0),
  coalesce(source_key, ''), coalesce(source_offset, 0), coalesce(adapter, ''), coalesce(adapter_version, ''),
  ingested_at, coalesce(meta, '')
FROM ` + messages + `
WHERE platform = $1 AND session_id = $2
ORDER BY ts NULLS FIRST, source_path, source_line, source_offset, id`
	rows, err := d.db.QueryContext(ctx, q, ref.Platform, ref.SessionID)
	if err != nil {
		return sqlErr(err)
	}
	defer rows.Close()
	enc := schema.NewEncoder(w)
	for rows.Next() {
		r := schema.New(schema.KindMessage)
		var ts, ingested sql.NullTime
		var tools toolList
		var u schema.Usage
		var ag schema.Agent
		var src schema.Source
		var ad schema.Adapter
		var meta string
		if err := rows.Scan(&r.ID, &r.Platform, &r.SessionID, &r.ParentID, &ts, &r.TSPrecision, &r.Role,
			&r.ContentType, &r.NativeType, &r.NativeID, &r.RequestID, &r.Title, &r.Text, &r.Thinking, &tools,
			&r.Model, &u.Input, &u.Output, &u.CacheCreation, &u.CacheCreation1h, &u.CacheRead,
			&ag.ID, &ag.Type, &ag.Sidechain, &r.Cwd, &r.GitBranch, &r.Project, &r.User, &r.Machine,
			(*stringList)(&r.Files), &r.Completeness, &src.Path, &src.Line, &src.Key, &src.Offset, &ad.Name, &ad.Version,
			&ingested, &meta); err != nil {
			return sqlErr(err)
		}
		r.TS, r.IngestedAt = utc(ts), utc(ingested)
		for _, t := range tools {
			r.Tools = append(r.Tools, schema.Tool{Name: t.Name, CallID: t.CallID, Input: rawJSON(t.Input), Output: t.Output, IsError: t.IsError})
		}
		if !u.IsZero() {
			r.Usage = &u
		}
		if ag != (schema.Agent{}) {
			r.Agent = &ag
		}
		if src != (schema.Source{}) {
			r.Source = &src
		}
		if ad != (schema.Adapter{}) {
			r.Adapter = &ad
		}
		if meta != "" && json.Valid([]byte(meta)) {
			r.Meta = json.RawMessage(meta)
		}
		if len(r.Files) == 0 {
			r.Files = nil
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return sqlErr(err)
	}
	return enc.Flush()
}

package cline

import (
	"cmp"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/schema"
)

// orphanState carries a ui file read as the messages of its task (no api
// history beside it) from row to row.
type orphanState struct {
	pending []request // requests whose answer has not been seen yet
	held    *heldRow  // the last row, held until the next shows whether it was superseded
}

// heldRow is a row's raw record and message, not emitted yet.
type heldRow struct {
	raw, msg *schema.Record
	row      uiRow
	reqs     []request // the requests the message took
	parent   string    // the last message id before it
}

// orphanRow handles one row of an orphan ui file. A partial row (a message
// still streaming when the file was written) that the next row completes is
// kept raw only, so its text is not counted twice.
func (t *task) orphanRow(o *orphanState, i int, row *uiRow, raw *schema.Record) error {
	if h := o.held; h != nil {
		if h.msg != nil && h.row.Partial && h.row.Type == row.Type && h.row.Say == row.Say && h.row.Ask == row.Ask &&
			strings.HasPrefix(row.Text, h.row.Text) {
			h.msg = nil
			t.lastID = h.parent
			o.pending = append(h.reqs, o.pending...)
		}
		if err := t.emit(h.raw, h.msg); err != nil {
			return err
		}
	}
	h := &heldRow{raw: raw, row: *row, parent: t.lastID}
	h.msg, h.reqs = t.uiMessage(o, i, row, raw)
	o.held = h
	return nil
}

// flush emits the held row; requests no message took count in the session.
func (o *orphanState) flush(t *task) error {
	if h := o.held; h != nil {
		o.held = nil
		if err := t.emit(h.raw, h.msg); err != nil {
			return err
		}
	}
	for _, r := range o.pending {
		t.loose.Add(&r.usage)
	}
	o.pending = nil
	// The requests were attached here; the api history has none to take.
	t.ui.reqs, t.ui.loose = nil, nil
	return nil
}

// uiTool is the JSON text of a say/ask "tool" row.
type uiTool struct {
	Tool string `json:"tool"`
	Path string `json:"path"`
}

// uiMessage makes the message of an orphan ui row, or nil for rows that
// are not messages (api_req_started, checkpoints, progress, empty asks).
func (t *task) uiMessage(o *orphanState, i int, row *uiRow, raw *schema.Record) (*schema.Record, []request) {
	var rec *schema.Record
	mk := func(role schema.Role, ct schema.ContentType) {
		rec = t.message(raw, t.msgID(uiFile, strconv.Itoa(i)))
		rec.Role, rec.ContentType = role, ct
		rec.Completeness = schema.CompletePartial
	}
	text := strings.TrimSpace(row.Text)
	switch {
	case userRow(i, row):
		mk(schema.RoleUser, schema.ContentText)
		rec.Text = text
		if t.firstMsg == "" {
			t.firstMsg = text
		}
	case row.Say == "text" || row.Say == "completion_result":
		if text == "" {
			return nil, nil
		}
		mk(schema.RoleAssistant, schema.ContentText)
		rec.Text = text
	case row.Say == "reasoning":
		mk(schema.RoleAssistant, schema.ContentThinking)
		rec.Thinking = cmp.Or(text, strings.TrimSpace(row.Reasoning))
	case row.Say == "tool" || row.Ask == "tool":
		mk(schema.RoleAssistant, schema.ContentToolUse)
		var tl uiTool
		input := json.RawMessage(nil)
		if in, _, err := extract.RawJSON([]byte(text)); err == nil {
			input = in
			lenientUnmarshal(input, &tl)
		}
		rec.Tools = []schema.Tool{{Name: cmp.Or(tl.Tool, "tool"), Input: input}}
		if tl.Path != "" && fileTools[tl.Tool] {
			rec.Files = []string{resolve(t.cwd, tl.Path)}
		}
	case row.Ask == "command" || row.Say == "command":
		mk(schema.RoleAssistant, schema.ContentToolUse)
		in := jsontext.AppendString([]byte(`{"command":`), text)
		rec.Tools = []schema.Tool{{Name: "execute_command", Input: append(in, '}')}}
	case row.Say == "command_output":
		mk(schema.RoleTool, schema.ContentToolResult)
		rec.Tools = []schema.Tool{{Name: "execute_command", Output: row.Text}}
	case row.Ask == "followup":
		var q struct {
			Question string `json:"question"`
		}
		if lenientUnmarshal([]byte(text), &q) != nil || q.Question == "" {
			q.Question = text
		}
		if q.Question == "" {
			return nil, nil
		}
		mk(schema.RoleAssistant, schema.ContentText)
		rec.Text = q.Question
	case row.Say == "error" || row.Ask == "api_req_failed" || row.Say == "diff_error":
		mk(schema.RoleSystem, schema.ContentError)
		rec.Text = text
	default:
		return nil, nil
	}
	var taken []request
	if rec.Role == schema.RoleAssistant {
		if row.Index != nil {
			// The rows of one response share the index: pos-normalize
			// merges them into one message.
			rec.NativeID = uiFile + "@" + strconv.Itoa(*row.Index)
		}
		var mi modelInfo
		if row.ModelInfo != nil {
			mi = *row.ModelInfo
		}
		if len(o.pending) > 0 {
			taken, o.pending = o.pending, nil
			var meta messageMeta
			addRequests(rec, &meta, &mi, taken)
			meta.Provider, meta.Mode = mi.ProviderID, mi.Mode
			rec.Meta = t.marshal(meta)
		}
		t.settleModel(rec, mi)
	}
	t.lastID = rec.ID
	return rec, taken
}

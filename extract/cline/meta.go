package cline

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/schema"
)

// taskMeta is task_metadata.json.
type taskMeta struct {
	FilesInContext []struct {
		Path         string `json:"path"`
		RecordState  string `json:"record_state"`
		RecordSource string `json:"record_source"`
	} `json:"files_in_context"`
	ModelUsage []struct {
		TS       json.RawMessage `json:"ts"`
		ModelID  string          `json:"model_id"`
		Provider string          `json:"model_provider_id"`
		Mode     string          `json:"mode"`
	} `json:"model_usage"`
	EnvironmentHistory []struct {
		OSName       string `json:"os_name"`
		HostName     string `json:"host_name"`
		HostVersion  string `json:"host_version"`
		ClineVersion string `json:"cline_version"`
		Version      string `json:"extension_version"`
	} `json:"environment_history"`
}

// maxMeta bounds task_metadata.json, which is read whole.
const maxMeta = 64 << 20

// readMeta reads task_metadata.json: one raw record for the whole object.
func (t *task) readMeta(s *source) error {
	s.consumed = s.fp.Size
	if s.fp.Size > maxMeta {
		return t.skip(s, s.name, fmt.Errorf("%d bytes is over the %d-byte limit", s.fp.Size, maxMeta))
	}
	b, err := io.ReadAll(s.section())
	if err != nil {
		return &extract.ReadError{Path: s.path, Err: err}
	}
	// The file as one element: a byte order mark and the blanks around
	// the value are not part of it.
	body := bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	e := elem{off: int64(len(b) - len(trimmed))}
	body = bytes.TrimRight(trimmed, " \t\r\n")
	if len(body) > 0 {
		e.raw, e.rep, e.bad = extract.RawJSON(body)
	}
	if len(body) == 0 || e.bad != nil {
		var v json.RawMessage
		if err := json.NewDecoder(bytes.NewReader(extract.RawLine(body))).Decode(&v); len(body) == 0 || truncated(err) {
			s.consumed = 0 // being written
			if t.r.opt.Stats != nil {
				t.r.opt.Stats.Partial.Add(1)
			}
			return nil
		}
	}
	rec, err := t.element(s, s.name, e)
	if rec == nil {
		return err
	}
	rec.NativeType = "task_metadata"
	rec.TS, rec.TSPrecision = s.fp.Mtime, schema.PrecisionFileMtime
	lenientUnmarshal(rec.Raw, &t.meta) // another shape is kept raw only
	return t.emit(rec)
}

// sessionMeta is the session record's platform metadata.
type sessionMeta struct {
	Fork           string        `json:"fork,omitempty"`      // cline | roo-code | kilo-code
	Extension      string        `json:"extension,omitempty"` // the VS Code extension id
	Host           string        `json:"host,omitempty"`      // the editor's folder (Code, Cursor …)
	HostName       string        `json:"host_name,omitempty"`
	HostVersion    string        `json:"host_version,omitempty"`
	Version        string        `json:"version,omitempty"` // the extension's version
	OS             string        `json:"os,omitempty"`
	Model          string        `json:"model,omitempty"` // the latest model in use
	Provider       string        `json:"model_provider,omitempty"`
	Mode           string        `json:"mode,omitempty"` // the latest mode: plan | act …
	Modes          []string      `json:"modes,omitempty"`
	Models         []string      `json:"models,omitempty"`
	Cost           *float64      `json:"cost,omitempty"` // the task's total, every request included
	Requests       int           `json:"api_requests,omitempty"`
	Unattributed   *schema.Usage `json:"unattributed_usage,omitempty"` // requests no message took
	FilesInContext []string      `json:"files_in_context,omitempty"`   // task_metadata.json's, resolved
	UIOnly         bool          `json:"ui_only,omitempty"`            // no api history: messages from the ui rows
}

// session emits the task's session record.
func (t *task) session() error {
	rec := t.base(schema.KindSession)
	rec.ID = schema.SessionRecordID(platform, t.id)
	// The session's time is its last activity: its last message, or a later
	// ui row (the user resuming or closing it).
	rec.TS, rec.TSPrecision = t.lastTS, schema.PrecisionExact
	if t.uiLast.After(rec.TS) {
		rec.TS = t.uiLast
	}
	if rec.TS.IsZero() {
		rec.TS, rec.TSPrecision = t.mtime, schema.PrecisionFileMtime
	}
	rec.Cwd = t.cwd
	rec.Source = &schema.Source{Path: t.dir, Mtime: t.mtime}
	rec.Completeness = schema.CompleteFull
	if t.orphan {
		rec.Completeness = schema.CompletePartial
	}
	// Cline names a task by the text the user gave it: the title is its
	// first line, a title from the prompt, cut after pos-scrub
	// (excerpt.Finish).
	rec.Title = excerpt.Source(cmp.Or(t.ui.task, t.firstMsg))
	rec.Session = &schema.Session{}
	if rec.Title != "" {
		rec.Session.TitleSource = schema.TitlePrompt
	}
	meta := sessionMeta{Fork: t.fork, Extension: t.ext, Host: t.host, Requests: t.requests, Models: t.models, Modes: t.modes, UIOnly: t.orphan}
	if env := t.meta.EnvironmentHistory; len(env) > 0 {
		e := env[len(env)-1]
		meta.HostName, meta.HostVersion, meta.OS = e.HostName, e.HostVersion, e.OSName
		meta.Version = cmp.Or(e.ClineVersion, e.Version)
		if meta.Fork == "" && e.ClineVersion != "" {
			meta.Fork = "cline"
		}
	}
	if mu := t.meta.ModelUsage; len(mu) > 0 {
		u := mu[len(mu)-1]
		meta.Model, meta.Provider, meta.Mode = u.ModelID, u.Provider, u.Mode
		for _, u := range mu {
			t.noteModel(modelInfo{ModelID: u.ModelID, Mode: u.Mode})
		}
		meta.Models, meta.Modes = t.models, t.modes
	}
	if t.costSeen || t.cost != 0 {
		c := math.Round(t.cost*1e9) / 1e9
		meta.Cost = &c
	}
	if !t.loose.IsZero() {
		u := t.loose
		meta.Unattributed = &u
	}
	for _, f := range t.meta.FilesInContext {
		if p := resolve(t.cwd, f.Path); p != "" && !slices.Contains(rec.Files, p) {
			rec.Files = append(rec.Files, p)
		}
	}
	meta.FilesInContext = rec.Files // also in the meta: the sessions table has no files column
	rec.Meta = t.marshal(meta)
	return t.r.out(rec)
}

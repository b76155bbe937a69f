package aider

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
)

// rawBlock is the raw record of a markdown block.
type rawBlock struct {
	Block     string `json:"block"`
	Line      int64  `json:"line"`
	Lines     int    `json:"lines"`
	MD        string `json:"md"` // the block's lines, verbatim
	Continued bool   `json:"continued,omitempty"`
	InputTS   string `json:"input_ts,omitempty"`   // the input history entry that timed a prompt
	InputLine int64  `json:"input_line,omitempty"` // … and its line there
}

// pendingReply is a reply held until the status lines after it, which
// carry its token counts, have been read.
type pendingReply struct{ msg *schema.Record }

// pendingCall is a call of the last reply, waiting for its result.
type pendingCall struct {
	id, name, file string
	done           bool
}

func (r *run) block(fs *fileState, b *block) error {
	switch b.kind {
	case blockHeader:
		return r.header(fs, b)
	case blockStatus:
		return r.status(fs, b)
	}
	if err := r.flushPending(fs, nil); err != nil {
		return err
	}
	if b.kind == blockUser {
		return r.prompt(fs, b)
	}
	return r.reply(fs, b)
}

// ensureSession names the session of blocks before any header (a file
// whose start was cut): the file itself.
func (fs *fileState) ensureSession() {
	if fs.st.session == "" {
		fs.st.session = schema.ID(platform, fs.key(), "")
	}
}

// key names the history file in session ids: its project directory's name
// and its own. The directories above are left out, so that a project moved
// or cloned elsewhere keeps its session ids.
func (fs *fileState) key() string {
	return filepath.Base(fs.dir) + "/" + filepath.Base(fs.path)
}

// now is the time of a block that has none of its own: the last time
// known, else the file's modification time.
func (fs *fileState) now() (time.Time, schema.Precision) {
	if fs.st.lastTS.IsZero() {
		return fs.mtime, schema.PrecisionFileMtime
	}
	return fs.st.lastTS, schema.PrecisionDerived
}

func (r *run) rawJSON(b *block, in *inputEntry) json.RawMessage {
	rb := rawBlock{Block: b.kind, Line: b.line, Lines: len(b.lines), MD: b.text(), Continued: b.continued}
	if in != nil {
		rb.InputTS, rb.InputLine = in.ts, in.line
	}
	return marshal(rb)
}

// message starts the message made from a block, with the block as raw.
func (r *run) message(fs *fileState, b *block, in *inputEntry) *schema.Record {
	rec := schema.New(schema.KindMessage)
	rec.Platform, rec.SessionID = platform, fs.st.session
	rec.ID = schema.ID(platform, fs.st.session, "block", strconv.FormatInt(b.offset, 10))
	rec.NativeType, rec.NativeID = b.kind, "line:"+strconv.FormatInt(b.line, 10)
	rec.TS, rec.TSPrecision = fs.now()
	rec.Project, rec.Cwd = fs.dir, fs.dir
	rec.Completeness = schema.CompleteFull
	rec.Source = &schema.Source{Path: fs.path, Line: b.line, Offset: b.offset, Mtime: fs.mtime}
	r.opt.Stamp(rec, platform, AdapterVersion)
	rec.Raw = r.rawJSON(b, in)
	return rec
}

// emitMessage emits a message's raw record and then the message.
func (r *run) emitMessage(rec *schema.Record) error {
	if !r.opt.Since.IsZero() && rec.TS.Before(r.opt.Since) {
		return nil
	}
	if err := r.emit(schema.SplitRaw(rec)); err != nil {
		return err
	}
	rec.Raw = nil
	return r.emit(rec)
}

func (r *run) header(fs *fileState, b *block) error {
	if err := r.flushPending(fs, nil); err != nil {
		return err
	}
	if err := r.sessionHint(fs); err != nil {
		return err
	}
	// The next run may resume here: the state before the header.
	fs.snap, fs.resume, fs.resumeLines = fs.st, b.offset, b.line-1
	text := strings.TrimSpace(strings.TrimPrefix(strings.TrimSuffix(b.lines[0], "\r"), headerPrefix))
	prev := fs.st
	fs.st = state{inputAfter: prev.inputAfter, inputTS: prev.inputTS, header: text, headerLine: b.line}
	if text == prev.header {
		fs.st.dup = prev.dup + 1 // two sessions started within one second
	}
	parts := []string{platform, fs.key(), text}
	if fs.st.dup > 0 {
		parts = append(parts, strconv.Itoa(fs.st.dup))
	}
	fs.st.session = schema.ID(parts...)
	rec := schema.New(schema.KindRaw)
	if t, err := time.ParseInLocation(headerLayout, text, r.loc); err == nil {
		fs.st.start = t.UTC()
		fs.st.lastTS, fs.st.lastPrec = fs.st.start, schema.PrecisionExact
		rec.TS, rec.TSPrecision = fs.st.start, schema.PrecisionExact
	} else {
		fs.st.lastTS, fs.st.lastPrec = prev.lastTS, prev.lastPrec
		rec.TS, rec.TSPrecision = fs.now()
	}
	if !r.opt.Since.IsZero() && rec.TS.Before(r.opt.Since) {
		return nil
	}
	rec.Platform, rec.SessionID = platform, fs.st.session
	rec.NativeType, rec.NativeID = b.kind, "line:"+strconv.FormatInt(b.line, 10)
	rec.Project = fs.dir
	rec.Completeness = schema.CompleteFull
	rec.Source = &schema.Source{Path: fs.path, Line: b.line, Offset: b.offset, Mtime: fs.mtime}
	r.opt.Stamp(rec, platform, AdapterVersion)
	rec.Raw = r.rawJSON(b, nil)
	rec.ID = schema.RawID(rec)
	return r.emit(rec)
}

var commandRE = regexp.MustCompile(`^/[a-z][a-z0-9-]*$`)

// fileCommands are the commands whose arguments are files.
var fileCommands = map[string]bool{"/add": true, "/drop": true, "/read-only": true, "/read": true}

func (r *run) prompt(fs *fileState, b *block) error {
	fs.ensureSession()
	// A prompt opens an exchange: the next run resumes here.
	fs.snap, fs.resume, fs.resumeLines = fs.st, b.offset, b.line-1
	lines := make([]string, len(b.lines))
	for i, l := range b.lines {
		lines[i] = promptLine(l)
	}
	var in *inputEntry
	if e, ok := fs.input.match(promptKey(lines), fs.st.inputAfter, fs.st.start); ok && !b.continued {
		in = &e
		fs.st.inputAfter, fs.st.inputTS = e.t, e.ts
		fs.st.lastTS, fs.st.lastPrec = e.t.UTC(), schema.PrecisionExact
	}
	rec := r.message(fs, b, in)
	if in != nil {
		rec.TS, rec.TSPrecision = in.t.UTC(), schema.PrecisionExact
	}
	rec.Role, rec.ContentType = schema.RoleUser, schema.ContentText
	rec.Text = strings.Join(trimBlankLines(lines), "\n")
	if fields := strings.Fields(rec.Text); len(fields) > 0 && commandRE.MatchString(fields[0]) {
		rec.ContentType = schema.ContentCommand
		if fileCommands[fields[0]] {
			rec.Files = fields[1:]
		}
	}
	return r.emitMessage(rec)
}

func (r *run) reply(fs *fileState, b *block) error {
	fs.ensureSession()
	rec := r.message(fs, b, nil)
	lines := make([]string, len(b.lines))
	for i, l := range b.lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	rec.Role, rec.Model = schema.RoleAssistant, fs.st.model
	rec.Text = strings.Join(lines, "\n")
	fs.calls = fs.calls[:0]
	for i, c := range replyCalls(lines, fs.st.editFormat) {
		id := fmt.Sprintf("aider-%d-%d", b.line, i+1)
		rec.Tools = append(rec.Tools, schema.Tool{Name: c.name, CallID: id, Input: marshal(c.input)})
		if c.file != "" && !slices.Contains(rec.Files, c.file) {
			rec.Files = append(rec.Files, c.file)
		}
		fs.calls = append(fs.calls, pendingCall{id: id, name: c.name, file: c.file})
	}
	rec.ContentType = schema.AssistantContentType(rec.Text, "", len(rec.Tools))
	fs.pending = &pendingReply{msg: rec}
	return nil
}

// flushPending emits the held reply, with the token counts of the status
// lines after it when there are some.
func (r *run) flushPending(fs *fileState, t *tokens) error {
	p := fs.pending
	if p == nil {
		return nil
	}
	fs.pending = nil
	if t != nil {
		u := t.usage
		p.msg.Usage = &u
		if t.hasCost {
			p.msg.Meta = marshal(map[string]float64{"cost_usd": t.cost})
		}
	}
	return r.emitMessage(p.msg)
}

func (r *run) status(fs *fileState, b *block) error {
	fs.ensureSession()
	var (
		texts   []string
		toks    []tokens
		results []schema.Tool
		files   []string
		commits []string
	)
	for _, l := range b.lines {
		s := statusText(l)
		texts = append(texts, s)
		if t, ok := parseTokens(s); ok {
			toks = append(toks, t)
			if t.hasSession {
				fs.st.cost = strconv.FormatFloat(t.sessionCost, 'f', -1, 64)
			}
			continue
		}
		if m := modelRE.FindStringSubmatch(s); m != nil {
			fs.st.model = m[1]
			if m[2] != "" {
				fs.st.editFormat = m[2]
			}
			continue
		}
		if m := versionRE.FindStringSubmatch(s); m != nil {
			fs.st.version = m[1]
			continue
		}
		if m := commitRE.FindStringSubmatch(s); m != nil {
			commits = append(commits, m[1])
			continue
		}
		if m := appliedRE.FindStringSubmatch(s); m != nil {
			file := strings.TrimSpace(m[1])
			if !slices.Contains(files, file) {
				files = append(files, file)
			}
			for i := range fs.calls {
				c := &fs.calls[i]
				if !c.done && c.file == file && c.name != "shell" {
					c.done = true
					results = append(results, schema.Tool{Name: c.name, CallID: c.id, Output: s})
				}
			}
		}
	}
	// The first usage report is the held reply's.
	var first *tokens
	if fs.pending != nil && len(toks) > 0 {
		first, toks = &toks[0], toks[1:]
	}
	if err := r.flushPending(fs, first); err != nil {
		return err
	}
	rec := r.message(fs, b, nil)
	rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentMeta
	if len(results) > 0 {
		rec.Role, rec.ContentType, rec.Tools = schema.RoleTool, schema.ContentToolResult, results
	}
	rec.Text = strings.Join(trimBlankLines(texts), "\n")
	rec.Files = files
	meta := map[string]any{}
	if len(commits) > 0 {
		meta["commits"] = commits
	}
	if len(toks) > 0 {
		// Usage no reply claims: an empty or interrupted answer.
		var u schema.Usage
		cost, hasCost := 0.0, false
		for _, t := range toks {
			u.Add(&t.usage)
			if t.hasCost {
				cost, hasCost = cost+t.cost, true
			}
		}
		rec.Usage, rec.Model = &u, fs.st.model
		if hasCost {
			meta["cost_usd"] = cost
		}
	}
	if len(meta) > 0 {
		rec.Meta = marshal(meta)
	}
	return r.emitMessage(rec)
}

// sessionHint emits what the history says about the current session beyond
// its messages: Aider's version, the model and edit format, the session's
// cost so far.
func (r *run) sessionHint(fs *fileState) error {
	st := &fs.st
	if st.session == "" {
		return nil
	}
	rec := extract.SessionRecord(platform, st.session, st.start, fs.mtime)
	rec.Project, rec.Cwd = fs.dir, fs.dir
	rec.Completeness = schema.CompleteFull
	rec.Source = &schema.Source{Path: fs.path, Line: st.headerLine, Mtime: fs.mtime}
	r.opt.Stamp(rec, platform, AdapterVersion)
	meta := map[string]any{}
	for k, v := range map[string]string{"aider_version": st.version, "model": st.model, "edit_format": st.editFormat, "started_at": st.header} {
		if v != "" {
			meta[k] = v
		}
	}
	if c, err := strconv.ParseFloat(st.cost, 64); err == nil {
		meta["cost_usd"] = c
	}
	if len(meta) > 0 {
		rec.Meta = marshal(meta)
	}
	return r.emit(rec)
}

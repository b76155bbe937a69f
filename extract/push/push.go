// Package push reads the event logs that agents append themselves: the
// push protocol (PROTOCOL.md). An agent, a hook or a one-line shell command
// appends one JSON object per line to a .jsonl file under a push folder
// (~/.local/share/pos/push by default); pos-extract --platform push reads
// every .jsonl file under it.
//
// Every line becomes one raw record. An "exchange" event becomes a user
// prompt and an assistant answer (so pos-normalize derives one exchange),
// a "message" event one message, a "context_reset" a compact boundary, a
// "session_resume" a marker in the new session and a link to the previous
// one in the session's metadata; "session" events name a session. Lines of
// another protocol version or of a type this version does not know are kept
// raw.
package push

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/push/about"
	"github.com/pos-lake/pos/schema"
)

// AdapterVersion changes when the records this adapter emits change.
const AdapterVersion = "1"

const platform = about.Name

// resumeWindow bounds how far back a run resumes to re-read an open
// exchange of a session that interleaves with others in one file.
const resumeWindow = 4 << 20

// Adapter is the push-protocol extractor.
type Adapter struct{}

func init() { extract.Register(Adapter{}) }

// Platform implements extract.Adapter.
func (Adapter) Platform() string { return platform }

// DefaultDir is the push folder: $POS_PUSH_DIR, else
// $XDG_DATA_HOME/pos/push, else ~/.local/share/pos/push ("" without a
// home directory).
func DefaultDir(opt *extract.Options) string {
	if d := opt.Getenv("POS_PUSH_DIR"); d != "" {
		return d
	}
	if d := opt.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "pos", "push")
	}
	return opt.InHome(".local", "share", "pos", "push")
}

// Locations implements extract.Adapter: the roots given, else the push
// folder.
func (Adapter) Locations(opt extract.Options) []string {
	if len(opt.Roots) > 0 {
		return append([]string(nil), opt.Roots...)
	}
	if d := DefaultDir(&opt); d != "" {
		return []string{d}
	}
	return nil
}

// Extract implements extract.Adapter.
func (a Adapter) Extract(ctx context.Context, opt extract.Options, emit extract.Emit) error {
	opt.Platform = Adapter{}.Platform() // keys this adapter's watermarks
	match := extract.Match{
		Name: func(path string) bool { return strings.HasSuffix(path, ".jsonl") },
		Content: func(path string) (bool, error) {
			// A root the user names may hold other tools' JSONL: take a
			// file there only if it starts with a push event.
			if len(opt.Roots) == 0 {
				return true, nil
			}
			return isPushLog(&opt, path)
		},
	}
	return opt.ReadChanged(ctx, a.Locations(opt), match, emit, func(ctx context.Context, sf extract.SourceFile, src *extract.Source, emit extract.Emit) error {
		r := &run{opt: &opt, emit: emit}
		return r.file(ctx, sf, src)
	})
}

type run struct {
	opt  *extract.Options
	emit extract.Emit
}

// sessionInfo is what events say about a session beyond its messages.
type sessionInfo struct {
	Title    string `json:"title,omitempty"`
	Agent    string `json:"agent,omitempty"`
	Previous string `json:"previous_session,omitempty"`
	Project  string `json:"project,omitempty"`
	Cwd      string `json:"cwd,omitempty"`
	Branch   string `json:"git_branch,omitempty"`

	lastTS time.Time
	seen   bool // an event of it was read in this run
}

func (s *sessionInfo) empty() bool {
	return s.Title == "" && s.Agent == "" && s.Previous == "" && s.Project == "" && s.Cwd == "" && s.Branch == ""
}

type promptAt struct{ offset, lines int64 }

type fileState struct {
	path, base, stem string
	mtime            time.Time
	lastTS           time.Time
	sessions         map[string]*sessionInfo
	order            []string            // sessions in first-seen order
	prompts          map[string]promptAt // the last prompt of each session
}

// maxContextSessions bounds the session metadata a checkpoint carries.
const maxContextSessions = 256

func (fs *fileState) session(id string) *sessionInfo {
	s, ok := fs.sessions[id]
	if !ok {
		s = &sessionInfo{}
		fs.sessions[id] = s
		fs.order = append(fs.order, id)
	}
	return s
}

func (r *run) file(ctx context.Context, sf extract.SourceFile, src *extract.Source) error {
	fp, plan := src.FP, src.Plan
	base := filepath.Base(sf.Path)
	fs := &fileState{path: sf.Path, base: base, stem: strings.TrimSuffix(base, ".jsonl"), mtime: fp.Mtime,
		sessions: map[string]*sessionInfo{}, prompts: map[string]promptAt{}}
	if c := plan.Context; c != nil {
		if t, err := time.Parse(time.RFC3339Nano, c["ts"]); err == nil {
			fs.lastTS = t.UTC()
		}
		var saved map[string]*sessionInfo
		if json.Unmarshal([]byte(c["sessions"]), &saved) == nil {
			ids := make([]string, 0, len(saved))
			for id := range saved {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			for _, id := range ids {
				*fs.session(id) = *saved[id]
			}
		}
	}
	lr, err := src.LineReader(nil, schema.NewLineReaderAt, plan.Start, plan.Lines)
	if err != nil {
		return err
	}
	var (
		ev  event
		bad string
		ok  bool
	)
	read, err := r.opt.ReadLines(ctx, lr, sf.Path, false, extract.LineFuncs{
		Parse: func(raw []byte) error {
			var perr error
			ev, bad, perr = parseEvent(raw)
			if perr != nil && !errors.Is(perr, errNotObject) {
				return perr
			}
			ok = perr == nil
			return nil
		},
		Line: func(raw []byte, ln extract.Line) error {
			return r.line(fs, &ev, ok, bad, rawLine(raw), ln)
		},
		RawOnly: func(raw []byte, ln extract.Line) error {
			return r.line(fs, &event{}, false, "", rawLine(raw), ln)
		},
	})
	if err != nil {
		return err
	}
	consumed, consumedLines := read.Consumed, read.Lines
	if err := r.sessionHints(fs); err != nil {
		return err
	}
	if r.opt.State == nil {
		return nil
	}
	resume, resumeLines := consumed, consumedLines
	for _, p := range fs.prompts {
		if p.offset < resume && consumed-p.offset <= resumeWindow {
			resume, resumeLines = p.offset, p.lines
		}
	}
	return src.EmitCheckpoint(r.emit, platform, consumed, resume, resumeLines, fs.context())
}

// context is what the next run needs: the last time (for events without
// one) and the sessions' metadata, so that their records are re-emitted
// whole.
func (fs *fileState) context() map[string]string {
	c := map[string]string{}
	if !fs.lastTS.IsZero() {
		c["ts"] = fs.lastTS.Format(time.RFC3339Nano)
	}
	keep := map[string]*sessionInfo{}
	for i := len(fs.order) - 1; i >= 0 && len(keep) < maxContextSessions; i-- {
		if s := fs.sessions[fs.order[i]]; !s.empty() {
			keep[fs.order[i]] = s
		}
	}
	if len(keep) > 0 {
		b, _ := json.Marshal(keep)
		c["sessions"] = string(b)
	}
	return c
}

// rawLine is the line as the raw record: the JSON value without the
// blanks around it, valid UTF-8, on one line.
func rawLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if !utf8.Valid(b) {
		b = bytes.ToValidUTF8(b, []byte("\uFFFD"))
	} else {
		b = bytes.Clone(b)
	}
	if bytes.IndexByte(b, '\r') >= 0 {
		var buf bytes.Buffer
		if json.Compact(&buf, b) == nil {
			return buf.Bytes()
		}
	}
	return b
}

// line turns one event into its raw record and the messages made from it.
func (r *run) line(fs *fileState, e *event, object bool, bad string, raw []byte, eln extract.Line) error {
	ln := eln.Line
	ts, prec := fs.lastTS, schema.PrecisionDerived
	if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(e.Timestamp)); err == nil {
		ts, prec = t.UTC(), schema.PrecisionExact
	} else if ts.IsZero() {
		ts, prec = fs.mtime, schema.PrecisionFileMtime
	}
	if prec == schema.PrecisionExact {
		fs.lastTS = ts
	}
	session := e.SessionID
	if e.Type == "session_resume" && e.NewSession != "" {
		session = e.NewSession
	}
	if session == "" {
		session = fs.stem
	}
	v, vok := e.version()
	known := object && vok && v == Version
	rawRec := schema.New(schema.KindRaw)
	rawRec.Platform, rawRec.SessionID = platform, session
	rawRec.TS, rawRec.TSPrecision = ts, prec
	rawRec.NativeType, rawRec.NativeID = e.Type, e.ID
	rawRec.Project = e.Project
	rawRec.Completeness = schema.CompleteFull
	rawRec.Source = &schema.Source{Path: fs.path, Line: ln.Num, Offset: ln.Offset, Mtime: fs.mtime, Altered: eln.Altered()}
	r.opt.Stamp(rawRec, platform, AdapterVersion)
	rawRec.Raw = raw
	rawRec.ID = schema.RawID(rawRec)
	var msgs []*schema.Record
	if known {
		msgs = r.messages(fs, e, session, rawRec, ln, bad)
	}
	if !r.opt.Since.IsZero() && ts.Before(r.opt.Since) {
		return nil
	}
	if err := r.emit(rawRec); err != nil {
		return err
	}
	for _, m := range msgs {
		if err := r.emit(m); err != nil {
			return err
		}
	}
	return nil
}

// validUTF8 makes JSON text taken from an event valid UTF-8, as the raw
// line is: the record's JSON members are written as they are, and a
// reader of the stream replaces invalid bytes in them, so a record with
// them would not read back as it was written.
func validUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	return bytes.ToValidUTF8(b, []byte("\uFFFD"))
}

// sessionHints emits one session record for each session seen in this
// run that events said something about.
func (r *run) sessionHints(fs *fileState) error {
	for _, id := range fs.order {
		s := fs.sessions[id]
		if !s.seen || s.empty() {
			continue
		}
		rec := extract.SessionRecord(platform, id, s.lastTS, fs.mtime)
		rec.Title = s.Title
		rec.Project, rec.Cwd, rec.GitBranch = s.Project, s.Cwd, s.Branch
		if s.Previous != "" {
			rec.ParentID = schema.SessionRecordID(platform, s.Previous)
		}
		rec.Source = &schema.Source{Path: fs.path, Mtime: fs.mtime}
		r.opt.Stamp(rec, platform, AdapterVersion)
		extra := map[string]any{}
		if s.Agent != "" {
			extra["agent"] = s.Agent
		}
		if s.Previous != "" {
			extra["previous_session"] = s.Previous
		}
		rec.Meta = meta(nil, extra)
		if err := r.emit(rec); err != nil {
			return fmt.Errorf("%s: %w", fs.path, err)
		}
	}
	return nil
}

// isPushLog reports whether a file's first event has the shape of the push
// protocol: a known event type and a timestamp, and none of the members
// that mark another tool's transcript (Claude Code's sessionId and uuid,
// Codex's payload).
func isPushLog(opt *extract.Options, path string) (bool, error) {
	probe, err := opt.FirstObject(path)
	if err != nil {
		return false, err
	}
	var typ string
	json.Unmarshal(probe["type"], &typ)
	_, ts := probe["timestamp"]
	_, sid := probe["sessionId"]
	_, uuid := probe["uuid"]
	_, payload := probe["payload"]
	switch typ {
	case "exchange", "message", "context_reset", "session_resume", "session":
		return ts && !sid && !uuid && !payload, nil
	}
	return false, nil
}

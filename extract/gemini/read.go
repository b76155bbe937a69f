package gemini

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/schema"
)

// maxJSONFile bounds a legacy single-object chat file, which is read whole.
const maxJSONFile = 512 << 20

// fileState is what is known about the chat file being read.
type fileState struct {
	path    string
	mtime   time.Time
	meta    metadata // merged: first line, then every $set
	own     string   // the conversation's session id
	session string   // the session its records belong to: the parent's for a subagent
	agent   *schema.Agent
	project string
	cwd     string
	lastTS  time.Time
	prev    string // the previous message's id
}

func newFileState(path string, mtime time.Time) *fileState {
	return &fileState{path: path, mtime: mtime}
}

// learn merges metadata, later values winning (Gemini CLI's $set).
func (fs *fileState) learn(m *metadata) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&fs.meta.SessionID, m.SessionID)
	set(&fs.meta.ProjectHash, m.ProjectHash)
	if fs.meta.StartTime == "" {
		fs.meta.StartTime = m.StartTime
	}
	set(&fs.meta.LastUpdated, m.LastUpdated)
	set(&fs.meta.Summary, m.Summary)
	set(&fs.meta.Kind, m.Kind)
	if len(m.Directories) > 0 {
		fs.meta.Directories = m.Directories
	}
}

// settle decides the session, thread and project once the metadata is
// known. Its error is SkipFile's, for a project marker that cannot be read.
func (r *run) settle(fs *fileState) error {
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(fs.path), ".jsonl"), ".json")
	fs.own = cmp.Or(fs.meta.SessionID, base)
	fs.session = fs.own
	parent := parentOf(fs.path)
	if parent != "" || (fs.meta.Kind != "" && fs.meta.Kind != "main") {
		// A subagent's chat: a sidechain thread of its parent's session.
		fs.agent = &schema.Agent{ID: fs.own, Type: cmp.Or(fs.meta.Kind, "subagent"), Sidechain: true}
		fs.session = cmp.Or(parent, fs.own)
	}
	root, err := r.projectRoot(fs.path)
	if root != "" {
		fs.project, fs.cwd = root, root
	} else {
		fs.project = fs.meta.ProjectHash
	}
	return err
}

func (fs *fileState) context() map[string]string {
	c := map[string]string{
		"session_id": fs.meta.SessionID, "project_hash": fs.meta.ProjectHash, "start_time": fs.meta.StartTime,
		"last_updated": fs.meta.LastUpdated, "summary": fs.meta.Summary, "kind": fs.meta.Kind,
		"directories": strings.Join(fs.meta.Directories, "\n"),
	}
	maps.DeleteFunc(c, func(_, v string) bool { return v == "" }) // an empty value is no value
	return c
}

func (fs *fileState) restore(c map[string]string) {
	if c == nil {
		return
	}
	fs.meta = metadata{SessionID: c["session_id"], ProjectHash: c["project_hash"], StartTime: c["start_time"],
		LastUpdated: c["last_updated"], Summary: c["summary"], Kind: c["kind"]}
	if d := c["directories"]; d != "" {
		fs.meta.Directories = strings.Split(d, "\n")
	}
}

// newRec starts a raw record of the file.
func (r *run) newRec(fs *fileState, raw []byte, src *schema.Source, ts string) *schema.Record {
	rec := schema.New(schema.KindRaw)
	rec.Platform = platform
	rec.Source = src
	rec.Completeness = schema.CompleteFull
	rec.Raw = raw
	r.opt.Stamp(rec, platform, AdapterVersion)
	if t, ok := extract.ParseTime(ts); ok {
		rec.TS, rec.TSPrecision = t, schema.PrecisionExact
		if t.After(fs.lastTS) {
			fs.lastTS = t
		}
	} else if !fs.lastTS.IsZero() {
		rec.TS, rec.TSPrecision = fs.lastTS, schema.PrecisionDerived
	} else {
		rec.TS, rec.TSPrecision = fs.mtime, schema.PrecisionFileMtime
	}
	return rec
}

// message emits the message a MessageRecord makes (after its raw record
// when raw is set), or the raw record alone for a record that is no message
// pos knows.
func (r *run) message(fs *fileState, m *record, raw []byte, src *schema.Source) error {
	rec := r.newRec(fs, raw, src, m.Timestamp)
	if !fill(rec, m) {
		if raw == nil {
			return nil
		}
		return r.out(fs, rec)
	}
	rec.Kind = schema.KindMessage
	rec.ID = schema.ID(platform, fs.own, m.ID)
	rec.ParentID = fs.prev
	fs.prev = rec.ID
	rec.Agent = fs.agent
	rec.Cwd = fs.cwd
	return r.out(fs, rec)
}

// out completes a record and emits it: a message after its native
// record's raw record.
func (r *run) out(fs *fileState, rec *schema.Record) error {
	rec.SessionID, rec.Project = fs.session, fs.project
	if rec.Kind == schema.KindRaw && rec.ID == "" {
		rec.ID = schema.RawID(rec)
	}
	return r.opt.EmitRecord(r.emit, rec)
}

// sessionRecord emits what Gemini CLI knows about a main conversation
// beyond its messages: its summary (the title) and metadata.
func (r *run) sessionRecord(fs *fileState) error {
	if fs.agent != nil || fs.meta.SessionID == "" {
		return nil
	}
	rec := schema.New(schema.KindSession)
	rec.ID = schema.SessionRecordID(platform, fs.session)
	rec.Platform, rec.SessionID = platform, fs.session
	if t, ok := extract.ParseTime(fs.meta.LastUpdated); ok {
		rec.TS, rec.TSPrecision = t, schema.PrecisionExact
	} else if !fs.lastTS.IsZero() {
		rec.TS, rec.TSPrecision = fs.lastTS, schema.PrecisionExact
	} else {
		rec.TS, rec.TSPrecision = fs.mtime, schema.PrecisionFileMtime
	}
	rec.Project, rec.Cwd = fs.project, fs.cwd
	rec.Title = fs.meta.Summary
	rec.Session = &schema.Session{}
	if rec.Title != "" {
		rec.Session.TitleSource = schema.TitlePlatform
	}
	meta := map[string]any{"project_hash": fs.meta.ProjectHash}
	if fs.meta.Kind != "" {
		meta["kind"] = fs.meta.Kind
	}
	if fs.meta.StartTime != "" {
		meta["start_time"] = fs.meta.StartTime
	}
	if len(fs.meta.Directories) > 0 {
		meta["directories"] = fs.meta.Directories
	}
	rec.Meta, _ = json.Marshal(meta) // sorted keys
	rec.Completeness = schema.CompleteFull
	rec.Source = &schema.Source{Path: fs.path, Mtime: fs.mtime}
	r.opt.Stamp(rec, platform, AdapterVersion)
	return r.emit(rec)
}

// json reads a legacy single-object chat file, whole: its metadata as one
// raw record (key "$", the messages left out), then each message as a raw
// record (key "messages[i]") followed by the message made from it.
func (r *run) json(ctx context.Context, sf extract.SourceFile, src *extract.Source) error {
	b, err := io.ReadAll(io.LimitReader(src.File, maxJSONFile+1))
	if err != nil {
		return &extract.ReadError{Path: sf.Path, Err: err}
	}
	if r.opt.Stats != nil {
		r.opt.Stats.Bytes.Add(int64(len(b)))
	}
	fs := newFileState(sf.Path, src.FP.Mtime)
	checkpoint := func() error {
		if r.opt.State == nil {
			return nil
		}
		// Gemini CLI rewrites the file whole: the next run reads it from
		// the start when it changes.
		return src.EmitCheckpoint(r.emit, platform, int64(len(b)), 0, 0, nil)
	}
	if len(b) > maxJSONFile {
		if err := r.opt.Skip(&schema.BadInput{Path: sf.Path, Err: fmt.Errorf("chat file over the %d-byte limit", maxJSONFile)}); err != nil {
			return err
		}
		return checkpoint()
	}
	if err := r.conversation(ctx, fs, b); err != nil {
		return err
	}
	return checkpoint()
}

// conversation emits the records of a legacy chat file's bytes.
//
// The file is made strict as a raw line is (extract.RawText): what that
// changed is named once for the file and marked on each of its records.
// A message nested too deeply to keep as JSON is kept as a JSON string,
// and one that is no object is kept raw only; both are named.
func (r *run) conversation(ctx context.Context, fs *fileState, b []byte) error {
	b, rep := extract.RawText(bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF")))
	top, elems, err := splitConversation(b, false)
	if err != nil && jsontext.Deeper(b, 9000) {
		// Nested beyond encoding/json's limit: read again token by token.
		top, elems, err = splitConversation(b, true)
	}
	if err != nil {
		return r.opt.Skip(&schema.BadInput{Path: fs.path, Err: err})
	}
	if rep != 0 {
		if err := r.opt.Warn(&schema.BadInput{Path: fs.path, Err: errors.New("kept with repairs: " + rep.Describe())}); err != nil {
			return err
		}
	}
	altered := rep.String()
	var m record
	if err := parseRecord(top, &m); err == nil {
		fs.learn(&m.metadata)
	}
	if err := r.settle(fs); err != nil {
		return err
	}
	if r.opt.Stats != nil {
		r.opt.Stats.Lines.Add(int64(1 + len(elems)))
	}
	topRaw, topRep, _ := extract.RawJSON(top)
	topRec := r.newRec(fs, topRaw, &schema.Source{Path: fs.path, Key: "$", Mtime: fs.mtime, Altered: (rep | topRep).String()}, fs.meta.LastUpdated)
	topRec.NativeType, topRec.NativeID = "conversation", fs.meta.SessionID
	if err := r.out(fs, topRec); err != nil {
		return err
	}
	for i, e := range elems {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := "messages[" + strconv.Itoa(i) + "]"
		raw, erep, err := extract.RawJSON(e.raw)
		if err != nil {
			if err := r.opt.Skip(&schema.BadInput{Path: fs.path, Key: key, Err: err}); err != nil {
				return err
			}
			continue
		}
		src := &schema.Source{Path: fs.path, Key: key, Offset: e.off, Mtime: fs.mtime, Altered: altered}
		var odd, perr error
		if raw[0] == '{' {
			odd, perr = parseRecordOdd(raw, &m)
		}
		if raw[0] != '{' || perr != nil {
			// Kept in the raw layer only, and named.
			src.Altered = (rep | erep).String()
			why := extract.RawOnlyReason(raw, erep)
			if raw[0] == '{' {
				why = errors.New("not a message of this format: kept in the raw layer only")
			}
			if err := r.out(fs, r.newRec(fs, raw, src, "")); err != nil {
				return err
			}
			if err := r.opt.Skip(&schema.BadInput{Path: fs.path, Key: key, Err: why}); err != nil {
				return err
			}
			continue
		}
		warn := m.check(odd)
		if err := r.message(fs, &m, raw, src); err != nil {
			return err
		}
		if warn != nil {
			if err := r.opt.Warn(&schema.BadInput{Path: fs.path, Key: key, Err: warn}); err != nil {
				return err
			}
		}
	}
	return r.sessionRecord(fs)
}

type element struct {
	off int64
	raw []byte
}

// splitConversation splits a ConversationRecord into its members other
// than messages (as one compact object, keys sorted) and its messages with
// their byte offsets.
//
// With tokens, values are read token by token, without encoding/json's
// limit of 10,000 levels of nesting (and much slower).
func splitConversation(b []byte, tokens bool) ([]byte, []element, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	decode := func(v *json.RawMessage) error {
		if !tokens {
			return dec.Decode(v)
		}
		return tokenValue(dec, b, v)
	}
	bad := func(err error) ([]byte, []element, error) { return nil, nil, fmt.Errorf("invalid JSON: %v", err) }
	if t, err := dec.Token(); err != nil {
		return bad(err)
	} else if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	rest := map[string]json.RawMessage{}
	var elems []element
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		key, _ := t.(string)
		if key != "messages" {
			var v json.RawMessage
			if err := decode(&v); err != nil {
				return bad(err)
			}
			rest[key] = v
			continue
		}
		t, err = dec.Token()
		if err != nil {
			return bad(err)
		}
		if d, ok := t.(json.Delim); !ok || d != '[' {
			return nil, nil, errors.New(`"messages" is not an array`)
		}
		for dec.More() {
			off := dec.InputOffset()
			for off < int64(len(b)) && (b[off] == ',' || b[off] == ' ' || b[off] == '\n' || b[off] == '\r' || b[off] == '\t') {
				off++
			}
			var v json.RawMessage
			if err := decode(&v); err != nil {
				return bad(err)
			}
			elems = append(elems, element{off: off, raw: v})
		}
		if _, err := dec.Token(); err != nil {
			return bad(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return bad(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, errors.New("invalid JSON: data after the conversation object")
	}
	top, err := json.Marshal(rest)
	if err != nil {
		return nil, nil, err
	}
	return extract.OneLine(top), elems, nil
}

// tokenValue reads the next value of dec, whose input is b, token by token
// (no limit on nesting) and sets v to its text.
func tokenValue(dec *json.Decoder, b []byte, v *json.RawMessage) error {
	// The value starts after the blanks and the separator that precede it.
	start := dec.InputOffset()
	for start < int64(len(b)) && (b[start] == ',' || b[start] == ':' || b[start] == ' ' || b[start] == '\n' || b[start] == '\r' || b[start] == '\t') {
		start++
	}
	if err := jsontext.SkipValue(dec); err != nil {
		return err
	}
	*v = b[start:dec.InputOffset()]
	return nil
}

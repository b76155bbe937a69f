package cline

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/schema"
)

// run emits the records of one task folder.
type run struct {
	opt  *extract.Options
	emit extract.Emit
}

// source is one file of a task, open for reading.
type source struct {
	name, path string
	f          *os.File
	ra         io.ReaderAt // what is read: f, or the bytes of a test
	fp         extract.Fingerprint
	consumed   int64 // bytes read whole, for the checkpoint
}

// section reads the file as it was when opened: a file rewritten while it
// is read ends where it ended then.
func (s *source) section() io.Reader {
	if s.ra != nil {
		return io.NewSectionReader(s.ra, 0, s.fp.Size)
	}
	return io.NewSectionReader(s.f, 0, s.fp.Size)
}

// task is the state of one task folder being read.
type task struct {
	r   *run
	dir string
	id  string // the task id: the folder's name
	origin
	srcs  map[string]*source
	cwd   string
	mtime time.Time // the newest file's mtime
	meta  taskMeta
	ui    uiInfo
	buf   bytes.Buffer

	orphan    bool // no api history: the ui rows are the messages
	firstMsg  string
	lastID    string
	lastTS    time.Time // the last api message's
	uiLast    time.Time // the last ui row's
	models    []string
	modes     []string
	lastModel modelInfo
	cost      float64
	costSeen  bool
	requests  int
	loose     schema.Usage // tokens of requests no message took
}

func (r *run) out(rec *schema.Record) error {
	if r.opt.Stats != nil {
		r.opt.Stats.Records.Add(1)
	}
	return r.emit(rec)
}

// task reads a task folder: the whole folder when any of its files is new
// or changed since the watermarks, nothing otherwise. A task is one unit
// because a message's time and tokens come from another file than its
// text.
func (r *run) task(ctx context.Context, td taskDir) error {
	t := &task{r: r, dir: td.dir, id: filepath.Base(td.dir), origin: originOf(td.dir), srcs: map[string]*source{}}
	defer func() {
		for _, s := range t.srcs {
			s.f.Close()
		}
	}()
	changed := false
	var unchanged []string
	for _, name := range []string{metaFile, uiFile, apiFile} {
		p := filepath.Join(td.dir, name)
		if !td.files[name] {
			// A file the walk did not find: the root named one file of the
			// task, and its siblings are read with it. One that is not a
			// regular file (a link, a pipe) is reported by OpenSource.
			if _, err := os.Lstat(p); err != nil {
				continue
			}
		}
		s, err := r.opt.OpenSource(p)
		if err != nil {
			return err
		}
		if s == nil {
			if r.opt.IsFile(p) {
				unchanged = append(unchanged, name) // read only if another file changed
			}
			continue
		}
		changed = true
		t.srcs[name] = &source{name: name, path: p, f: s.File, fp: s.FP}
	}
	if !changed {
		return nil
	}
	for _, name := range unchanged {
		p := filepath.Join(td.dir, name)
		f, fi, err := r.opt.OpenFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			if err := r.opt.SkipFile(p, err); err != nil {
				return err
			}
			continue
		}
		t.srcs[name] = &source{name: name, path: p, f: f, fp: extract.Stat(fi)}
		if st := r.opt.Stats; st != nil {
			// OpenSource counted it unchanged (unless it is older than
			// --since); it is read after all.
			if r.opt.Since.IsZero() || !fi.ModTime().Before(r.opt.Since) {
				st.Unchanged.Add(-1)
			}
			st.Files.Add(1)
		}
	}
	for _, s := range t.srcs {
		if s.fp.Mtime.After(t.mtime) {
			t.mtime = s.fp.Mtime
		}
		if r.opt.Stats != nil {
			r.opt.Stats.Bytes.Add(s.fp.Size)
		}
	}
	if s := t.srcs[metaFile]; s != nil {
		if err := t.readMeta(s); err != nil {
			return err
		}
	}
	api, ui := t.srcs[apiFile], t.srcs[uiFile]
	t.orphan = true
	if api != nil {
		var n int
		n, t.cwd = peek(api, 4)
		t.orphan = n == 0
	}
	if ui != nil {
		if t.cwd == "" {
			_, t.cwd = peek(ui, 32)
		}
		if err := t.readUI(ctx, ui); err != nil {
			return err
		}
	}
	if api != nil {
		if err := t.readAPI(ctx, api); err != nil {
			return err
		}
	}
	if err := t.session(); err != nil {
		return err
	}
	if r.opt.State == nil {
		return nil
	}
	for _, name := range []string{metaFile, uiFile, apiFile} {
		s := t.srcs[name]
		if s == nil {
			continue
		}
		cp, err := extract.Checkpoint(platform, s.f, s.path, s.fp, s.consumed, 0, 0, nil)
		if err != nil {
			return err
		}
		if err := r.out(cp); err != nil {
			return err
		}
	}
	return nil
}

// peek reads the first n elements of a history file (fewer when it is
// shorter): how many there are, and the working directory Cline names in
// the environment details it sends with the first request.
func peek(s *source, n int) (count int, cwd string) {
	elements(s.section(), func(e elem) error {
		if e.i >= n {
			return errStop
		}
		count++
		raw := e.raw
		if cwd != "" || !bytes.Contains(raw, []byte("Directory (")) {
			return nil
		}
		var m struct {
			Content json.RawMessage `json:"content"`
			Text    string          `json:"text"`
		}
		if lenientUnmarshal(raw, &m) != nil {
			return nil
		}
		cwd = findCwd(m.Text)
		for _, b := range blocks(m.Content) {
			cwd = cmp.Or(cwd, findCwd(b.Text))
		}
		return nil
	})
	return count, cwd
}

// base returns a record of the task with the fields every record carries.
func (t *task) base(kind schema.Kind) *schema.Record {
	rec := schema.New(kind)
	rec.Platform, rec.SessionID = platform, t.id
	rec.Project = t.cwd
	rec.User, rec.Machine = t.r.opt.User, t.r.opt.Machine
	rec.Adapter = &schema.Adapter{Name: platform, Version: AdapterVersion}
	if t.r.opt.Now != nil {
		rec.IngestedAt = t.r.opt.Now()
	}
	return rec
}

// element takes an element of a history file (k: its key): a raw record of it, or nil
// when it is not JSON (reported). An element that is not an object (or
// too deep to keep as JSON) is named, for it makes no message, as is an
// element kept with repairs.
func (t *task) element(s *source, k string, e elem) (*schema.Record, error) {
	if e.bad != nil {
		return nil, t.skip(s, k, e.bad)
	}
	if t.r.opt.Stats != nil {
		t.r.opt.Stats.Lines.Add(1)
	}
	var err error
	switch {
	case e.raw[0] != '{':
		why := extract.RawOnlyReason(e.raw, e.rep)
		if rest := e.rep &^ schema.RepairText; rest != 0 {
			why = fmt.Errorf("%w; %s", why, rest.Describe())
		}
		err = t.skip(s, k, why)
	case e.rep != 0:
		err = t.r.opt.Warn(&schema.BadInput{Path: s.path, Key: k, Err: errors.New("kept with repairs: " + e.rep.Describe())})
	}
	if err != nil {
		return nil, err
	}
	rec := t.base(schema.KindRaw)
	rec.Source = &schema.Source{Path: s.path, Key: k, Offset: e.off, Mtime: s.fp.Mtime, Altered: e.rep.String()}
	rec.Completeness = schema.CompleteFull
	rec.Raw = e.raw
	return rec, nil
}

func key(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }

// message returns a message record made from the native record raw.
func (t *task) message(raw *schema.Record, id string) *schema.Record {
	m := t.base(schema.KindMessage)
	m.ID = id
	m.Source = raw.Source
	m.TS, m.TSPrecision = raw.TS, raw.TSPrecision
	m.NativeID = raw.Source.Key
	m.Cwd = t.cwd
	m.Completeness = raw.Completeness
	m.ParentID = t.lastID
	return m
}

// emit writes a raw record and the messages made from it, dropping those
// older than --since.
func (t *task) emit(raw *schema.Record, msgs ...*schema.Record) error {
	since := t.r.opt.Since
	if raw.ID == "" {
		raw.ID = schema.RawID(raw)
	}
	if !since.IsZero() && raw.TS.Before(since) {
		return nil
	}
	if err := t.r.out(raw); err != nil {
		return err
	}
	for _, m := range msgs {
		if m == nil {
			continue
		}
		if err := t.r.out(m); err != nil {
			return err
		}
	}
	return nil
}

// skip reports a bad native record.
func (t *task) skip(s *source, k string, err error) error {
	return t.r.opt.Skip(&schema.BadInput{Path: s.path, Key: k, Err: err})
}

// endArray handles how a walk over a history file ended: a file cut short
// (being written) is left for a later run, broken JSON is reported once.
func (t *task) endArray(s *source, end int64, err error) error {
	s.consumed = s.fp.Size
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, errNotArray):
		return t.skip(s, s.name, err)
	}
	var ee *elemError
	if !errors.As(err, &ee) {
		return err // the emitter's error
	}
	if truncated(ee.Err) {
		s.consumed = end
		if t.r.opt.Stats != nil {
			t.r.opt.Stats.Partial.Add(1)
		}
		return nil
	}
	k := s.name
	if ee.Index >= 0 {
		k = key(s.name, ee.Index)
	}
	return t.skip(s, k, fmt.Errorf("invalid JSON, the rest of the file is unreadable: %v", ee.Err))
}

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

// uiRow is one element of ui_messages.json (a ClineMessage).
type uiRow struct {
	TS        json.RawMessage `json:"ts"`
	Type      string          `json:"type"`
	Say       string          `json:"say"`
	Ask       string          `json:"ask"`
	Text      string          `json:"text"`
	Reasoning string          `json:"reasoning"`
	Partial   bool            `json:"partial"`
	ModelInfo *modelInfo      `json:"modelInfo"`
	Index     *int            `json:"conversationHistoryIndex"`
}

// apiReqInfo is the JSON text of a say:"api_req_started" row.
type apiReqInfo struct {
	TokensIn    float64  `json:"tokensIn"`
	TokensOut   float64  `json:"tokensOut"`
	CacheWrites float64  `json:"cacheWrites"`
	CacheReads  float64  `json:"cacheReads"`
	Cost        *float64 `json:"cost"`
}

// clamp reads token counts below zero as zero, and reports whether there
// was one.
func (a *apiReqInfo) clamp() bool {
	neg := false
	for _, n := range []*float64{&a.TokensIn, &a.TokensOut, &a.CacheWrites, &a.CacheReads} {
		if *n < 0 {
			*n, neg = 0, true
		}
	}
	return neg
}

// request is one API request the ui recorded.
type request struct {
	index   int // conversationHistoryIndex: the api history's length-1 when it started
	ts      time.Time
	usage   schema.Usage
	cost    float64
	hasCost bool
	model   modelInfo
}

// uiInfo is what the ui rows tell about the api history, by api index.
type uiInfo struct {
	reqTS  map[int]time.Time // when the request that sent message j started
	rowTS  map[int]time.Time // the first other row after message j-1
	userTS map[int]time.Time // the user's own rows (the task, feedback) after message j-1
	models map[int]modelInfo // the model of the rows streaming message j
	reqs   []request         // with an index, sorted by it
	loose  []request         // without an index, by time
	task   string            // the task as the user typed it
}

func minTS(m map[int]time.Time, k int, ts time.Time) {
	if old, ok := m[k]; !ok || ts.Before(old) {
		m[k] = ts
	}
}

// userRow tells the rows that hold what the user typed.
func userRow(i int, row *uiRow) bool {
	return (i == 0 && row.Type == "say" && (row.Say == "text" || row.Say == "task")) || row.Say == "user_feedback"
}

// readUI reads ui_messages.json: a raw record per row, what the rows tell
// about the api history, and, for an orphan ui file, messages.
func (t *task) readUI(ctx context.Context, s *source) error {
	ui := &t.ui
	ui.reqTS, ui.rowTS, ui.userTS, ui.models = map[int]time.Time{}, map[int]time.Time{}, map[int]time.Time{}, map[int]modelInfo{}
	o := &orphanState{}
	var last time.Time
	end, err := elements(s.section(), func(e elem) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := t.element(s, key(s.name, e.i), e)
		if rec == nil {
			return err
		}
		i, raw := e.i, e.raw
		var (
			row   uiRow
			info  apiReqInfo
			isObj bool
			warns []string // what of the row could not be read
		)
		if len(raw) > 0 && raw[0] == '{' {
			odd, err := lenientOdd(raw, &row)
			isObj = err == nil
			if odd != nil {
				warns = append(warns, odd.Error())
			}
		}
		ts, ok := epochMS(row.TS)
		if v := bytes.TrimSpace(row.TS); !ok && len(v) > 0 && string(v) != "null" {
			warns = append(warns, fmt.Sprintf("ts %s is not a time: not read", v))
		}
		if row.Say == "api_req_started" {
			if odd, _ := lenientOdd([]byte(row.Text), &info); odd != nil {
				warns = append(warns, "text: "+odd.Error())
			}
			if info.clamp() {
				warns = append(warns, "text: a token count below zero: read as 0")
			}
		}
		if len(warns) > 0 {
			w := &schema.BadInput{Path: s.path, Key: key(s.name, i), Err: errors.New(strings.Join(warns, "; "))}
			if err := t.r.opt.Warn(w); err != nil {
				return err
			}
		}
		switch {
		case ok:
			rec.TS, rec.TSPrecision, last = ts, schema.PrecisionExact, ts
			if ts.After(t.uiLast) {
				t.uiLast = ts
			}
		case !last.IsZero():
			rec.TS, rec.TSPrecision = last, schema.PrecisionDerived
		default:
			rec.TS, rec.TSPrecision = s.fp.Mtime, schema.PrecisionFileMtime
		}
		if !isObj {
			// Another shape: kept raw only, in its place.
			if t.orphan {
				return t.orphanRow(o, i, &uiRow{}, rec)
			}
			return t.emit(rec)
		}
		rec.NativeType = strings.Trim(row.Type+"/"+cmp.Or(row.Say, row.Ask), "/")
		if row.Partial {
			rec.Completeness = schema.CompletePartial
		}
		c, j := -2, -1
		if row.Index != nil {
			c = *row.Index
			j = c + 1
		}
		switch {
		case row.Say == "api_req_started":
			req := request{index: c, ts: rec.TS, usage: schema.Usage{
				Input: int64(info.TokensIn), Output: int64(info.TokensOut),
				CacheCreation: int64(info.CacheWrites), CacheRead: int64(info.CacheReads),
			}}
			if info.Cost != nil {
				req.cost, req.hasCost = *info.Cost, true
				t.cost += *info.Cost
				t.costSeen = true
			}
			if row.ModelInfo != nil {
				req.model = *row.ModelInfo
			}
			t.requests++
			if row.Index != nil {
				ui.reqs = append(ui.reqs, req)
				if _, ok := ui.reqTS[j]; !ok {
					ui.reqTS[j] = rec.TS
				}
			} else {
				ui.loose = append(ui.loose, req)
			}
			if t.orphan {
				o.pending = append(o.pending, req)
			}
		case userRow(i, &row):
			if i == 0 {
				ui.task = row.Text
			}
			if row.Index != nil {
				minTS(ui.userTS, j, rec.TS)
			}
		case row.Index != nil:
			minTS(ui.rowTS, j, rec.TS)
			if _, ok := ui.models[j]; !ok && row.ModelInfo != nil && row.ModelInfo.ModelID != "" {
				ui.models[j] = *row.ModelInfo
			}
		}
		if !t.orphan {
			return t.emit(rec)
		}
		return t.orphanRow(o, i, &row, rec)
	})
	if t.orphan {
		if err := o.flush(t); err != nil {
			return err
		}
	}
	slices.SortStableFunc(ui.reqs, func(a, b request) int { return cmp.Compare(a.index, b.index) })
	slices.SortStableFunc(ui.loose, func(a, b request) int { return a.ts.Compare(b.ts) })
	return t.endArray(s, end, err)
}

// readAPI reads api_conversation_history.json: a raw record per element and
// the messages made from it.
func (t *task) readAPI(ctx context.Context, s *source) error {
	var calls []pendingTool      // the last assistant message's tool calls
	names := map[string]string{} // tool_use id -> tool name
	reqPos, loosePos := 0, 0
	end, err := elements(s.section(), func(e elem) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := t.element(s, key(s.name, e.i), e)
		if rec == nil {
			return err
		}
		i, raw := e.i, e.raw
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
	if mi.ModelID == "" {
		mi = t.modelAt(rec.TS)
	}
	if mi.ModelID == "" {
		mi = t.lastModel // the model in use goes on until another is named
	}
	t.lastModel = mi
	rec.Model = mi.ModelID
	meta.Provider, meta.Mode = mi.ProviderID, mi.Mode
	rec.Meta = t.marshal(meta)
	t.noteModel(mi)
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

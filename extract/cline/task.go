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
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/internal/watermark"
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
	fp         watermark.Fingerprint
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
		t.srcs[name] = &source{name: name, path: p, f: f, fp: watermark.Stat(fi)}
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
	t.r.opt.Stamp(rec, platform, AdapterVersion)
	return rec
}

// records reads the elements of s's array for fn, checking ctx between
// them: an element that makes no raw record (see element) is passed over,
// and fn is given each other element's raw record, with its index and
// bytes. It returns where the last whole element ends, as elements does.
func (t *task) records(ctx context.Context, s *source, fn func(rec *schema.Record, i int, raw []byte) error) (int64, error) {
	return elements(s.section(), func(e elem) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := t.element(s, key(s.name, e.i), e)
		if rec == nil {
			return err
		}
		return fn(rec, e.i, e.raw)
	})
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

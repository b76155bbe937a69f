// Package aider reads Aider chat histories: the .aider.chat.history.md
// Aider appends to in the git root of each project it runs in, with the
// per-prompt times of the .aider.input.history beside it.
//
// Aider keeps no central index, so only the roots the user names are
// searched (nothing is read without one). Every markdown block — a session
// header, a prompt, a reply, a group of Aider's status lines — becomes one
// raw record whose raw is the JSON object
//
//	{"block":"user","line":15,"lines":1,"md":"#### Fix the bug  "}
//
// ("md" is the block's lines verbatim; a prompt matched with the input
// history also has "input_ts" and "input_line"), followed by the message
// made from it. A header starts a session whose id is derived from the
// file's path (its project directory's name and its own) and the header's
// time.
package aider

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/aider/about"
	"github.com/pos-lake/pos/schema"
)

// AdapterVersion changes when the records this adapter emits change.
const AdapterVersion = "1"

const platform = about.Name

// HistoryFile and InputFile are the names Aider gives its files by default.
const (
	HistoryFile = ".aider.chat.history.md"
	InputFile   = ".aider.input.history"
)

// Adapter is the Aider extractor.
type Adapter struct{}

func init() { extract.Register(Adapter{}) }

// Platform implements extract.Adapter.
func (Adapter) Platform() string { return platform }

// Locations implements extract.Adapter: the roots given, and none by
// default.
func (Adapter) Locations(opt extract.Options) []string {
	return append([]string(nil), opt.Roots...)
}

// Extract implements extract.Adapter.
func (Adapter) Extract(ctx context.Context, opt extract.Options, emit extract.Emit) error {
	opt.Platform = Adapter{}.Platform() // keys this adapter's watermarks
	if len(opt.Roots) == 0 {
		return nil
	}
	// A root that is a file is read whatever its name (a history kept
	// under another name with --chat-history-file).
	given := map[string]bool{}
	for _, r := range opt.Roots {
		if abs, err := filepath.Abs(r); err == nil {
			given[abs] = true
		}
	}
	files, err := opt.Walk(ctx, opt.Roots, extract.Match{Name: func(path string) bool {
		return filepath.Base(path) == HistoryFile || (given[path] && strings.HasSuffix(path, ".md"))
	}})
	if err != nil {
		return err
	}
	loc := location(&opt)
	return opt.ReadSources(ctx, files, emit, func(ctx context.Context, sf extract.SourceFile, src *extract.Source, emit extract.Emit) error {
		r := &run{opt: &opt, emit: emit, loc: loc}
		return r.file(ctx, sf, src)
	})
}

// location is the zone Aider's times are read in: TZ through the options,
// else the process's local zone.
func location(opt *extract.Options) *time.Location {
	if tz := strings.TrimPrefix(opt.Getenv("TZ"), ":"); tz != "" {
		if l, err := time.LoadLocation(tz); err == nil {
			return l
		}
	}
	return time.Local
}

// run reads one history file.
type run struct {
	opt  *extract.Options
	emit extract.Emit
	loc  *time.Location
}

// state is what the reader knows at a point of the file; the checkpoint
// saves it as of the resume point.
type state struct {
	session    string // session id
	header     string // the header's time as written
	headerLine int64
	dup        int       // earlier headers in this file with the same time
	start      time.Time // the header's time
	model      string
	editFormat string
	version    string
	cost       string    // the session's cost so far, as printed
	inputAfter time.Time // prompts match input entries written after this
	inputTS    string    // … which is this entry's time as written
	lastTS     time.Time // the last time known
	lastPrec   schema.Precision
}

func (s *state) context() map[string]string {
	c := map[string]string{
		"session": s.session, "header": s.header, "model": s.model, "edit_format": s.editFormat,
		"version": s.version, "cost": s.cost, "input_ts": s.inputTS, "ts_precision": s.lastPrec,
	}
	if s.dup > 0 {
		c["dup"] = strconv.Itoa(s.dup)
	}
	if s.headerLine > 0 {
		c["header_line"] = strconv.FormatInt(s.headerLine, 10)
	}
	if !s.lastTS.IsZero() {
		c["ts"] = s.lastTS.Format(time.RFC3339Nano)
	}
	return c
}

func (r *run) restore(c map[string]string) state {
	s := state{
		session: c["session"], header: c["header"], model: c["model"], editFormat: c["edit_format"],
		version: c["version"], cost: c["cost"], inputTS: c["input_ts"], lastPrec: c["ts_precision"],
	}
	s.dup, _ = strconv.Atoi(c["dup"])
	s.headerLine, _ = strconv.ParseInt(c["header_line"], 10, 64)
	if t, err := time.ParseInLocation(headerLayout, s.header, r.loc); err == nil {
		s.start = t.UTC()
	}
	if t, err := time.ParseInLocation(inputLayout, s.inputTS, r.loc); err == nil {
		s.inputAfter = t
	}
	if t, err := time.Parse(time.RFC3339Nano, c["ts"]); err == nil {
		s.lastTS = t.UTC()
	}
	return s
}

// fileState is the reading of one file.
type fileState struct {
	path, dir string
	mtime     time.Time
	input     *inputHistory
	st        state
	// the resume point: the start of the last prompt or header, and the
	// state there
	snap                state
	resume, resumeLines int64
	pending             *pendingReply
	calls               []pendingCall // the last reply's calls, for their results
}

func (r *run) file(ctx context.Context, sf extract.SourceFile, src *extract.Source) (err error) {
	fp, plan := src.FP, src.Plan
	fs := &fileState{path: sf.Path, dir: filepath.Dir(sf.Path), mtime: fp.Mtime}
	if plan.Context != nil {
		fs.st = r.restore(plan.Context)
	}
	fs.snap, fs.resume, fs.resumeLines = fs.st, plan.Start, plan.Lines
	input := filepath.Join(fs.dir, InputFile)
	if fs.input, err = readInputHistory(r.opt, input, r.loc, 0); err != nil {
		// Times then come from the headers; the history is still read.
		fs.input = nil
		if err := r.opt.SkipFile(input, err); err != nil {
			return err
		}
	}
	lr, err := src.LineReader(nil, schema.NewLineReaderAt, plan.Start, plan.Lines)
	if err != nil {
		return err
	}
	sp := &splitter{emit: func(b *block) error { return r.block(fs, b) }}
	read, err := r.opt.ReadText(ctx, lr, sf.Path, func(ln schema.Line) error {
		if !ln.Terminated {
			// Aider is still writing this line: the next run reads it.
			if r.opt.Stats != nil {
				r.opt.Stats.Partial.Add(1)
			}
			return extract.StopText
		}
		if r.opt.Stats != nil {
			r.opt.Stats.Lines.Add(1)
		}
		return sp.add(strings.ToValidUTF8(string(ln.Bytes), "\uFFFD"), ln.Num, ln.Offset)
	})
	if err != nil {
		return err
	}
	consumed := read.Consumed
	if err := sp.close(); err != nil {
		return err
	}
	if err := r.flushPending(fs, nil); err != nil {
		return err
	}
	if err := r.sessionHint(fs); err != nil {
		return err
	}
	if r.opt.State == nil {
		return nil
	}
	resume, resumeLines := read.Resume(fs.resume, fs.resumeLines)
	return src.EmitCheckpoint(r.emit, platform, consumed, resume, resumeLines, fs.snap.context())
}

package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/pos-lake/pos/internal/dircache"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

// Options are what every adapter is given.
type Options struct {
	// Roots override the platform's default locations. Each may be a
	// directory (searched recursively) or a single file.
	Roots []string
	// Home is the user's home directory for default locations.
	Home string
	// Env looks up environment variables (CLAUDE_CONFIG_DIR …); nil means
	// none are set. Library code never reads the process environment.
	Env func(string) string
	// Since drops records older than this (zero: keep all) and skips files
	// not modified since.
	Since time.Time
	// State holds the watermarks of earlier runs; nil reads everything.
	State *watermark.State
	// User and Machine are stamped on every record.
	User, Machine string
	// Now is the ingestion clock.
	Now func() time.Time
	// OnSkip is told about every input record that is skipped.
	OnSkip schema.SkipFunc
	// OnWarn is told about every input record that is kept but not as it
	// was: repaired (Source.Altered), or with a field that could not be
	// read (a count that is no number, a time that is no time). Its error
	// stops the run (pos-extract's never does: nothing was skipped).
	OnWarn schema.SkipFunc
	// Stats, if set, is updated as the run goes.
	Stats *Stats
	// Dirs keeps the directories' entries walks read, for the next run in
	// this process (nil: each walk reads every directory).
	Dirs *dircache.Cache
	// Workers is how many files are read at once (0: one per CPU). The
	// output order does not depend on it.
	Workers int
	// Platform is the adapter's platform, which keys its watermarks (the
	// caller of Extract sets it).
	Platform string
	// FollowLinks reads what symbolic links below the roots point to
	// (files, and directories that do not loop). Without it such links are
	// reported as skipped and not read: a link in an agent's folder may
	// point anywhere.
	FollowLinks bool
}

func (o *Options) env(k string) string {
	if o.Env == nil {
		return ""
	}
	return o.Env(k)
}

// Stamp sets on rec what every record of the run carries whatever it was
// made from: the user and machine, the adapter (its platform and version)
// and the ingestion time.
func (o *Options) Stamp(rec *schema.Record, platform, version string) {
	rec.User, rec.Machine = o.User, o.Machine
	rec.Adapter = &schema.Adapter{Name: platform, Version: version}
	if o.Now != nil {
		rec.IngestedAt = o.Now()
	}
}

// WorkerCount is how many files an adapter reads at once: Workers, or one
// per CPU when that is not set.
func (o *Options) WorkerCount() int {
	if o.Workers <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return o.Workers
}

// ParseTime reads an RFC 3339 time as native records write it, in UTC;
// false for "" and for what does not parse.
func ParseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// Getenv returns an environment variable through the options.
func (o *Options) Getenv(k string) string { return o.env(k) }

// InHome is the path elem below the options' home directory (a
// platform's default folder), or "" when the home is not known.
func (o *Options) InHome(elem ...string) string {
	if o.Home == "" {
		return ""
	}
	return filepath.Join(append([]string{o.Home}, elem...)...)
}

// UserConfigDir is the folder applications keep per-user settings in on
// goos, as os.UserConfigDir has it but from the options' home and
// environment: %APPDATA% (else ~/AppData/Roaming) on Windows,
// ~/Library/Application Support on macOS, $XDG_CONFIG_HOME (else ~/.config)
// elsewhere. It is "" when neither is known. Editors of the VS Code family
// keep their User folder there.
func (o *Options) UserConfigDir(goos string) string {
	switch goos {
	case "windows":
		if v := o.env("APPDATA"); v != "" {
			return v
		}
		return o.InHome("AppData", "Roaming")
	case "darwin":
		return o.InHome("Library", "Application Support")
	default:
		if v := o.env("XDG_CONFIG_HOME"); v != "" {
			return v
		}
		return o.InHome(".config")
	}
}

// Skip reports a bad input record; the error it returns stops the run.
func (o *Options) Skip(b *schema.BadInput) error {
	if o.Stats != nil {
		o.Stats.Skipped.Add(1)
	}
	if o.OnSkip == nil {
		return b
	}
	return o.OnSkip(b)
}

// Warn reports an input record that was kept but not as it was (see
// OnWarn); the error it returns stops the run.
func (o *Options) Warn(b *schema.BadInput) error {
	if o.Stats != nil {
		o.Stats.Warned.Add(1)
	}
	if o.OnWarn == nil {
		return nil
	}
	return o.OnWarn(b)
}

// Stats counts what a run did.
type Stats struct {
	Files     atomic.Int64 // files read (wholly or from a watermark)
	Unchanged atomic.Int64 // files skipped because nothing was appended
	Bytes     atomic.Int64 // source bytes read
	Lines     atomic.Int64 // source lines (or native records) read
	Records   atomic.Int64 // records emitted
	Skipped   atomic.Int64 // bad input records skipped
	Warned    atomic.Int64 // input records kept with a warning (repaired, or a field not read)
	Partial   atomic.Int64 // unterminated last lines left for the next run
}

// Emit receives the records an adapter produces, in order.
type Emit func(*schema.Record) error

// SessionRecord starts the session record of session: its id, platform
// and time, which is last, the time of the session's last record, or the
// file's mtime when the session's records carry no time.
func SessionRecord(platform, session string, last, mtime time.Time) *schema.Record {
	rec := schema.New(schema.KindSession)
	rec.ID = schema.SessionRecordID(platform, session)
	rec.Platform, rec.SessionID = platform, session
	rec.TS, rec.TSPrecision = last, schema.PrecisionExact
	if rec.TS.IsZero() {
		rec.TS, rec.TSPrecision = mtime, schema.PrecisionFileMtime
	}
	return rec
}

// EmitRecord hands rec to emit as a line adapter's records go out: not at
// all when it is older than --since, and, when it is not a raw record but
// carries its native record's raw, after that raw record (schema.SplitRaw)
// and without the raw itself, so the raw layer keeps the native record
// once.
func (o *Options) EmitRecord(emit Emit, rec *schema.Record) error {
	if !o.Since.IsZero() && rec.TS.Before(o.Since) {
		return nil
	}
	if rec.Kind != schema.KindRaw && len(rec.Raw) > 0 {
		if err := emit(schema.SplitRaw(rec)); err != nil {
			return err
		}
		rec.Raw = nil
	}
	return emit(rec)
}

// Adapter reads one platform's native storage.
type Adapter interface {
	// Platform is the platform name (schema.Platform…).
	Platform() string
	// Extract emits every record (and one checkpoint per source file) to
	// emit, in a deterministic order.
	Extract(ctx context.Context, opt Options, emit Emit) error
	// Locations are the directories Extract searches with these options
	// (the defaults for the OS, or the roots given), existing or not.
	Locations(opt Options) []string
}

// Checkpoint builds the checkpoint record for a file read up to consumed
// bytes, to be resumed at resume.
func Checkpoint(platform string, f *os.File, path string, fp watermark.Fingerprint, consumed, resume, resumeLines int64, ctx map[string]string) (*schema.Record, error) {
	head, err := watermark.HeadHash(f, consumed)
	if err != nil {
		return nil, &ReadError{Path: path, Err: err}
	}
	r := schema.New(schema.KindCheckpoint)
	r.Platform = platform
	r.Checkpoint = &schema.Checkpoint{
		Platform: platform, Path: path, Size: consumed, Resume: resume, Seen: fp.Size,
		Mtime: fp.Mtime, Inode: fp.Inode, Head: head, Lines: resumeLines, Context: ctx,
	}
	return r, nil
}

// Errorf wraps an error with the file it concerns.
func Errorf(path string, err error) error { return fmt.Errorf("%s: %w", path, err) }

// Unchanged reports whether a file is the one its watermark describes, with
// nothing new (and not older than --since): most files of a home did not
// change since the last run, and a stat tells, without opening them.
// OpenSource passes over such a file; an adapter may pass over it before it
// schedules any work for it (counting it in Stats.Unchanged itself).
func (o *Options) Unchanged(path string) bool {
	if o.State == nil {
		return false
	}
	fi, err := o.stat(path)
	return err == nil && fi.Mode().IsRegular() && o.unchanged(path, fi)
}

// UnchangedFile is Unchanged for a file Walk found, with the walk's stat
// of it when that is the file's own (not a symlink's): a sync of a home
// where little changed stats each file once, not twice, and those stats
// are much of its work. A file that changes after the walk is read by the
// next run; its watermark stays where it was.
func (o *Options) UnchangedFile(f SourceFile) bool {
	if f.Info == nil || !f.Info.Mode().IsRegular() {
		return o.Unchanged(f.Path)
	}
	return o.State != nil && o.unchanged(f.Path, f.Info)
}

func (o *Options) unchanged(path string, fi fs.FileInfo) bool {
	return o.State.Unchanged(o.Platform, path, watermark.Stat(fi)) &&
		(o.Since.IsZero() || !fi.ModTime().Before(o.Since))
}

// Changed returns the files that are not Unchanged, counting the others in
// Stats.Unchanged: for an adapter whose job per file starts with
// OpenSource, so that the files a sync passes over cost it no job.
func (o *Options) Changed(files []SourceFile) []SourceFile {
	if o.State == nil {
		return files
	}
	out := make([]SourceFile, 0, len(files))
	for _, f := range files {
		if !o.UnchangedFile(f) {
			out = append(out, f)
		} else if o.Stats != nil {
			o.Stats.Unchanged.Add(1)
		}
	}
	return out
}

// Source is a source file opened for reading against its watermark.
type Source struct {
	Path string
	File *os.File
	FP   watermark.Fingerprint
	Plan watermark.Plan // where to start; Plan.Skip when there is nothing new
}

// ReadSource is the job of one source file read on its own: it opens path
// with OpenSource and, unless the file is passed over, hands it to read
// and closes it after.
func (o *Options) ReadSource(path string, read func(*Source) error) error {
	src, err := o.OpenSource(path)
	if src == nil || err != nil {
		return err
	}
	defer src.File.Close()
	return read(src)
}

// ReadSources reads files one job each, in parallel and in order (Ordered
// with WorkerCount workers): each file is opened with ReadSource and
// handed to read with the job's emit, which counts the records it passes
// (Counted); what read returns ends the job (FileDone).
func (o *Options) ReadSources(ctx context.Context, files []SourceFile, emit Emit, read func(ctx context.Context, sf SourceFile, src *Source, emit Emit) error) error {
	return Ordered(ctx, o.WorkerCount(), len(files), func(ctx context.Context, i int, emit Emit) error {
		return o.FileDone(o.ReadSource(files[i].Path, func(src *Source) error {
			return read(ctx, files[i], src, o.Counted(emit))
		}))
	}, emit)
}

// ReadChanged reads with ReadSources the files under roots that m matches
// (Walk) and that changed since their watermark (Changed): the whole run
// of an adapter that reads each file on its own.
func (o *Options) ReadChanged(ctx context.Context, roots []string, m Match, emit Emit, read func(ctx context.Context, sf SourceFile, src *Source, emit Emit) error) error {
	files, err := o.Walk(ctx, roots, m)
	if err != nil {
		return err
	}
	return o.ReadSources(ctx, o.Changed(files), emit, read)
}

// LineReader seeks the file to start, line number lines (its plan's, or a
// later point the adapter chose), and returns lr reset to read from there,
// or, when lr is nil, a new reader made by newReader
// (schema.NewLineReaderAt, schema.NewKeptLineReader).
func (s *Source) LineReader(lr *schema.LineReader, newReader func(io.Reader, int64, int64) *schema.LineReader, start, lines int64) (*schema.LineReader, error) {
	if _, err := s.File.Seek(start, io.SeekStart); err != nil {
		return lr, &ReadError{Path: s.Path, Err: err}
	}
	if lr == nil {
		return newReader(s.File, start, lines), nil
	}
	lr.Reset(s.File, start, lines)
	return lr, nil
}

// EmitCheckpoint hands emit the checkpoint of the source file read up to
// consumed bytes, to be resumed at resume (see Checkpoint).
func (s *Source) EmitCheckpoint(emit Emit, platform string, consumed, resume, resumeLines int64, ctx map[string]string) error {
	cp, err := Checkpoint(platform, s.File, s.Path, s.FP, consumed, resume, resumeLines, ctx)
	if err != nil {
		return err
	}
	return emit(cp)
}

// OpenSource opens a file an adapter found (with OpenFile) and decides,
// from the options' --since and watermarks, whether and where to read it.
// It returns nil (and no error) for a file to pass over: older than
// --since, or unchanged since the last run (counted in Stats.Unchanged), or
// that cannot be read — gone since the walk, a link, a directory or a pipe
// put in its place, unreadable —, which is reported through SkipFile. An
// error stops the run (--strict, a cancelled run). Otherwise the file
// counts in Stats.Files and the caller closes it.
func (o *Options) OpenSource(path string) (*Source, error) {
	if o.Unchanged(path) {
		if o.Stats != nil {
			o.Stats.Unchanged.Add(1)
		}
		return nil, nil
	}
	f, fi, err := o.OpenFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		err = ErrVanished
	}
	if err != nil {
		return nil, o.SkipFile(path, err)
	}
	s := &Source{Path: path, File: f, FP: watermark.Stat(fi)}
	if !o.Since.IsZero() && fi.ModTime().Before(o.Since) {
		f.Close()
		return nil, nil
	}
	if o.State != nil {
		if s.Plan, err = o.State.PlanRead(o.Platform, path, f, s.FP); err != nil {
			f.Close()
			return nil, o.SkipFile(path, err)
		}
		if s.Plan.Skip {
			f.Close()
			if o.Stats != nil {
				o.Stats.Unchanged.Add(1)
			}
			return nil, nil
		}
	}
	if o.Stats != nil {
		o.Stats.Files.Add(1)
	}
	return s, nil
}

// Counted returns emit wrapped to count each record it passes in
// Stats.Records: what every adapter emits goes through it.
func (o *Options) Counted(emit Emit) Emit {
	return func(rec *schema.Record) error {
		if o.Stats != nil {
			o.Stats.Records.Add(1)
		}
		return emit(rec)
	}
}

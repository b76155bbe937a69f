package claudecode

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/schema"
)

// queue holds a record until its time and session are known, then emits
// everything queued in order.
func (r *run) queue(fs *fileState, rec *schema.Record) error {
	if !rec.TS.IsZero() {
		fs.lastTS = rec.TS
	}
	fs.pending = append(fs.pending, rec)
	fs.pendingBytes += len(rec.Raw)
	if (fs.lastTS.IsZero() || fs.session == "") && len(fs.pending) < 1000 && fs.pendingBytes < 32<<20 {
		return nil
	}
	return r.flush(fs, false)
}

// flush emits the queued records, filling in what the file taught since.
// At the end of a file (final) records that never got a time take the last
// time seen, or the file's mtime.
func (r *run) flush(fs *fileState, final bool) error {
	if len(fs.pending) == 0 {
		return nil
	}
	// A record without a time takes the next timestamped record's time (the
	// line was written just before it), else the last one seen.
	var next time.Time
	for i := len(fs.pending) - 1; i >= 0; i-- {
		rec := fs.pending[i]
		if !rec.TS.IsZero() {
			next = rec.TS
			continue
		}
		switch {
		case !next.IsZero():
			rec.TS, rec.TSPrecision = next, schema.PrecisionDerived
		case !fs.lastTS.IsZero():
			rec.TS, rec.TSPrecision = fs.lastTS, schema.PrecisionDerived
		default:
			rec.TS, rec.TSPrecision = fs.mtime, schema.PrecisionFileMtime
		}
	}
	for _, rec := range fs.pending {
		if rec.SessionID == "" {
			rec.SessionID = fs.session
			if rec.SessionID == "" {
				// No session id anywhere in the file: name it by the file.
				rec.SessionID = strings.TrimSuffix(filepath.Base(fs.path), ".jsonl")
			}
		}
		rec.Project = fs.project
		if rec.Kind == schema.KindRaw && rec.ID == "" {
			rec.ID = schema.RawID(rec)
		}
		if !r.opt.Since.IsZero() && rec.TS.Before(r.opt.Since) {
			continue
		}
		if rec.Kind == schema.KindMessage {
			if to, ok := fs.merged[rec.ParentID]; ok {
				rec.ParentID = to
			}
			fs.follow(rec)
		}
		if rec.Source != nil && rec.Source.Replay {
			// Read again only as the open exchange's context: an earlier
			// run delivered its native line, and its message goes on
			// marked so that pos-normalize uses it without passing it on.
			if rec.Kind == schema.KindRaw {
				continue
			}
			rec.Raw = nil
		}
		if rec.Kind != schema.KindRaw && len(rec.Raw) > 0 {
			// The native line travels as its own raw record, just before the
			// message made from it; downstream stages pass it on as it is.
			if err := r.emit(schema.SplitRaw(rec)); err != nil {
				return err
			}
			rec.Raw = nil
		}
		if err := r.emit(rec); err != nil {
			return err
		}
	}
	clear(fs.pending)
	fs.pending, fs.pendingBytes = fs.pending[:0], 0
	return nil
}

// sessionHint emits what the adapter knows about a main session beyond its
// messages; pos-normalize folds it into the session rollup.
func (r *run) sessionHint(fs *fileState) error {
	rec := extract.SessionRecord(platform, fs.session, fs.lastTS, fs.mtime)
	rec.Project, rec.Cwd, rec.GitBranch = fs.project, fs.info.cwd, fs.info.branch
	rec.Source = &schema.Source{Path: fs.path, Mtime: fs.mtime}
	rec.Session = &schema.Session{Slug: fs.slug, PullRequests: fs.prs}
	// The name the user gave the session outranks Claude Code's label,
	// whichever was written last, here and across runs (title_source).
	switch {
	case fs.userTitle != "":
		rec.Title, rec.Session.TitleSource = fs.userTitle, schema.TitleUser
	case fs.aiTitle != "":
		rec.Title, rec.Session.TitleSource = fs.aiTitle, schema.TitlePlatform
	}
	if fs.info.version != "" {
		// JSON's quoting, not Go's: a damaged line's version may hold a
		// control character, which strconv.Quote writes as \x00.
		rec.Meta, _ = json.Marshal(struct {
			Version string `json:"version"`
		}{fs.info.version})
	}
	r.opt.Stamp(rec, platform, AdapterVersion)
	return r.emit(rec)
}

// plan emits a plan file as a document linked to its session by slug.
func (r *run) plan(sf extract.SourceFile, src *extract.Source) error {
	f, fp := src.File, src.FP
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	const maxPlan = 64 << 20
	if fi.Size() > maxPlan {
		return r.opt.Skip(&schema.BadInput{Path: sf.Path, Err: fmt.Errorf("plan file of %d bytes is over the %d-byte limit", fi.Size(), maxPlan)})
	}
	b := make([]byte, fi.Size())
	n, err := f.ReadAt(b, 0)
	if err != nil && n != len(b) {
		return &extract.ReadError{Path: sf.Path, Err: err}
	}
	if r.opt.Stats != nil {
		r.opt.Stats.Bytes.Add(int64(n))
	}
	slug := strings.TrimSuffix(filepath.Base(sf.Path), ".md")
	agent := ""
	if i := strings.Index(slug, "-agent-"); i > 0 {
		slug, agent = slug[:i], slug[i+len("-agent-"):]
	}
	rec := schema.New(schema.KindDocument)
	rec.ID = schema.ID(platform, "plan", filepath.Base(sf.Path))
	rec.Platform = platform
	// Sessions that continue one another share a slug and its plan: the
	// plan document belongs to the first of them (slugOwner).
	rec.SessionID = r.planOwner(sf.Path)
	rec.NativeID = slug
	rec.TS, rec.TSPrecision = fp.Mtime, schema.PrecisionFileMtime
	rec.Role, rec.ContentType = schema.RoleAssistant, schema.ContentPlan
	rec.Text = string(extract.ValidText(b[:n]))
	rec.Title = markdownTitle(rec.Text)
	if agent != "" {
		rec.Agent = &schema.Agent{ID: agent, Sidechain: true}
	}
	rec.Completeness = schema.CompleteFull
	rec.Source = &schema.Source{Path: sf.Path, Mtime: fp.Mtime}
	r.opt.Stamp(rec, platform, AdapterVersion)
	if err := r.emit(rec); err != nil {
		return err
	}
	if r.opt.State == nil {
		return nil
	}
	// The watermark says whether the plan was linked: an unlinked one is
	// read again once its session is known (relink).
	return src.EmitCheckpoint(r.emit, platform, int64(n), int64(n), 0,
		map[string]string{"plan": slug, "session": rec.SessionID})
}

// markdownTitle is the first heading of a markdown text (among its first
// 50 lines), or its first line: carried whole with the lines after it
// (excerpt.Source), and cut after pos-scrub (excerpt.Finish).
func markdownTitle(s string) string {
	first := -1
	rest := s
	for n := 0; n < 50 && rest != ""; n++ {
		line := rest
		next := ""
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, next = rest[:i], rest[i+1:]
		}
		if l := strings.TrimSpace(line); l != "" {
			at := len(s) - len(rest)
			if strings.HasPrefix(l, "#") {
				return excerpt.Source(strings.TrimLeft(strings.TrimLeft(s[at:], " \t"), "#"))
			}
			if first < 0 {
				first = at
			}
		}
		rest = next
	}
	if first < 0 {
		return ""
	}
	return excerpt.Source(s[first:])
}

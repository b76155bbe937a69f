package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// RestoreOptions selects the sessions Restore rebuilds, and where.
type RestoreOptions struct {
	// Session is a session id or a unique prefix of one; empty: the
	// sessions Project, Platform and Before select.
	Session  string
	Platform string
	Project  string
	// Before keeps the sessions last active before it.
	Before time.Time
	// Dir is the folder the native files are written under, laid out as
	// each platform's own (Claude Code's ~/.claude, Codex's ~/.codex).
	Dir string
	// Force replaces a file that already exists; without it such a file
	// is left as it is and named in the result.
	Force bool
	// Note is told what a restored file lacks or holds changed: lines the
	// raw layer does not hold, lines kept with repairs.
	Note func(RestoreNote)
}

// RestoreNote is a place where a restored file differs from its original
// in more than the redaction markers.
type RestoreNote struct {
	Source string `json:"source"` // the native file as it was read
	Line   int64  `json:"line"`
	// Missing says the raw layer lacks what is described: the restored
	// file is shorter than the original there.
	Missing bool   `json:"missing"`
	Msg     string `json:"message"`
}

func (n RestoreNote) String() string {
	if n.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", n.Source, n.Line, n.Msg)
	}
	return n.Source + ": " + n.Msg
}

// RestoredFile is one native file Restore wrote, or would have.
type RestoredFile struct {
	Platform  string `json:"platform"`
	SessionID string `json:"session_id"`
	Source    string `json:"source"` // the native file's path when it was read
	Path      string `json:"path"`   // where it was written
	Lines     int64  `json:"lines"`
	Bytes     int64  `json:"bytes"`
	// Missing counts the places the raw layer lacks lines or bytes of it.
	Missing int64 `json:"missing"`
	// Exists says Path was there already and was left as it is.
	Exists bool `json:"exists"`
}

// RestoreResult is what Restore did.
type RestoreResult struct {
	Files []RestoredFile `json:"files"`
	// NotRestorable are the sessions selected whose platform stores no
	// JSONL files (Cursor's databases, Cline's and Gemini's JSON, Aider's
	// Markdown): the raw layer holds their records, not their files.
	NotRestorable []SessionRef `json:"not_restorable"`
}

// Restore rebuilds, from the raw layer, the native JSONL files of the
// sessions opt selects under opt.Dir: each line as the raw layer holds it
// (byte for byte as read, but for the secrets pos-scrub replaced by its
// markers and the repairs pos-extract names), in the order of the file.
// Claude Code's files land where Claude Code looks for them:
// projects/<the session's cwd, every character but a letter or digit made
// '-'>/<session>.jsonl, subagents as in the original layout; Codex's
// under sessions/YYYY/MM/DD. A file that exists is not replaced unless
// opt.Force.
func (d *DB) Restore(ctx context.Context, opt RestoreOptions) (*RestoreResult, error) {
	if opt.Dir == "" {
		return nil, argErrorf("no output folder given")
	}
	refs, err := d.restoreSessions(ctx, opt)
	if err != nil {
		return nil, err
	}
	if err := d.need(ctx, "raw"); err != nil {
		return nil, err
	}
	res := &RestoreResult{}
	tmp, err := os.MkdirTemp(mkdirAll(opt.Dir), ".pos-restore-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	r := restorer{opt: opt, tmp: tmp, res: res}
	// A query per batch of sessions: the raw view is read once a batch,
	// not once a session.
	const batch = 256
	for i := 0; i < len(refs); i += batch {
		if err := r.batch(ctx, d, refs[i:min(i+batch, len(refs))]); err != nil {
			return res, err
		}
	}
	return res, nil
}

// mkdirAll makes dir (private, as the lake is) and returns it; an error
// shows at the next step.
func mkdirAll(dir string) string {
	_ = os.MkdirAll(dir, 0o700)
	return dir
}

// restoreSessions are the sessions opt selects.
func (d *DB) restoreSessions(ctx context.Context, opt RestoreOptions) ([]SessionRef, error) {
	if opt.Session != "" {
		ref, err := d.ResolveSession(ctx, opt.Session, opt.Platform, "")
		if err != nil {
			return nil, err
		}
		return []SessionRef{ref}, nil
	}
	if opt.Project == "" && opt.Before.IsZero() && opt.Platform == "" {
		return nil, argErrorf("name a session, or select sessions with --project, --platform or --before")
	}
	ss, err := d.Sessions(ctx, SessionFilter{Platform: opt.Platform, Project: opt.Project})
	if err != nil {
		return nil, err
	}
	var refs []SessionRef
	for _, s := range ss {
		if !opt.Before.IsZero() && !s.LastTS.Before(opt.Before) {
			continue
		}
		refs = append(refs, SessionRef{Platform: s.Platform, SessionID: s.SessionID, Title: s.Title,
			Project: s.Project, FirstTS: s.FirstTS, LastTS: s.LastTS})
	}
	if len(refs) == 0 {
		return nil, argErrorf("no session matches the options given")
	}
	return refs, nil
}

// restorer writes the files of the sessions of one query at a time.
type restorer struct {
	opt RestoreOptions
	tmp string // a private folder under opt.Dir for the files being written
	res *RestoreResult
	n   int // files written to tmp so far, for their names
}

// restoreFile is a file being rebuilt.
type restoreFile struct {
	RestoredFile
	tmp  string
	f    *os.File
	cwd  string // the first cwd a line names (Claude Code)
	next int64  // the offset the next line starts at, if nothing is missing; -1: unknown
	line int64  // the next line's number
}

func (r *restorer) note(f *restoreFile, line int64, missing bool, format string, args ...any) {
	if missing {
		f.Missing++
	}
	if r.opt.Note != nil {
		r.opt.Note(RestoreNote{Source: f.Source, Line: line, Missing: missing, Msg: fmt.Sprintf(format, args...)})
	}
}

func (r *restorer) batch(ctx context.Context, d *DB, refs []SessionRef) error {
	var sel strings.Builder
	for i, ref := range refs {
		if i > 0 {
			sel.WriteString(", ")
		}
		sel.WriteString("(" + sqlString(ref.Platform) + ", " + sqlString(ref.SessionID) + ")")
	}
	// Lines of JSONL files only: rows with a line number and no key. Two
	// rows at one offset are two versions of the line (the file was
	// rewritten in place): the latest comes first.
	q := `SELECT platform, session_id, source_path, coalesce(source_line, 0), source_offset,
  coalesce(source_altered, ''), CAST(raw AS VARCHAR)
FROM raw
WHERE (platform, session_id) IN (` + sel.String() + `)
  AND coalesce(source_line, 0) > 0 AND coalesce(source_key, '') = '' AND source_path LIKE '%.jsonl'
ORDER BY platform, session_id, source_path, source_offset, ingested_at DESC`
	rows, err := d.db.QueryContext(ctx, q)
	if err != nil {
		return sqlErr(err)
	}
	defer rows.Close()
	found := map[SessionRef]bool{}
	var files []*restoreFile // the current session's
	var cur *restoreFile
	var session SessionRef
	finish := func() error {
		if cur != nil {
			if err := r.close(cur); err != nil {
				return err
			}
			files = append(files, cur)
			cur = nil
		}
		return nil
	}
	for rows.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		var platform, id, path, altered, raw string
		var line, offset int64
		if err := rows.Scan(&platform, &id, &path, &line, &offset, &altered, &raw); err != nil {
			return sqlErr(err)
		}
		if ref := (SessionRef{Platform: platform, SessionID: id}); ref != session {
			if err := finish(); err != nil {
				return err
			}
			if err := r.place(session, files); err != nil {
				return err
			}
			files, session = nil, ref
			found[ref] = true
		}
		if cur == nil || cur.Source != path {
			if err := finish(); err != nil {
				return err
			}
			if cur, err = r.open(platform, id, path); err != nil {
				return err
			}
		}
		if err := r.line(cur, line, offset, altered, raw); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return sqlErr(err)
	}
	if err := finish(); err != nil {
		return err
	}
	if err := r.place(session, files); err != nil {
		return err
	}
	for _, ref := range refs {
		if !found[SessionRef{Platform: ref.Platform, SessionID: ref.SessionID}] {
			r.res.NotRestorable = append(r.res.NotRestorable, ref)
		}
	}
	return nil
}

// sqlString is s as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func (r *restorer) open(platform, id, path string) (*restoreFile, error) {
	r.n++
	tmp := filepath.Join(r.tmp, strconv.Itoa(r.n)+".jsonl")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	return &restoreFile{RestoredFile: RestoredFile{Platform: platform, SessionID: id, Source: path},
		tmp: tmp, f: f, line: 1}, nil
}

// line writes one raw row to f, and notes what the rows before it leave
// out: lines (their numbers skip), or bytes within a line (its offset is
// past the end of the line before, which the raw layer kept byte for
// byte).
func (r *restorer) line(f *restoreFile, line, offset int64, altered, raw string) error {
	switch {
	case line < f.line:
		// Another version of a line already written: the file changed in
		// place after it was read, and the latest version was kept.
		return nil
	case line > f.line:
		what := fmt.Sprintf("line %d is", f.line)
		if line-f.line > 1 {
			what = fmt.Sprintf("lines %d-%d are", f.line, line-1)
		}
		r.note(f, f.line, true, "%s not in the raw layer (not JSON, or blank, when read): left out", what)
	case f.next >= 0 && offset > f.next:
		r.note(f, f.line-1, true, "%d bytes of the line are not in the raw layer (a byte order mark, blanks or a carriage return): left out", offset-f.next)
	}
	text := raw
	if altered != "" {
		if strings.Contains(altered, "text") {
			// A line nested too deeply to keep as JSON is kept as a JSON
			// string of its text.
			var s string
			if err := json.Unmarshal([]byte(raw), &s); err == nil {
				text = s
			}
		}
		if altered != "text" {
			r.note(f, line, false, "restored as kept with repairs (%s), not byte for byte", altered)
		}
	}
	if _, err := f.f.WriteString(text); err != nil {
		return err
	}
	if _, err := f.f.Write([]byte{'\n'}); err != nil {
		return err
	}
	f.Lines++
	f.Bytes += int64(len(text)) + 1
	f.line = line + 1
	// The next line's offset follows from this one's length only when it
	// holds the bytes read: not after a redaction or a repair.
	f.next = -1
	if (altered == "" || altered == "text") && !strings.Contains(text, "[REDACTED:") {
		f.next = offset + int64(len(text)) + 1
	}
	if f.cwd == "" && f.Platform == "claude_code" {
		var l struct {
			Cwd string `json:"cwd"`
		}
		if json.Unmarshal([]byte(text), &l) == nil {
			f.cwd = l.Cwd
		}
	}
	return nil
}

func (r *restorer) close(f *restoreFile) error {
	err := f.f.Sync()
	return errors.Join(err, f.f.Close())
}

// place moves the files of a session from the temporary folder to where
// their platform keeps them.
func (r *restorer) place(session SessionRef, files []*restoreFile) error {
	if len(files) == 0 {
		return nil
	}
	// The session's cwd is its main file's first one: Claude Code names
	// the folder after the cwd the session started in.
	slices.SortStableFunc(files, func(a, b *restoreFile) int {
		return boolCmp(isAgentFile(a.Source), isAgentFile(b.Source))
	})
	cwd := ""
	for _, f := range files {
		if cwd = f.cwd; cwd != "" {
			break
		}
	}
	used := map[string]bool{}
	for _, f := range files {
		rel := NativePath(f.Platform, f.SessionID, cwd, f.Source)
		if used[rel] {
			// Two files of one session that Claude Code would name alike
			// (a session continued in a file of another name): the later
			// keeps its own name.
			rel = filepath.Join(filepath.Dir(rel), filepath.Base(f.Source))
		}
		used[rel] = true
		f.Path = filepath.Join(r.opt.Dir, rel)
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
			return err
		}
		if r.opt.Force {
			if err := os.Rename(f.tmp, f.Path); err != nil {
				return err
			}
		} else if err := os.Link(f.tmp, f.Path); errors.Is(err, fs.ErrExist) {
			f.Exists = true
		} else if err != nil {
			return err
		}
		r.res.Files = append(r.res.Files, f.RestoredFile)
	}
	return nil
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// isAgentFile reports whether a Claude Code file is a subagent's
// transcript (agent-<id>.jsonl) rather than a session's.
func isAgentFile(path string) bool { return strings.HasPrefix(filepath.Base(path), "agent-") }

// NativePath is where a platform keeps the JSONL file read at source, of
// the given session, relative to the platform's folder (~/.claude,
// ~/.codex …): for Claude Code, projects/<ClaudeProjectDir(cwd)>/ then
// <session>.jsonl, a subagent's agent-<id>.jsonl beside it (2.0) or in
// <session>/subagents/ (2.1), as the original was; for Codex, the path
// from its sessions (or archived_sessions) folder, else
// sessions/YYYY/MM/DD/ of the date in the file's name; for Gemini CLI,
// from its tmp folder; for other platforms, <platform>/<file name>.
func NativePath(platform, session, cwd, source string) string {
	base := filepath.Base(source)
	switch platform {
	case "claude_code":
		dir := ClaudeProjectDir(cwd)
		if cwd == "" {
			// No line names a cwd: the folder it was read from.
			d := filepath.Dir(source)
			if filepath.Base(d) == "subagents" {
				d = filepath.Dir(filepath.Dir(d))
			}
			dir = filepath.Base(d)
		}
		dir = filepath.Join("projects", dir)
		switch {
		case !isAgentFile(source):
			return filepath.Join(dir, session+".jsonl")
		case filepath.Base(filepath.Dir(source)) == "subagents":
			return filepath.Join(dir, session, "subagents", base)
		}
		return filepath.Join(dir, base)
	case "codex":
		if rel, ok := below(source, "sessions", "archived_sessions"); ok {
			return rel
		}
		if m := rolloutDate.FindStringSubmatch(base); m != nil {
			return filepath.Join("sessions", m[1], m[2], m[3], base)
		}
		return filepath.Join("sessions", base)
	case "gemini":
		if rel, ok := below(source, "tmp"); ok {
			return rel
		}
	}
	return filepath.Join(platform, base)
}

// rolloutDate is the date in a Codex rollout file's name.
var rolloutDate = regexp.MustCompile(`^rollout-(\d{4})-(\d{2})-(\d{2})T`)

// below is path from its last element named one of names, if any.
func below(path string, names ...string) (string, bool) {
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i := len(parts) - 2; i >= 0; i-- {
		if slices.Contains(names, parts[i]) {
			return filepath.Join(parts[i:]...), true
		}
	}
	return "", false
}

// claudeMaxDir is the longest folder name Claude Code derives from a cwd
// before it cuts the name and adds a hash.
const claudeMaxDir = 200

// ClaudeProjectDir is the name of the folder under ~/.claude/projects that
// Claude Code keeps the sessions started in cwd in: cwd with every UTF-16
// code unit that is not an ASCII letter or digit replaced by '-' (its
// JavaScript `cwd.replace(/[^a-zA-Z0-9]/g, "-")`: a character outside the
// BMP gives two); a name longer than 200 is cut there and followed by '-'
// and the base-36 absolute value of a 32-bit hash of cwd.
func ClaudeProjectDir(cwd string) string {
	units := utf16.Encode([]rune(cwd))
	b := make([]byte, len(units))
	var h int32
	for i, u := range units {
		h = (h << 5) - h + int32(u)
		if u < 0x80 && ('a' <= u && u <= 'z' || 'A' <= u && u <= 'Z' || '0' <= u && u <= '9') {
			b[i] = byte(u)
		} else {
			b[i] = '-'
		}
	}
	if len(b) <= claudeMaxDir {
		return string(b)
	}
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	return string(b[:claudeMaxDir]) + "-" + strconv.FormatInt(abs, 36)
}

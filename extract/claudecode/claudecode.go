// Package claudecode reads Claude Code session histories: the JSONL
// transcripts under ~/.claude/projects (every layout from v1.0 inline
// sidechains to v2.1 subagents/ folders) and the plan files under
// ~/.claude/plans, linked to their sessions by slug.
//
// Every line becomes one record carrying its raw JSON and provenance:
// conversation lines become messages, every other line type (progress,
// file-history-snapshot, queue-operation, unknown future types) a raw
// record, so the raw layer is complete (a prompt that only the input
// queue's lines hold becomes a message as well: queue.go). Merging the
// lines of one assistant message is left to pos-normalize.
package claudecode

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

// AdapterVersion changes when the records this adapter emits change.
const AdapterVersion = "1"

const platform = about.Name

// Adapter is the Claude Code extractor.
type Adapter struct{}

// Platform implements extract.Adapter.
func (Adapter) Platform() string { return platform }

// ConfigDirs are the Claude Code configuration directories: those in
// CLAUDE_CONFIG_DIR (comma-separated, as Claude Code accepts), else
// ~/.claude and ~/.config/claude.
func ConfigDirs(opt *extract.Options) []string {
	if v := opt.Getenv("CLAUDE_CONFIG_DIR"); v != "" {
		var dirs []string
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				dirs = append(dirs, d)
			}
		}
		return dirs
	}
	if opt.Home == "" {
		return nil
	}
	return []string{filepath.Join(opt.Home, ".claude"), filepath.Join(opt.Home, ".config", "claude")}
}

// roots returns the directories to search for transcripts and for plans.
// A root that is a configuration directory (it has projects/) is searched
// in projects/ and plans/ only, never in the rest of it (history.jsonl,
// todos, caches are other formats). A root that is a projects directory
// also gets its sibling plans/.
func roots(opt *extract.Options) (transcripts, plans []string) {
	given := opt.Roots
	if len(given) == 0 {
		for _, d := range ConfigDirs(opt) {
			transcripts = append(transcripts, filepath.Join(d, "projects"))
			plans = append(plans, filepath.Join(d, "plans"))
		}
		return transcripts, plans
	}
	for _, r := range given {
		if extract.IsDir(filepath.Join(r, "projects")) {
			transcripts = append(transcripts, filepath.Join(r, "projects"))
			plans = append(plans, filepath.Join(r, "plans"))
			continue
		}
		transcripts = append(transcripts, r)
		plans = append(plans, r)
		if filepath.Base(filepath.Clean(r)) == "projects" {
			plans = append(plans, filepath.Join(filepath.Dir(filepath.Clean(r)), "plans"))
		}
	}
	return transcripts, plans
}

func init() { extract.Register(Adapter{}) }

// Locations implements extract.Adapter.
func (Adapter) Locations(opt extract.Options) []string {
	return extract.JoinLocations(roots(&opt))
}

// Extract implements extract.Adapter.
func (a Adapter) Extract(ctx context.Context, opt extract.Options, emit extract.Emit) error {
	opt.Platform = Adapter{}.Platform() // keys this adapter's watermarks
	troots, proots := roots(&opt)
	files, err := opt.Walk(ctx, troots, extract.Match{
		Name:    func(path string) bool { return strings.HasSuffix(path, ".jsonl") },
		Content: func(path string) (bool, error) { return isTranscript(&opt, path) },
	})
	if err != nil {
		return err
	}
	shared := &run{opt: &opt, emit: opt.Counted(emit), slugs: map[string]slugOwner{}, mu: new(sync.Mutex)}
	// A session's file and its subagents' files are one job: the session
	// names the subagents' types. Jobs run in parallel, output in order.
	groups := changedGroups(&opt, parentsFirst(files))
	workers := opt.WorkerCount()
	// Line readers of kept lines, reused: a job's files fill the rest of
	// the last job's block before a new one is made.
	var readers extract.LineReaders
	err = extract.Ordered(ctx, workers, len(groups), func(ctx context.Context, i int, emit extract.Emit) error {
		r := &run{opt: &opt, emit: opt.Counted(emit), slugs: shared.slugs, mu: shared.mu, job: i,
			taskTypes: map[string]string{}, agentTypes: map[string]string{}}
		r.lr = readers.Get()
		defer func() { readers.Put(r.lr) }()
		for _, f := range groups[i] {
			err := opt.ReadSource(f.Path, func(src *extract.Source) error { return r.file(ctx, f, src) })
			if err := opt.FileDone(err); err != nil {
				return err
			}
		}
		return nil
	}, emit)
	if err != nil {
		return err
	}
	run := shared
	run.ownersOfEarlierRuns()
	plans, err := opt.Walk(ctx, proots, extract.Match{Name: func(path string) bool {
		return strings.HasSuffix(path, ".md") && filepath.Base(filepath.Dir(path)) == "plans"
	}})
	if err != nil {
		return err
	}
	for _, f := range plans {
		if err := ctx.Err(); err != nil {
			return err
		}
		read := func(src *extract.Source) error { return run.plan(f, src) }
		var err error
		if opt.UnchangedFile(f) && run.relink(f.Path) {
			// Read unlinked by an earlier run, before its session was:
			// read again to link it.
			err = readAgain(&opt, f.Path, read)
		} else {
			err = opt.ReadSource(f.Path, read)
		}
		if err := opt.FileDone(err); err != nil {
			return err
		}
	}
	return nil
}

// readAgain opens a file its watermark says is unchanged and hands it to
// read, as extract.Options.ReadSource does a changed one.
func readAgain(opt *extract.Options, path string, read func(*extract.Source) error) error {
	f, fi, err := opt.OpenFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		err = extract.ErrVanished
	}
	if err != nil {
		return opt.SkipFile(path, err)
	}
	defer f.Close()
	if opt.Stats != nil {
		opt.Stats.Files.Add(1)
	}
	return read(&extract.Source{Path: path, File: f, FP: watermark.Stat(fi)})
}

// ownersOfEarlierRuns adds to the slugs' owners the sessions of the
// files earlier runs read, from their watermarks: the session, slug and
// plans named (a plan's own watermark names the plan, and is passed
// over).
func (r *run) ownersOfEarlierRuns() {
	type mark struct {
		slug  string
		plans []string
		o     slugOwner
	}
	var marks []mark
	r.opt.State.Each(platform, func(c *schema.Checkpoint) {
		s := c.Context["session"]
		if s == "" || c.Context["plan"] != "" {
			return
		}
		marks = append(marks, mark{slug: c.Context["slug"], plans: splitPlans(c.Context["plans"]),
			o: slugOwner{session: s, job: math.MaxInt, mtime: c.Mtime, agent: strings.HasPrefix(filepath.Base(c.Path), "agent-")}})
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range marks {
		if m.slug != "" {
			r.own(m.slug, m.o)
		}
		for _, p := range m.plans {
			r.own(planKey(p), m.o)
		}
	}
}

// own makes o the owner of key unless its owner comes before o. The
// caller holds r.mu.
func (r *run) own(key string, o slugOwner) {
	if cur, ok := r.slugs[key]; !ok || o.before(cur) {
		r.slugs[key] = o
	}
}

// register makes the session of a file just read an owner of its slug and
// of the plans its tool calls named.
func (r *run) register(fs *fileState) {
	if fs.session == "" {
		return
	}
	// Copies: the map lives for the whole run, and a line's strings would
	// keep its reader's block (1 MB) alive with it.
	o := slugOwner{session: strings.Clone(fs.session), job: r.job, mtime: fs.mtime, agent: fs.agentID != ""}
	r.mu.Lock()
	defer r.mu.Unlock()
	if fs.slug != "" {
		r.own(strings.Clone(fs.slug), o)
	}
	for _, p := range fs.plans {
		r.own(planKey(p), o)
	}
}

// planOwner is the session the plan file at path belongs to: the owner of
// its slug (its name, less any -agent-<id>), else of a session whose
// tool calls named it; "" if none is known.
func (r *run) planOwner(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".md")
	slug := name
	if i := strings.Index(slug, "-agent-"); i > 0 {
		slug = slug[:i]
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if o, ok := r.slugs[slug]; ok {
		return o.session
	}
	return r.slugs[planKey(name)].session
}

// relink reports whether a plan file that an earlier run read without
// knowing its session now has one.
func (r *run) relink(path string) bool {
	c := r.opt.State.Get(platform, path)
	return c != nil && c.Context["session"] == "" && r.planOwner(path) != ""
}

// splitPlans and joinPlans keep a file's plan names in its watermark.
func splitPlans(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func joinPlans(names []string) string { return strings.Join(names, "\n") }

// notePlans adds the plan files among a message's files (Markdown files in
// a folder named plans) to the plans the file's session named.
func (fs *fileState) notePlans(files []string) {
	for _, f := range files {
		f = filepath.ToSlash(f)
		if !strings.HasSuffix(f, ".md") || path.Base(path.Dir(f)) != "plans" {
			continue
		}
		name := strings.TrimSuffix(path.Base(f), ".md")
		if name != "" && !strings.Contains(name, "\n") && !slices.Contains(fs.plans, name) {
			fs.plans = append(fs.plans, strings.Clone(name))
		}
	}
}

// isTranscript tells a Claude Code transcript from another tool's JSONL
// (a --root may hold several tools' files): a file in Claude Code's layout
// (under projects/, named by a session uuid or agent-*) is one; any other
// must start with a line of Claude Code's shape.
func isTranscript(opt *extract.Options, path string) (bool, error) {
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if uuidRE.MatchString(base) || strings.HasPrefix(base, "agent-") || strings.Contains(filepath.ToSlash(path), "/projects/") {
		return true, nil
	}
	b, err := opt.FirstLine(path)
	if b == nil || err != nil {
		return false, err
	}
	var probe struct {
		Type      string `json:"type"`
		SessionID string `json:"sessionId"`
		LeafUUID  string `json:"leafUuid"`
		MessageID string `json:"messageId"`
		UUID      string `json:"uuid"`
	}
	if json.Unmarshal(b, &probe) != nil {
		return false, nil
	}
	switch probe.Type {
	case "user", "assistant", "system", "progress", "summary", "file-history-snapshot", "queue-operation", "last-prompt",
		"custom-title", "ai-title", "agent-name", "pr-link", "mode", "permission-mode", "attachment":
		return probe.SessionID != "" || probe.LeafUUID != "" || probe.MessageID != "" || probe.UUID != "", nil
	}
	return false, nil
}

// run is the state of one extraction across files.
type run struct {
	opt   *extract.Options
	emit  extract.Emit
	slugs map[string]slugOwner // slug -> the first session with it, for linking plans
	job   int                  // this run's place in the file order
	// A subagent's type is the subagent_type of the Task call that started
	// it; progress lines in the parent session link the call to the agent.
	taskTypes  map[string]string  // Task tool_use id -> subagent_type
	agentTypes map[string]string  // session/agent id -> subagent_type
	lr         *schema.LineReader // reused across files
	mu         *sync.Mutex        // guards slugs, shared by the jobs
}

// slugOwner is the session a slug (and its plan) belongs to: of the
// sessions that share a slug, the first in file order, whichever job
// finishes first; a session's own file before its subagents' (whose lines
// carry the session's slug), which link a plan only when no session file
// does. The files of earlier runs count as their watermarks say (the
// session, slug and plans of each file), so that a plan written after its
// session was read is linked without reading the session again.
type slugOwner struct {
	session string
	job     int
	mtime   time.Time // the file's, when read
	agent   bool      // a subagent's file
}

// before reports whether o owns a slug rather than p: a session's file
// over a subagent's, then the older file, then the earlier job.
func (o slugOwner) before(p slugOwner) bool {
	switch {
	case o.agent != p.agent:
		return !o.agent
	case !o.mtime.Equal(p.mtime) && !o.mtime.IsZero() && !p.mtime.IsZero():
		return o.mtime.Before(p.mtime)
	}
	return o.job < p.job
}

// planKey keys the session a plan file (by its name without .md) belongs
// to because a tool call of the session named it, in run.slugs; slugs
// hold no NUL.
func planKey(name string) string { return "\x00plan:" + name }

// changedGroups drops the groups whose files are all unchanged since their
// watermarks (extract.Options.Changed, for groups): in a sync most are, and
// each would cost a job, a goroutine and its hand-offs only to be passed
// over by OpenSource.
func changedGroups(opt *extract.Options, groups [][]extract.SourceFile) [][]extract.SourceFile {
	if opt.State == nil {
		return groups
	}
	out := groups[:0]
	for _, g := range groups {
		if !slices.ContainsFunc(g, func(f extract.SourceFile) bool { return !opt.UnchangedFile(f) }) {
			if opt.Stats != nil {
				opt.Stats.Unchanged.Add(int64(len(g)))
			}
			continue
		}
		out = append(out, g)
	}
	return out
}

// parentsFirst groups the files, in their order, each session's file with
// its subagents' files (<session>/subagents/*.jsonl) after it: the session
// names their types.
func parentsFirst(files []extract.SourceFile) [][]extract.SourceFile {
	present := map[string]bool{}
	for _, f := range files {
		present[f.Path] = true
	}
	parentOf := func(p string) string {
		dir := filepath.Dir(p)
		if filepath.Base(dir) != "subagents" {
			return ""
		}
		parent := filepath.Dir(dir) + ".jsonl"
		if !present[parent] {
			return ""
		}
		return parent
	}
	children := map[string][]extract.SourceFile{}
	for _, f := range files {
		if p := parentOf(f.Path); p != "" {
			children[p] = append(children[p], f)
		}
	}
	out := make([][]extract.SourceFile, 0, len(files))
	for _, f := range files {
		if parentOf(f.Path) != "" {
			continue
		}
		out = append(out, append([]extract.SourceFile{f}, children[f.Path]...))
	}
	return out
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// fileState is what is known about the file being read.
type fileState struct {
	path         string
	fi           watermark.Fingerprint
	mtime        time.Time
	session      string // the session the file belongs to, once known
	project      string // the first cwd in the file
	slug         string
	plans        []string // the plan files its tool calls named, by name without .md
	agentID      string   // from the file name (agent-<id>.jsonl)
	agentTy      string   // from <agent>.meta.json, or "compact" for agent-acompact-*
	lastTS       time.Time
	pending      []*schema.Record // records waiting for a time or a session
	pendingBytes int
	// sidechain thread roots for v1.0 inline sidechains: uuid -> root uuid
	sideRoot map[string]string
	// resume point: the start of the open exchange in the main thread
	resume, resumeLines int64
	// lines starting before this offset were delivered by an earlier run
	replayBelow int64
	sawMain     bool
	// pos-normalize's merges of assistant lines, followed to be saved with
	// the watermark (groups), and those the last run saved (merged), for a
	// read that starts after the open exchange (skipReplay).
	groups map[string]*group
	merged map[string]string
	info   sessionInfo
	// The session's names, from its session-state lines (line.CustomTitle),
	// and the pull requests it linked (pr-link lines), by URL.
	userTitle, aiTitle string
	prs                []string
	// Whether each subagent named by the file's agent_progress lines has
	// a transcript of its own (progressCopy).
	transcripts map[string]bool
	// The prompts waiting in Claude Code's input queue (queue-operation
	// lines), the one taken into the running turn and not yet delivered
	// as a message (absorbed), and the last line of the main thread,
	// which a prompt taken in follows.
	queued, absorbed []queuedEntry
	lastMain         string
}

type sessionInfo struct {
	cwd, branch, version string
}

func (r *run) file(ctx context.Context, sf extract.SourceFile, src *extract.Source) (err error) {
	f, fp, plan := src.File, src.FP, src.Plan
	fs := &fileState{path: sf.Path, fi: fp, mtime: fp.Mtime, sideRoot: map[string]string{}}
	base := strings.TrimSuffix(filepath.Base(sf.Path), ".jsonl")
	if uuidRE.MatchString(base) {
		fs.session = base
	}
	if strings.HasPrefix(base, "agent-") {
		fs.agentID = strings.TrimPrefix(base, "agent-")
		if fs.agentTy, err = agentType(r.opt, sf.Path, fs.agentID); err != nil {
			return err
		}
		// v2.1: <session>/subagents/agent-*.jsonl
		if dir := filepath.Dir(sf.Path); filepath.Base(dir) == "subagents" {
			if s := filepath.Base(filepath.Dir(dir)); uuidRE.MatchString(s) {
				fs.session = s
			}
		} else {
			fs.session = ""
		}
	}
	if fs.agentID != "" && fs.agentTy == "" && fs.session != "" {
		fs.agentTy = r.agentTypes[fs.session+"/"+fs.agentID]
	}
	if c := plan.Context; c != nil {
		fs.session = cmp.Or(c["session"], fs.session)
		fs.project = c["project"]
		fs.slug = c["slug"]
		fs.plans = splitPlans(c["plans"])
		fs.agentTy = cmp.Or(fs.agentTy, c["agent_type"])
	}
	fs.resume, fs.resumeLines, fs.replayBelow = plan.Start, plan.Lines, plan.Replay
	if start, lines, merged, ok := skipReplay(f, fs, plan); ok {
		plan.Start, plan.Lines = start, lines
		fs.resume, fs.resumeLines, fs.merged = start, lines, merged
	}
	lr, err := src.LineReader(r.lr, schema.NewKeptLineReader, plan.Start, plan.Lines)
	if err != nil {
		return err
	}
	r.lr = lr
	// The lines are the records' raw as they were read, not copies: the
	// reader never writes over them, and copies would double the memory a
	// large home's lines take.
	var (
		l   line
		odd error // a field lenient could not read
	)
	read, err := r.opt.ReadLines(ctx, r.lr, sf.Path, false, extract.LineFuncs{
		Parse: func(raw []byte) error {
			odd = nil
			if err := parseLine(raw, &l); err != nil {
				var ok bool
				if odd, ok = lenient(raw, &l); !ok {
					return err
				}
			}
			return nil
		},
		Line: func(raw []byte, ln extract.Line) error {
			warn := odd
			if w := l.check(); w != nil {
				warn = errors.Join(warn, w)
			}
			if err := r.line(fs, &l, raw, ln); err != nil || warn == nil || ln.Offset < fs.replayBelow {
				return err // a line replayed was named when it was first read
			}
			return r.opt.Warn(&schema.BadInput{Path: fs.path, Line: ln.Num, Err: oneLine(warn)})
		},
		RawOnly: func(raw []byte, ln extract.Line) error {
			l = line{}
			return r.line(fs, &l, raw, ln)
		},
	})
	if err != nil {
		return err
	}
	consumed, consumedLines := read.Consumed, read.Lines
	if err := r.absorbedMessages(fs); err != nil {
		return err
	}
	if err := r.flush(fs, true); err != nil {
		return err
	}
	r.register(fs)
	if fs.session != "" && fs.agentID == "" && (fs.sawMain || fs.userTitle != "" || fs.aiTitle != "" || len(fs.prs) > 0) {
		if err := r.sessionHint(fs); err != nil {
			return err
		}
	}
	if r.opt.State == nil {
		return nil
	}
	resume, resumeLines := read.Resume(fs.resume, fs.resumeLines)
	// Copies: a watermark lives until the run ends (--commit-state), and
	// a line's strings would keep its reader's block (1 MB) alive.
	ctxt := map[string]string{"session": strings.Clone(fs.session), "project": strings.Clone(fs.project),
		"slug": strings.Clone(fs.slug), "agent_type": strings.Clone(fs.agentTy)}
	if fs.agentID == "" {
		ctxt["tail"], ctxt["lines"] = fs.tail(), strconv.FormatInt(consumedLines, 10)
	}
	if len(fs.plans) > 0 {
		ctxt["plans"] = joinPlans(fs.plans)
	}
	return src.EmitCheckpoint(r.emit, platform, consumed, resume, resumeLines, ctxt)
}

// lenient parses a line whose JSON is valid but some field has a type this
// adapter does not expect (a newer Claude Code may change one): encoding/json
// fills every other field, and the line is kept whole in the raw record.
// odd says which field was not read.
func lenient(b []byte, l *line) (odd error, ok bool) {
	*l = line{}
	err := json.Unmarshal(b, l)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return extract.FieldError(err), true
	}
	return nil, err == nil
}

// oneLine joins what errors.Join joined on one line.
func oneLine(err error) error {
	return errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
}

// agentType reads the subagent's type from agent-<id>.meta.json when Claude
// Code wrote one; compaction agents are named agent-acompact-*. A meta
// file that cannot be read (a link, a pipe, unreadable) is reported as
// skipped, and the transcript read without its type; the error is
// SkipFile's.
func agentType(opt *extract.Options, path, id string) (string, error) {
	if strings.HasPrefix(id, "acompact") {
		return "compact", nil
	}
	meta := strings.TrimSuffix(path, ".jsonl") + ".meta.json"
	b, err := opt.ReadSmall(meta, 1<<20)
	if err != nil {
		return "", opt.SkipFile(meta, err)
	}
	if b == nil {
		return "", nil
	}
	var agentType, subagentType, typ string
	err = members(b, func(w *jsontext.Reader, key string) error {
		switch key {
		case "agentType":
			return str(w, &agentType)
		case "subagent_type":
			return str(w, &subagentType)
		case "type":
			return str(w, &typ)
		}
		return w.Skip()
	})
	if err != nil {
		return "", nil
	}
	return cmp.Or(agentType, cmp.Or(subagentType, typ)), nil
}

package codex

import (
	"cmp"
	"maps"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
)

// replayGap is how close together the lines of a fork's copied history
// are: Codex writes the parent's lines in one burst, with fresh timestamps,
// before the fork's own first turn.
const replayGap = 100 * time.Millisecond

// fileState is what is known about the rollout being read.
type fileState struct {
	path  string
	mtime time.Time

	own      string // the rollout's own session (thread) id
	session  string // the session its records belong to: the parent's for a spawned subagent
	haveMeta bool
	legacy   bool // bare response items (rollouts before mid 2025)
	agent    *schema.Agent
	project  string // the session's cwd
	cwd      string // the current turn's cwd
	branch   string
	title    string
	meta     map[string]string // cli_version, originator, source … for the session record
	ownStart time.Time

	model, turn string
	total       tokens // the last cumulative total seen
	haveTotal   bool
	carry       tokens // usage of a request that had no assistant item to carry it

	replaying  bool
	lastReplay time.Time

	req   string            // the open request: the line of its first assistant item
	calls map[string]string // call_id -> tool name
	ids   map[string]string // call_id -> the call's record id
	prev  string            // the previous message's id

	pending      []*schema.Record
	pendingBytes int
	holdFrom     int  // first assistant record of the request waiting for its token count, or -1
	lastAsst     int  // last assistant record in pending, or -1
	undecided    int  // a user-role item waiting for its user_message event, or -1
	undecidedDef bool // what it is if nothing decides: a prompt (true) or injected context
	undecidedAt  snapshot
	eventLine    int64 // the line of a user_message event that came before its item

	lastTS      time.Time
	resume      int64
	resumeLines int64
	resumeSnap  snapshot
}

// snapshot is the state at a prompt, saved with the checkpoint that
// resumes there.
type snapshot struct {
	offset, lines int64
	model, turn   string
	total         tokens
	haveTotal     bool
	cwd           string
}

func newFileState(path string, mtime time.Time) *fileState {
	own := sessionFromName(path)
	return &fileState{path: path, mtime: mtime, own: own, session: own, meta: map[string]string{},
		calls: map[string]string{}, ids: map[string]string{}, holdFrom: -1, lastAsst: -1, undecided: -1}
}

func (fs *fileState) snap(offset, lines int64) snapshot {
	return snapshot{offset: offset, lines: lines, model: fs.model, turn: fs.turn, total: fs.total, haveTotal: fs.haveTotal, cwd: fs.cwd}
}

// context is what the next run needs at the resume point.
func (fs *fileState) context() map[string]string {
	c := map[string]string{"own": fs.own, "session": fs.session, "project": fs.project, "branch": fs.branch, "title": fs.title}
	for k, v := range fs.meta {
		c["meta."+k] = v
	}
	if fs.haveMeta {
		c["have_meta"] = "1"
	}
	if fs.legacy {
		c["legacy"] = "1"
	}
	if !fs.ownStart.IsZero() {
		c["own_start"] = fs.ownStart.Format(time.RFC3339Nano)
	}
	if a := fs.agent; a != nil {
		c["agent_id"], c["agent_type"] = a.ID, a.Type
	}
	s := fs.resumeSnap
	c["model"], c["turn"], c["cwd"] = s.model, s.turn, s.cwd
	if s.haveTotal {
		c["total"] = s.total.String()
	}
	maps.DeleteFunc(c, func(_, v string) bool { return v == "" }) // an empty value is no value
	return c
}

// restore takes the context a checkpoint saved.
func (fs *fileState) restore(c map[string]string) {
	if c == nil {
		fs.resumeSnap = fs.snap(0, 0)
		return
	}
	fs.own, fs.session = cmp.Or(c["own"], fs.own), cmp.Or(c["session"], fs.session)
	fs.project, fs.branch, fs.title = c["project"], c["branch"], c["title"]
	fs.haveMeta, fs.legacy = c["have_meta"] == "1", c["legacy"] == "1"
	for k, v := range c {
		if m, ok := strings.CutPrefix(k, "meta."); ok {
			fs.meta[m] = v
		}
	}
	if t, ok := extract.ParseTime(c["own_start"]); ok {
		fs.ownStart = t
	}
	if c["agent_id"] != "" {
		fs.agent = &schema.Agent{ID: c["agent_id"], Type: c["agent_type"], Sidechain: true}
	}
	fs.model, fs.turn, fs.cwd = c["model"], c["turn"], c["cwd"]
	if t, ok := parseTokens(c["total"]); ok {
		fs.total, fs.haveTotal = t, true
	}
	fs.resumeSnap = fs.snap(0, 0)
}

package codex

import (
	"cmp"
	"encoding/json"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
)

// tokenCount attaches the usage a token_count adds to the request it
// closes. Re-emitted totals add nothing; a total that went down (a session
// whose counters restarted) counts its last request.
func (r *run) tokenCount(fs *fileState, p *payload) error {
	if p.Info == nil || (p.Info.Total == nil && p.Info.Last == nil) {
		return nil
	}
	var inc tokens
	switch t := p.Info.Total; {
	case t == nil:
		inc = *p.Info.Last
	case fs.haveTotal && *t == fs.total:
		return nil // re-emitted
	case fs.haveTotal && t.atLeast(fs.total):
		inc = t.sub(fs.total)
	case p.Info.Last != nil:
		// No baseline (or the counters restarted): the last request only.
		// A first total larger than its last request includes usage this
		// file does not show (a fork's inherited counters).
		inc = *p.Info.Last
	default:
		inc = *t
	}
	if t := p.Info.Total; t != nil {
		fs.total, fs.haveTotal = *t, true
	}
	inc = inc.add(fs.carry)
	fs.carry = tokens{}
	if fs.lastAsst < 0 {
		fs.carry = inc
		return nil
	}
	a := fs.pending[fs.lastAsst]
	u := usage(inc)
	if a.Usage != nil {
		u.Add(a.Usage)
	}
	a.Usage = &u
	r.closeRequest(fs)
	return r.flush(fs, false)
}

// usage maps Codex's counters onto schema.Usage. Codex counts cached input
// inside input_tokens (OpenAI's convention): Input is the uncached part and
// CacheRead the cached one, so that summing the four never counts a token
// twice. output_tokens already includes reasoning_output_tokens. OpenAI
// does not bill cache writes; a provider that reports them
// (cache_write_input_tokens) has them moved from Input to CacheCreation.
func usage(t tokens) schema.Usage {
	in := t.Input - t.Cached - t.CacheWrite
	if in < 0 {
		in = 0
	}
	return schema.Usage{Input: in, Output: t.Output, CacheCreation: t.CacheWrite, CacheRead: t.Cached}
}

// closeRequest ends the open request: its items are no longer held for
// a token count, and the next assistant item starts a new request.
func (r *run) closeRequest(fs *fileState) {
	fs.holdFrom, fs.lastAsst, fs.req = -1, -1, ""
}

// settleUndecided gives the user item still waiting for its event what its
// text suggests: a prompt, unless it looks like injected context.
func (r *run) settleUndecided(fs *fileState) {
	if fs.undecided < 0 {
		return
	}
	rec := fs.pending[fs.undecided]
	if fs.undecidedDef {
		r.prompt(fs, rec, fs.undecidedAt)
	} else {
		rec.Role, rec.ContentType = schema.RoleSystem, schema.ContentMeta
	}
	fs.undecided = -1
}

// add queues a record behind those still held, or emits it.
func (r *run) add(fs *fileState, rec *schema.Record, asst bool) error {
	if asst {
		if fs.holdFrom < 0 {
			fs.holdFrom = len(fs.pending)
		}
		fs.lastAsst = len(fs.pending)
	}
	if len(fs.pending) == 0 && !asst {
		return r.out(fs, rec)
	}
	fs.pending = append(fs.pending, rec)
	fs.pendingBytes += len(rec.Raw) + len(rec.Text) + len(rec.Thinking)
	if len(fs.pending) > maxPending || fs.pendingBytes > maxPendingBytes {
		return r.flush(fs, true)
	}
	return r.flush(fs, false)
}

// flush emits the queued records up to the first one still held (all of
// them with force).
func (r *run) flush(fs *fileState, force bool) error {
	n := len(fs.pending)
	if !force {
		if fs.undecided >= 0 {
			n = min(n, fs.undecided)
		}
		if fs.holdFrom >= 0 {
			n = min(n, fs.holdFrom)
		}
	} else {
		r.settleUndecided(fs)
	}
	if n == 0 {
		return nil
	}
	for _, rec := range fs.pending[:n] {
		if err := r.out(fs, rec); err != nil {
			return err
		}
	}
	rest := copy(fs.pending, fs.pending[n:])
	clear(fs.pending[rest:])
	fs.pending = fs.pending[:rest]
	fs.pendingBytes = 0
	for _, rec := range fs.pending {
		fs.pendingBytes += len(rec.Raw) + len(rec.Text) + len(rec.Thinking)
	}
	shift := func(i *int) {
		if *i >= 0 {
			if *i -= n; *i < 0 {
				*i = -1
			}
		}
	}
	shift(&fs.undecided)
	shift(&fs.holdFrom)
	shift(&fs.lastAsst)
	if force {
		fs.holdFrom, fs.lastAsst = -1, -1
	}
	return nil
}

// finish emits everything still held at the end of the file.
func (r *run) finish(fs *fileState) error {
	r.settleUndecided(fs)
	return r.flush(fs, true)
}

// out completes a record with what the file taught and emits it (a
// message after its native line's raw record).
func (r *run) out(fs *fileState, rec *schema.Record) error {
	rec.SessionID = fs.session
	rec.Project = fs.project
	if rec.Kind == schema.KindMessage {
		rec.Cwd, rec.GitBranch = fs.cwd, fs.branch
		rec.Agent = fs.agent
	}
	if rec.Kind == schema.KindRaw && rec.ID == "" {
		rec.ID = schema.RawID(rec)
	}
	return r.opt.EmitRecord(r.emit, rec)
}

// sessionRecord emits what Codex knows about the session beyond its
// messages: cwd, branch, thread name, CLI version, originator and source.
// A spawned subagent's rollout belongs to its parent's session and emits
// none.
func (r *run) sessionRecord(fs *fileState) error {
	if !fs.haveMeta || fs.agent != nil {
		return nil
	}
	rec := extract.SessionRecord(platform, fs.session, fs.lastTS, fs.mtime)
	rec.Project, rec.Cwd, rec.GitBranch = fs.project, cmp.Or(fs.project, fs.cwd), fs.branch
	rec.Title = fs.title
	rec.Model = fs.model
	rec.Completeness = schema.CompleteFull
	rec.Source = &schema.Source{Path: fs.path, Mtime: fs.mtime}
	rec.Session = &schema.Session{}
	if rec.Title != "" {
		rec.Session.TitleSource = schema.TitlePlatform
	}
	if len(fs.meta) > 0 {
		b, _ := json.Marshal(fs.meta) // sorted keys
		rec.Meta = b
	}
	r.opt.Stamp(rec, platform, AdapterVersion)
	return r.emit(rec)
}

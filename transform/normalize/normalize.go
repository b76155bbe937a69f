// Package normalize turns the records pos-extract emits into the indexed
// units: it splits each message's native record off into a raw record for
// the raw layer, drops exact replays, merges the lines of one assistant
// message, derives exchanges (a user prompt and everything until the next
// one) and subagent reports, and rolls sessions up.
//
// It streams: memory is bounded by the open exchange of each thread of the
// file being read and a fixed-size replay filter, not by the input size.
// Records of kinds it does not handle pass through unchanged.
package normalize

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/internal/joinstr"
	"github.com/pos-lake/pos/internal/jsontext"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/enrich"
)

// Options configure Normalize.
type Options struct {
	// Name is the input's name in diagnostics ("-" for stdin).
	Name string
	// KeepRaw leaves the native record on messages instead of splitting it
	// into a raw record.
	KeepRaw bool
	// OnSkip is told about each bad input line; its error stops the run.
	OnSkip schema.SkipFunc
	// ReplayWindow bounds the replay filter: message ids are remembered in
	// two generations of this many entries each.
	ReplayWindow int
	// Enrich chooses the enrichment: file references, commits, tags and
	// decisions (see transform/enrich).
	Enrich enrich.Options
	// Fast decodes the records and reads the tools' inputs; nil does it
	// in Go.
	Fast *jsontext.Fast
}

// Stats counts what a run did.
type Stats struct {
	In        int64 // records read
	Out       int64 // records written
	Skipped   int64 // bad lines
	Messages  int64 // messages written
	Merged    int64 // assistant lines merged into an earlier line's message
	Replays   int64 // messages dropped as exact replays
	Context   int64 // lines an earlier run delivered, read again to rebuild an open exchange
	Advisor   int64 // calls to an advisor model made messages of their own
	Raw       int64 // raw records written
	Exchanges int64
	Sessions  int64
	Documents int64
	FileRefs  int64
	Decisions int64
}

// Normalize reads records from r and writes normalized records to w.
func Normalize(ctx context.Context, r io.Reader, w io.Writer, opt Options) (Stats, error) {
	enc := schema.NewEncoder(w)
	n := New(opt, func(rec *schema.Record) error { return enc.Encode(rec) })
	// Raw records pass through undecoded; records normalize does not change
	// are written back as they were read, without encoding.
	skipped, err := schema.Each(ctx, r, schema.EachOptions{
		Name: opt.Name, OnSkip: opt.OnSkip, Lazy: []schema.Kind{schema.KindRaw}, KeepLines: true, Fast: opt.Fast,
	}, n.Add)
	n.stats.Skipped += skipped
	if err == nil {
		err = n.Close()
	}
	return n.stats, errors.Join(err, enc.Flush())
}

// Normalizer is the streaming state machine; Normalize drives it from NDJSON.
type Normalizer struct {
	opt   Options
	out   func(*schema.Record) error
	stats Stats

	file     string             // source path of the records being read
	threads  map[string]*thread // open threads of the current file
	order    []string           // thread keys in first-seen order
	sessions map[string]*rollup
	sessOrd  []string
	replay   replayFilter
	remap    map[string]string // absorbed line id -> merged message id (current file)
	bySlug   map[string][]*rollup
}

// New returns a Normalizer writing to out.
func New(opt Options, out func(*schema.Record) error) *Normalizer {
	if opt.ReplayWindow <= 0 {
		opt.ReplayWindow = 1 << 20
	}
	return &Normalizer{
		opt: opt, out: out,
		threads:  map[string]*thread{},
		sessions: map[string]*rollup{},
		remap:    map[string]string{},
		bySlug:   map[string][]*rollup{},
		replay:   replayFilter{max: opt.ReplayWindow},
	}
}

// Stats returns the counts so far.
func (n *Normalizer) Stats() Stats { return n.stats }

func (n *Normalizer) emit(rec *schema.Record) error {
	n.stats.Out++
	switch rec.Kind {
	case schema.KindMessage:
		n.stats.Messages++
	case schema.KindRaw:
		n.stats.Raw++
	case schema.KindExchange:
		n.stats.Exchanges++
	case schema.KindSession:
		n.stats.Sessions++
	case schema.KindDocument:
		n.stats.Documents++
	case schema.KindFileRef:
		n.stats.FileRefs++
	case schema.KindDecision:
		n.stats.Decisions++
	}
	return n.out(rec)
}

// Add takes one record.
func (n *Normalizer) Add(rec *schema.Record) error {
	n.stats.In++
	if p := sourcePath(rec); rec.Kind == schema.KindMessage && p != n.file {
		if err := n.flushFile(); err != nil {
			return err
		}
		n.file = p
	}
	switch rec.Kind {
	case schema.KindMessage:
		return n.message(rec)
	case schema.KindCheckpoint:
		// Everything read before the watermark goes out before it.
		if err := n.flushFile(); err != nil {
			return err
		}
		return n.emit(rec)
	case schema.KindSession:
		s := n.session(rec)
		s.hint(rec)
		if s.slug != "" && !slices.Contains(n.bySlug[s.slug], s) {
			n.bySlug[s.slug] = append(n.bySlug[s.slug], s)
		}
		return nil
	case schema.KindDocument:
		return n.document(rec)
	default:
		return n.emit(rec)
	}
}

// Close flushes every open unit and emits the session rollups.
func (n *Normalizer) Close() error {
	if err := n.flushFile(); err != nil {
		return err
	}
	for _, id := range n.sessOrd {
		s := n.sessions[id]
		if err := n.emit(s.record()); err != nil {
			return err
		}
	}
	return nil
}

func sourcePath(rec *schema.Record) string {
	if rec.Source == nil {
		return ""
	}
	return rec.Source.Path
}

func (n *Normalizer) message(rec *schema.Record) error {
	line := rec.Line
	rec.Line = nil // set again below if nothing changes
	if replayed(rec) {
		// An earlier run delivered it (and its native record): it only
		// rebuilds the open exchange, and is not written again.
		n.stats.Context++
		rec.Raw = nil
	}
	if len(rec.Raw) > 0 && !n.opt.KeepRaw {
		if err := n.emit(schema.SplitRaw(rec)); err != nil {
			return err
		}
		rec.Raw, line = nil, nil
	}
	if rec.ID != "" && n.replay.seen(rec.ID) {
		n.stats.Replays++
		return nil
	}
	if rec.TSPrecision == "" {
		rec.TSPrecision, line = schema.PrecisionUnknown, nil
		if !rec.TS.IsZero() {
			rec.TSPrecision = schema.PrecisionExact
		}
	}
	if rec.Completeness == "" {
		rec.Completeness, line = schema.CompleteUnknown, nil
	}
	if to, ok := n.remap[rec.ParentID]; ok {
		rec.ParentID, line = to, nil
	}
	rec.Line = line
	t := n.thread(rec)
	// Lines of one assistant message share its API message id and request
	// id; they are interleaved with tool results, never with another
	// assistant message of the same thread.
	if rec.Role == schema.RoleAssistant && rec.NativeID != "" {
		if o := t.open; o != nil && o.NativeID == rec.NativeID && o.RequestID == rec.RequestID {
			merge(o, rec)
			n.remap[rec.ID] = o.ID
			n.stats.Merged++
			return nil
		}
		if err := n.closeOpen(t); err != nil {
			return err
		}
		n.implicitExchange(t, rec)
		t.open = rec
		return nil
	}
	if isPrompt(rec) {
		if err := n.closeOpen(t); err != nil {
			return err
		}
		if err := n.closeExchange(t); err != nil {
			return err
		}
		t.ex = newExchange(rec)
	}
	n.implicitExchange(t, rec)
	return n.accept(t, rec)
}

// implicitExchange opens an exchange without a prompt for a subagent thread
// whose transcript starts after its prompt (Claude Code 2.0 agent files do
// not record it), so the subagent's work is still a unit of search.
func (n *Normalizer) implicitExchange(t *thread, rec *schema.Record) {
	if t.ex == nil && t.number == 0 && t.agent != nil && t.agent.Sidechain &&
		(rec.Role == schema.RoleAssistant || rec.Role == schema.RoleTool) {
		t.ex = newExchange(rec)
		t.ex.prompt = false
		t.ex.complete = schema.CompletePartial
	}
}

// isPrompt tells whether a message opens an exchange: text or a command
// the user typed (tool results and tool-injected text are not prompts).
func isPrompt(rec *schema.Record) bool {
	return rec.Role == schema.RoleUser && (rec.ContentType == schema.ContentText || rec.ContentType == schema.ContentCommand)
}

// accept counts a finished message into its exchange and session and
// writes it, then the calls to an advisor model made within it, each as
// a message of its own (advisorMessage).
func (n *Normalizer) accept(t *thread, rec *schema.Record) error {
	advisor := rec.Advisor
	if len(advisor) > 0 {
		rec.Advisor, rec.Line = nil, nil
	}
	if err := n.acceptOne(t, rec); err != nil {
		return err
	}
	for i := range advisor {
		n.stats.Advisor++
		if err := n.acceptOne(t, advisorMessage(rec, i, &advisor[i])); err != nil {
			return err
		}
	}
	return nil
}

// advisorMessage is the i-th call of an advisor model within message m:
// an assistant message of the advisor's model with its tokens and no
// text (content type "usage"), so that stats bills it at its model's
// rates and the exchange and session count it. Its id derives from m's,
// the same in every run.
func advisorMessage(m *schema.Record, i int, a *schema.ModelUsage) *schema.Record {
	u := a.Usage
	return &schema.Record{
		Schema: schema.Version, Kind: schema.KindMessage,
		ID:       schema.ID(m.Platform, "advisor", m.ID, strconv.Itoa(i)),
		Platform: m.Platform, SessionID: m.SessionID, ParentID: m.ID,
		TS: m.TS, TSPrecision: m.TSPrecision,
		Role: schema.RoleAssistant, ContentType: schema.ContentUsage,
		NativeType: "advisor_message", RequestID: m.RequestID,
		Model: a.Model, Usage: &u, Agent: m.Agent,
		Cwd: m.Cwd, GitBranch: m.GitBranch, Project: m.Project, User: m.User, Machine: m.Machine,
		Completeness: m.Completeness, Source: m.Source, Adapter: m.Adapter, IngestedAt: m.IngestedAt,
	}
}

func (n *Normalizer) acceptOne(t *thread, rec *schema.Record) error {
	if t.ex != nil {
		t.ex.add(rec)
	}
	n.session(rec).add(rec)
	if rec.Role == schema.RoleAssistant && strings.TrimSpace(rec.Text) != "" {
		t.lastText, t.lastTS = rec.Text, rec.TS
	}
	if t.prompt == "" && isPrompt(rec) {
		t.prompt = rec.Text
	}
	if replayed(rec) {
		return n.enrich(t, rec, false)
	}
	if err := n.emit(rec); err != nil {
		return err
	}
	return n.enrich(t, rec, true)
}

// replayed tells whether a message was read again from before an earlier
// run's watermark (see schema.Source.Replay).
func replayed(rec *schema.Record) bool { return rec.Source != nil && rec.Source.Replay }

func (n *Normalizer) closeOpen(t *thread) error {
	if t.open == nil {
		return nil
	}
	o := t.open
	t.open = nil
	return n.accept(t, o)
}

func (n *Normalizer) closeExchange(t *thread) error {
	if t.ex == nil {
		return nil
	}
	ex := t.ex
	t.ex = nil
	t.number++
	n.session(ex.rec).exchanges++
	r := ex.record(t.number)
	if n.opt.Enrich.Tags {
		r.Tags = enrich.Tags(enrich.DefaultTagRules, r.Text, r.Files)
	}
	return n.emit(r)
}

// flushFile closes every thread of the file read so far.
func (n *Normalizer) flushFile() error {
	for _, k := range n.order {
		t := n.threads[k]
		if err := n.closeOpen(t); err != nil {
			return err
		}
		if err := n.closeExchange(t); err != nil {
			return err
		}
		if t.agent != nil && t.lastText != "" && t.agent.Type != "compact" {
			if err := n.emit(t.report()); err != nil {
				return err
			}
			n.session(t.first).subagents++
		}
	}
	clear(n.threads)
	n.order = n.order[:0]
	clear(n.remap)
	return nil
}

// thread is one conversation thread of a file: the main thread of a session
// or one subagent's.
type thread struct {
	first    *schema.Record // the thread's first message
	agent    *schema.Agent
	open     *schema.Record // the assistant message being merged
	ex       *exchange      // the open exchange
	number   int64          // exchanges closed so far
	prompt   string         // the thread's first prompt
	lastText string         // the last assistant prose
	lastTS   time.Time
}

func (n *Normalizer) thread(rec *schema.Record) *thread {
	key := rec.Platform + "\x00" + rec.SessionID
	if rec.Agent != nil && rec.Agent.ID != "" {
		key += "\x00" + rec.Agent.ID
	}
	t, ok := n.threads[key]
	if !ok {
		t = &thread{first: rec}
		if rec.Agent != nil && rec.Agent.ID != "" {
			t.agent = rec.Agent
		}
		n.threads[key] = t
		n.order = append(n.order, key)
	}
	return t
}

// report is the subagent's final answer as a document.
func (t *thread) report() *schema.Record {
	f := t.first
	d := schema.New(schema.KindDocument)
	d.ID = schema.ID(f.Platform, "subagent", f.SessionID, t.agent.ID)
	d.Platform, d.SessionID = f.Platform, f.SessionID
	d.TS, d.TSPrecision = t.lastTS, schema.PrecisionExact
	d.Role, d.ContentType = schema.RoleAssistant, schema.ContentSubagentSummary
	d.Agent = t.agent
	d.Text = t.lastText
	// The prompt whole: pos-load keeps its first line (excerpt.Finish).
	title := excerpt.Source(t.prompt)
	if t.agent.Type != "" {
		title = t.agent.Type + ": " + title
	}
	d.Title = title
	d.Cwd, d.GitBranch, d.Project, d.User, d.Machine = f.Cwd, f.GitBranch, f.Project, f.User, f.Machine
	d.Completeness = schema.CompleteFull
	d.Adapter, d.IngestedAt = f.Adapter, f.IngestedAt
	if f.Source != nil {
		d.Source = &schema.Source{Path: f.Source.Path, Mtime: f.Source.Mtime}
	}
	return d
}

func (n *Normalizer) document(rec *schema.Record) error {
	if rec.ContentType == schema.ContentPlan && rec.NativeID != "" {
		// Plans are linked by slug: the adapter links what it saw this run,
		// and the sessions rolled up here learn their plan.
		for _, s := range n.bySlug[rec.NativeID] {
			if s.platform != rec.Platform {
				continue
			}
			if rec.SessionID == "" {
				rec.SessionID, rec.Line = s.session, nil
			}
			if rec.Agent == nil && s.session == rec.SessionID {
				s.planID = rec.ID
			}
		}
	}
	return n.emit(rec)
}

// merge folds a later line of an assistant message into the first.
func merge(o, rec *schema.Record) {
	o.Line = nil
	if replayed(o) && !replayed(rec) {
		// A message that goes on past the earlier run's watermark is new.
		src := *o.Source
		src.Replay = false
		o.Source = &src
	}
	o.Text = joinstr.NonEmpty(o.Text, rec.Text, "\n")
	o.Thinking = joinstr.NonEmpty(o.Thinking, rec.Thinking, "\n")
	o.Tools = append(o.Tools, rec.Tools...)
	for _, f := range rec.Files {
		if !slices.Contains(o.Files, f) {
			o.Files = append(o.Files, f)
		}
	}
	if rec.Usage != nil {
		// Every line repeats the usage so far; the last line's is final.
		o.Usage = rec.Usage
	}
	if len(rec.Advisor) > 0 {
		// Likewise the advisor's calls, written with the usage.
		o.Advisor = rec.Advisor
	}
	o.Model = cmp.Or(o.Model, rec.Model)
	if rec.ContentType == schema.ContentError || o.ContentType == schema.ContentError {
		o.ContentType = schema.ContentError
	} else {
		o.ContentType = schema.AssistantContentType(o.Text, o.Thinking, len(o.Tools))
	}
}

// replayFilter remembers message ids in two generations of bounded size.
type replayFilter struct {
	max       int
	cur, prev map[uint64]struct{}
}

func (f *replayFilter) seen(id string) bool {
	h := xxhash.Sum64String(id)
	if _, ok := f.cur[h]; ok {
		return true
	}
	if _, ok := f.prev[h]; ok {
		return true
	}
	if f.cur == nil || len(f.cur) >= f.max {
		// The first generation grows from empty: a sync of a few thousand
		// lines would otherwise clear a table of 65,536 slots (CPU time
		// and a megabyte of fresh pages); once one has filled, the next
		// will.
		hint := 0
		if f.cur != nil {
			hint = min(f.max, 1<<16)
		}
		f.prev, f.cur = f.cur, make(map[uint64]struct{}, hint)
	}
	f.cur[h] = struct{}{}
	return false
}

package query

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dustin/go-humanize"

	"github.com/pos-lake/pos/internal/english"
	"github.com/pos-lake/pos/load/catalog"
)

// Context pack modes.
const (
	ModeSmart  = "smart"  // plan > subagent reports and compaction summaries > first prompts > labels, decisions, files changed > later prompts and replies > files read
	ModeLabels = "labels" // the summary labels (chapter titles) only
	ModeAgents = "agents" // subagent reports only
	ModePlan   = "plan"   // plans only
	ModeFull   = "full"   // whole exchanges, newest first until the budget is used
)

// ContextModes lists the modes.
var ContextModes = []string{ModeSmart, ModeLabels, ModeAgents, ModePlan, ModeFull}

// maxPriority is the lowest priority an item has.
const maxPriority = 7

// DefaultContextTokens is the default budget of a pack.
const DefaultContextTokens = 15000

// MaxContextSessions is the most sessions a pack takes: each costs a few
// lookups, and a pack of more would give each only a sliver of its budget.
const MaxContextSessions = 20

// UniqueSessions returns the sessions without repeats (the same platform
// and id), in their first order.
func UniqueSessions(refs []SessionRef) []SessionRef {
	seen := make(map[[2]string]bool, len(refs))
	out := make([]SessionRef, 0, len(refs))
	for _, r := range refs {
		k := [2]string{r.Platform, r.SessionID}
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// ContextOptions choose a context pack.
type ContextOptions struct {
	Sessions  []SessionRef // in the order of importance; the first are kept when the budget is short
	Mode      string
	MaxTokens int
	// Until keeps only what happened before this time (zero: everything):
	// the pack an agent would have had at that moment.
	Until time.Time
	Now   time.Time // for ages and staleness (zero: time.Now)
	// Warnings are the caller's notes for the pack's reader (that a
	// search picked its sessions from lexical results only, say): printed
	// with the pack's own warnings, within its budget.
	Warnings []string
}

// ContextItem is one whole piece of text a pack may include.
type ContextItem struct {
	Kind     string    `json:"kind"` // plan, subagent_report, compaction_summary, first_prompt, stopped, tasks, labels, decisions, errors, records, files_changed, prompt, reply, files_read, exchange
	Priority int       `json:"priority"`
	TS       time.Time `json:"ts"`
	Title    string    `json:"title,omitempty"`
	Text     string    `json:"text,omitempty"`
	Tokens   int       `json:"tokens"`
	Included bool      `json:"included"`
	// Essential items (a session's first of each of the top three
	// priorities) are chosen before all others.
	Essential bool `json:"essential"`
}

// ContextSession is one session's part of a pack.
type ContextSession struct {
	SessionRef
	AgeDays   int           `json:"age_days"`
	Staleness string        `json:"staleness,omitempty"` // the notice for the session's age, if any
	Used      int           `json:"used_tokens"`
	Dropped   int           `json:"dropped_items"`
	Items     []ContextItem `json:"items"`
}

// ContextPack is the result: sessions, each with the items that fit.
type ContextPack struct {
	Mode      string           `json:"mode"`
	Budget    int              `json:"budget_tokens"`
	Used      int              `json:"used_tokens"`
	Remaining int              `json:"remaining_tokens"`
	Sessions  []ContextSession `json:"sessions"`
	Warnings  []string         `json:"warnings,omitempty"`
	now       time.Time
}

// EstimateTokens estimates how many tokens a text costs a model: about one
// per four characters of prose, a little more for code and symbols. It
// errs high, so a pack never exceeds its budget in practice.
func EstimateTokens(s string) int {
	n := utf8.RuneCountInString(s)
	sym := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{', '}', '(', ')', '[', ']', '<', '>', '=', ';', ':', ',', '"', '\'', '`', '/', '\\', '|', '*', '#', '\n':
			sym++
		}
	}
	return (n+3)/4 + sym/4 + 1
}

// Staleness is the notice for context of a given age (none under 7 days,
// mild to 30, medium to 90, strong beyond).
func Staleness(ageDays int) string {
	switch {
	case ageDays < 7:
		return ""
	case ageDays < 30:
		return fmt.Sprintf("This context is %d days old. Code may have changed since: verify the current state if anything seems off.", ageDays)
	case ageDays < 90:
		return fmt.Sprintf("STALENESS NOTICE: this context is %d days old. Code, APIs or project structure may have changed. Use it as a starting point for where to look, not as what is there now.", ageDays)
	}
	return fmt.Sprintf("OLD CONTEXT WARNING: this context is %d days old (about %d months). Significant changes are likely: treat it as history and re-explore the code before changing it.", ageDays, ageDays/30)
}

// Context builds a token-budgeted context pack from sessions. Texts are
// never cut: an item that does not fit is left out whole; when even the
// sessions' essentials do not fit, sessions are left out from the last, with
// a warning. The budget covers the headers the pack prints too.
func (d *DB) Context(ctx context.Context, opt ContextOptions) (*ContextPack, error) {
	if opt.Mode == "" {
		opt.Mode = ModeSmart
	}
	if !slices.Contains(ContextModes, opt.Mode) {
		return nil, argErrorf("unknown mode %q (use %s)", opt.Mode, strings.Join(ContextModes, ", "))
	}
	if opt.MaxTokens == 0 {
		opt.MaxTokens = DefaultContextTokens
	}
	if opt.MaxTokens < 100 {
		return nil, argErrorf("a budget of %d tokens is too small for a context pack", opt.MaxTokens)
	}
	if len(opt.Sessions) == 0 {
		return nil, argErrorf("no session given")
	}
	opt.Sessions = UniqueSessions(opt.Sessions)
	if len(opt.Sessions) > MaxContextSessions {
		return nil, argErrorf("a pack takes at most %d sessions (got %d)", MaxContextSessions, len(opt.Sessions))
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	if err := d.need(ctx, "documents", "messages", "exchange_rows", "decisions", "file_refs"); err != nil {
		return nil, err
	}
	p := &ContextPack{Mode: opt.Mode, Budget: opt.MaxTokens, now: opt.Now, Warnings: slices.Clone(opt.Warnings)}
	for _, ref := range opt.Sessions {
		s := ContextSession{SessionRef: ref}
		last := ref.LastTS
		if !opt.Until.IsZero() && (last.IsZero() || last.After(opt.Until)) {
			last = opt.Until
		}
		if !last.IsZero() {
			s.AgeDays = int(opt.Now.Sub(last).Hours() / 24)
		}
		s.Staleness = Staleness(s.AgeDays)
		items, err := d.contextItems(ctx, ref, opt)
		if err != nil {
			return nil, err
		}
		for i := range items {
			items[i].Tokens = EstimateTokens(renderItem(items[i]))
		}
		s.Items = items
		p.Sessions = append(p.Sessions, s)
	}
	p.fit()
	return p, nil
}

// fit chooses the items: each session's essentials first (the first item
// of each of the top three priorities), dropping sessions from the end
// until those fit; then every other item by priority, across sessions,
// while it fits.
//
// The room left for items is the budget less an upper bound of everything
// else the pack prints (its header, each session's header and warning, all
// with the largest figures they can show). Token estimates of parts add up
// to at least the estimate of the whole, so the pack never exceeds its
// budget.
func (p *ContextPack) fit() {
	all := len(p.Sessions)
	// overhead bounds what the pack prints besides its items when it keeps
	// the first n sessions: the warning about the others included.
	overhead := func(n int) int {
		q := ContextPack{Mode: p.Mode, Budget: p.Budget, Used: p.Budget, Remaining: p.Budget, now: p.now}
		t := EstimateTokens(q.header()) + EstimateTokens(endLine)
		for _, w := range p.Warnings {
			t += EstimateTokens(warningLine(w))
		}
		if n < all {
			t += EstimateTokens(warningLine(p.leftOut(n)))
		}
		for _, s := range p.Sessions[:n] {
			s.Used, s.Dropped = p.Budget, len(s.Items)
			t += EstimateTokens(sessionHeader(s, p.now)) + EstimateTokens(warningLine(droppedWarning(s)))
		}
		return t
	}
	essentials := func(s *ContextSession) (tokens int, idx []int) {
		seen := map[int]bool{}
		for i, it := range s.Items {
			if it.Priority <= 3 && !seen[it.Priority] {
				seen[it.Priority] = true
				tokens += it.Tokens
				idx = append(idx, i)
			}
		}
		return tokens, idx
	}
	total := func(n int) int {
		t := overhead(n)
		for i := 0; i < n; i++ {
			e, _ := essentials(&p.Sessions[i])
			t += e
		}
		return t
	}
	// The first session stays even when its essentials do not fit (what
	// fits of it is packed), unless not even its header does.
	n := all
	for n > 1 && total(n) > p.Budget {
		n--
	}
	if n == 1 && overhead(1) > p.Budget {
		n = 0
	}
	// The caller's warnings give way last (a pack never exceeds its
	// budget, even for them).
	for n == 0 && overhead(0) > p.Budget && len(p.Warnings) > 0 {
		p.Warnings = p.Warnings[:len(p.Warnings)-1]
	}
	if n < all {
		p.Warnings = append(p.Warnings, p.leftOut(n))
		p.Sessions = p.Sessions[:n]
		all = n
	}
	remaining := max(p.Budget-overhead(n), 0)
	take := func(s *ContextSession, i int) {
		if it := &s.Items[i]; !it.Included && it.Tokens <= remaining {
			it.Included = true
			remaining -= it.Tokens
		}
	}
	for si := range p.Sessions {
		_, idx := essentials(&p.Sessions[si])
		for _, i := range idx {
			p.Sessions[si].Items[i].Essential = true
			take(&p.Sessions[si], i)
		}
	}
	for prio := 1; prio <= maxPriority; prio++ {
		for si := range p.Sessions {
			s := &p.Sessions[si]
			for i := range s.Items {
				if s.Items[i].Priority == prio {
					take(s, i)
				}
			}
		}
	}
	p.account(remaining)
}

// account fills in the figures: tokens used per session and in all, what
// remains of the budget, and a warning per session that lost items.
func (p *ContextPack) account(remaining int) {
	for si := range p.Sessions {
		s := &p.Sessions[si]
		s.Used, s.Dropped = 0, 0
		for _, it := range s.Items {
			if it.Included {
				s.Used += it.Tokens
			} else {
				s.Dropped++
			}
		}
		if s.Dropped > 0 {
			p.Warnings = append(p.Warnings, droppedWarning(*s))
		}
	}
	p.Used, p.Remaining = p.Budget-remaining, remaining
}

// leftOut is the warning about the sessions after the first n, left out
// of the pack: the first few named, so that it stays short.
func (p *ContextPack) leftOut(n int) string {
	gone := p.Sessions[n:]
	budget := humanize.Comma(int64(p.Budget))
	if n == 0 {
		return fmt.Sprintf("left out every session (%d): not even a session's header fits the %s-token budget", len(gone), budget)
	}
	var ids []string
	for _, s := range gone[:min(len(gone), maxNamed)] {
		ids = append(ids, s.SessionID)
	}
	list := strings.Join(ids, ", ")
	if len(gone) > maxNamed {
		list += fmt.Sprintf(" and %d more", len(gone)-maxNamed)
	}
	return fmt.Sprintf("left out %s to fit the %s-token budget: %s", english.Plural(len(gone), "session"), budget, list)
}

// maxNamed is how many left-out sessions a warning names.
const maxNamed = 5

func droppedWarning(s ContextSession) string {
	return fmt.Sprintf("session %s: left out %s that did not fit (whole items are never cut)", s.SessionID, english.Plural(s.Dropped, "item"))
}

func warningLine(w string) string { return "> Warning: " + w + "\n\n" }

const endLine = "_End of context from previous sessions._\n"

// contextItems reads a session's candidate items for a mode, in priority
// order (and time order within a priority).
func (d *DB) contextItems(ctx context.Context, ref SessionRef, opt ContextOptions) ([]ContextItem, error) {
	until := opt.Until
	if until.IsZero() {
		until = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	var items []ContextItem
	messages, exchanges, err := d.sessionViews(ctx, ref)
	if err != nil {
		return nil, err
	}
	q := func(query string, kind string, prio int, args ...any) error {
		rows, err := d.db.QueryContext(ctx, query, args...)
		if err != nil {
			return sqlErr(err)
		}
		defer rows.Close()
		for rows.Next() {
			var it ContextItem
			var ts sql.NullTime
			if err := rows.Scan(&ts, &it.Title, &it.Text); err != nil {
				return sqlErr(err)
			}
			it.Kind, it.Priority, it.TS = kind, prio, utc(ts)
			if strings.TrimSpace(it.Text) != "" {
				items = append(items, it)
			}
		}
		return sqlErr(rows.Err())
	}
	slug, labels, err := d.sessionMeta(ctx, ref)
	if err != nil {
		return nil, err
	}
	plans := func() error {
		return q(`SELECT d.ts, coalesce(d.title, ''), coalesce(d.text, '') FROM documents d
WHERE d.content_type = 'plan' AND d.ts < ? AND (d.session_id = ? OR d.native_id = ?)
ORDER BY d.agent_id NULLS FIRST, d.ts`, "plan", 1, until, ref.SessionID, sql.NullString{String: slug, Valid: slug != ""})
	}
	agents := func(prio int) error {
		return q(`SELECT ts, coalesce(title, ''), coalesce(text, '') FROM documents
WHERE platform = ? AND session_id = ? AND content_type = 'subagent_summary' AND ts < ? ORDER BY ts`,
			"subagent_report", prio, ref.Platform, ref.SessionID, until)
	}
	switch opt.Mode {
	case ModePlan:
		if err := plans(); err != nil {
			return nil, err
		}
	case ModeAgents:
		if err := agents(2); err != nil {
			return nil, err
		}
	case ModeLabels:
		if len(labels) > 0 {
			items = append(items, ContextItem{Kind: "labels", Priority: 4, Title: "Chapter labels", Text: "- " + strings.Join(labels, "\n- ")})
		}
	case ModeFull:
		if err := q(`SELECT ts, 'Exchange ' || exchange_number, coalesce(text, '') FROM `+catalog.OneSessionExchangesFrom(exchanges)+`
WHERE NOT sidechain AND ts < $3 ORDER BY ts DESC`,
			"exchange", 1, ref.Platform, ref.SessionID, until); err != nil {
			return nil, err
		}
	default: // smart
		if err := plans(); err != nil {
			return nil, err
		}
		if err := q(`SELECT ts, 'Compaction summary', coalesce(text, '') FROM `+messages+`
WHERE platform = ? AND session_id = ? AND content_type = 'compact_summary' AND ts < ? ORDER BY ts DESC`,
			"compaction_summary", 2, ref.Platform, ref.SessionID, until); err != nil {
			return nil, err
		}
		if err := agents(2); err != nil {
			return nil, err
		}
		var prompts []ContextItem
		var starts []exchangeStart
		rows, err := d.db.QueryContext(ctx, `SELECT ts, coalesce(prompt, '') FROM `+exchanges+`
WHERE platform = ? AND session_id = ? AND NOT sidechain AND ts < ? ORDER BY ts`,
			ref.Platform, ref.SessionID, until)
		if err != nil {
			return nil, sqlErr(err)
		}
		for rows.Next() {
			var it ContextItem
			var ts sql.NullTime
			if err := rows.Scan(&ts, &it.Text); err != nil {
				rows.Close()
				return nil, sqlErr(err)
			}
			it.TS = utc(ts)
			starts = append(starts, exchangeStart{ts: it.TS, prompt: it.Text})
			if strings.TrimSpace(it.Text) != "" {
				prompts = append(prompts, it)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, sqlErr(err)
		}
		// What the assistant said and did, which the prompts do not say:
		// per exchange, at the exchange's time so that it follows its
		// prompt; the errors its tools met; where the work stopped.
		steps, todos, err := d.work(ctx, messages, ref, until)
		if err != nil {
			return nil, err
		}
		replies := replyItems(steps, starts)
		for i, it := range prompts {
			it.Kind, it.Priority = "first_prompt", 3
			if i >= 3 {
				it.Kind, it.Priority = "prompt", 5
			}
			items = append(items, it)
		}
		if it, ok := stoppedItem(steps, todos, starts); ok {
			items = append(items, it)
		}
		items = append(items, tasksItems(steps, min(trackerTokens, opt.MaxTokens/tasksShare))...)
		items = append(items, errorsItems(steps, opt.MaxTokens/errorsShare)...)
		if it, ok := recordsItem(steps, opt.MaxTokens/recordsShare); ok {
			items = append(items, it)
		}
		items = append(items, replies...)
		if len(labels) > 0 && opt.Until.IsZero() {
			items = append(items, ContextItem{Kind: "labels", Priority: 4, Title: "Chapter labels", Text: "- " + strings.Join(labels, "\n- ")})
		}
		more, err := d.enrichmentItems(ctx, ref, messages, until, opt.MaxTokens/decisionsShare)
		if err != nil {
			return nil, err
		}
		items = append(items, more...)
		// Later prompts: the newest first, so the latest intent wins.
		slices.SortStableFunc(items, func(a, b ContextItem) int {
			if a.Priority != b.Priority {
				return a.Priority - b.Priority
			}
			if a.Priority == 5 {
				return b.TS.Compare(a.TS)
			}
			return 0
		})
	}
	return items, nil
}

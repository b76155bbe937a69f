package normalize

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/internal/joinstr"
	"github.com/pos-lake/pos/schema"
)

// exchange accumulates a prompt and what followed it.
type exchange struct {
	rec      *schema.Record // the prompt, or the first message when prompt is false
	prompt   bool
	last     *schema.Record
	response []string
	tools    []string
	files    []string
	commits  []string
	models   []string
	nTools   int64
	nMsgs    int64
	usage    schema.Usage
	lastTS   time.Time
	complete schema.Completeness
}

func newExchange(prompt *schema.Record) *exchange {
	return &exchange{rec: prompt, prompt: true, complete: prompt.Completeness}
}

func (e *exchange) add(m *schema.Record) {
	if m == e.rec && e.prompt {
		e.nMsgs++
		return
	}
	e.nMsgs++
	e.last = m
	if !m.TS.IsZero() && m.TS.After(e.lastTS) {
		e.lastTS = m.TS
	}
	if m.Role == schema.RoleAssistant {
		if t := strings.TrimSpace(m.Text); t != "" {
			e.response = append(e.response, t)
		}
		if m.Model != "" && !slices.Contains(e.models, m.Model) && m.Model != "<synthetic>" {
			e.models = append(e.models, m.Model)
		}
		for _, t := range m.Tools {
			e.nTools++
			if t.Name != "" && !slices.Contains(e.tools, t.Name) {
				e.tools = append(e.tools, t.Name)
			}
		}
		e.usage.Add(m.Usage)
	}
	for _, f := range m.Files {
		if !slices.Contains(e.files, f) {
			e.files = append(e.files, f)
		}
	}
	if m.Completeness != schema.CompleteFull {
		e.complete = worse(e.complete, m.Completeness)
	}
}

// worse returns the less complete of two completeness values.
func worse(a, b schema.Completeness) schema.Completeness {
	rank := map[schema.Completeness]int{schema.CompleteFull: 0, schema.CompletePartial: 1, schema.CompleteUnknown: 2, schema.CompleteMetadata: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func (e *exchange) record(number int64) *schema.Record {
	p := e.rec
	r := schema.New(schema.KindExchange)
	r.ID = schema.ExchangeID(p.Platform, p.ID)
	r.Platform, r.SessionID, r.ParentID = p.Platform, p.SessionID, p.ID
	r.TS, r.TSPrecision = p.TS, p.TSPrecision
	r.Role, r.ContentType = schema.RoleUser, schema.ContentExchange
	r.Agent = p.Agent
	r.Cwd, r.GitBranch, r.Project, r.User, r.Machine = p.Cwd, p.GitBranch, p.Project, p.User, p.Machine
	r.Files = e.files
	r.Completeness = e.complete
	r.Adapter, r.IngestedAt = p.Adapter, p.IngestedAt
	response := strings.Join(e.response, "\n\n")
	prompt := ""
	if e.prompt {
		prompt = p.Text
	}
	r.Text = joinstr.NonEmpty(prompt, response, "\n\n")
	if !e.usage.IsZero() {
		u := e.usage
		r.Usage = &u
	}
	if len(e.models) > 0 {
		r.Model = e.models[0]
	}
	r.Exchange = &schema.Exchange{
		Commits:      e.commits,
		Number:       number,
		TSEnd:        cmpTime(e.lastTS, p.TS),
		Prompt:       prompt,
		Response:     response,
		MessageCount: e.nMsgs,
		ToolCount:    e.nTools,
		Tools:        e.tools,
		Models:       e.models,
		PromptID:     p.ID,
	}
	if e.last != nil {
		r.Exchange.LastID = e.last.ID
	}
	return r
}

func cmpTime(a, b time.Time) time.Time {
	if a.IsZero() {
		return b
	}
	return a
}

// rollup accumulates one session.
type rollup struct {
	platform, session string
	first             *schema.Record
	hintRec           *schema.Record
	slug, title       string
	titleSource       string // of title: what the adapter said (platform, prompt …)
	firstPrompt       string
	firstTS, lastTS   time.Time
	nMsgs, nUser      int64
	nAsst, nTools     int64
	exchanges         int64
	subagents         int64
	compactions       int64
	labels            []string
	prs               []string // pull requests the adapter said the session linked
	models            map[string]*schema.ModelUsage
	planID            string
	complete          schema.Completeness
}

func (n *Normalizer) session(rec *schema.Record) *rollup {
	key := rec.Platform + "\x00" + rec.SessionID
	s, ok := n.sessions[key]
	if !ok {
		s = &rollup{platform: rec.Platform, session: rec.SessionID, first: lineless(rec), models: map[string]*schema.ModelUsage{}}
		n.sessions[key] = s
		n.sessOrd = append(n.sessOrd, key)
	}
	return s
}

// hint folds a session record an adapter emitted (slug, title, metadata).
func (s *rollup) hint(rec *schema.Record) {
	s.hintRec = lineless(rec)
	if rec.Session != nil && rec.Session.Slug != "" {
		s.slug = rec.Session.Slug
	}
	if rec.Session != nil {
		for _, u := range rec.Session.PullRequests {
			if !slices.Contains(s.prs, u) {
				s.prs = append(s.prs, u)
			}
		}
	}
	if rec.Title != "" {
		src := schema.TitlePlatform
		if rec.Session != nil && rec.Session.TitleSource != "" {
			src = rec.Session.TitleSource
		}
		// The name the user gave the session outlasts a later platform
		// label; of two of a kind, the later wins.
		if s.title == "" || schema.TitleRank(src) >= schema.TitleRank(s.titleSource) {
			s.title, s.titleSource = rec.Title, src
		}
	}
}

func (s *rollup) add(m *schema.Record) {
	s.nMsgs++
	if !m.TS.IsZero() {
		if s.firstTS.IsZero() || m.TS.Before(s.firstTS) {
			s.firstTS = m.TS
		}
		if m.TS.After(s.lastTS) {
			s.lastTS = m.TS
		}
	}
	switch m.Role {
	case schema.RoleUser:
		if isPrompt(m) && (m.Agent == nil || !m.Agent.Sidechain) {
			s.nUser++
			if s.firstPrompt == "" && (m.Agent == nil || !m.Agent.Sidechain) {
				s.firstPrompt = m.Text
			}
		}
	case schema.RoleAssistant:
		s.nAsst++
		s.nTools += int64(len(m.Tools))
		if m.Model != "" {
			mu, ok := s.models[m.Model]
			if !ok {
				mu = &schema.ModelUsage{Model: m.Model}
				s.models[m.Model] = mu
			}
			mu.Messages++
			mu.Usage.Add(m.Usage)
		}
	}
	switch m.ContentType {
	case schema.ContentSummaryLabel:
		if !slices.Contains(s.labels, m.Text) {
			s.labels = append(s.labels, m.Text)
		}
	case schema.ContentCompactBoundary:
		s.compactions++
	}
	s.complete = worse(cmp.Or(s.complete, schema.CompleteFull), m.Completeness)
}

// lineless is what a rollup keeps of a record, for the whole run: a copy
// without its line, which would keep the block the line was read into
// (1 MB, schema.NewKeptLineReader) alive with it.
func lineless(rec *schema.Record) *schema.Record {
	c := *rec
	c.Line = nil
	return &c
}

// record is the session rollup as a record.
func (s *rollup) record() *schema.Record {
	base := s.first
	if s.hintRec != nil {
		base = s.hintRec
	}
	r := schema.New(schema.KindSession)
	r.ID = schema.SessionRecordID(s.platform, s.session)
	r.Platform, r.SessionID = s.platform, s.session
	r.TS, r.TSPrecision = s.firstTS, schema.PrecisionExact
	if r.TS.IsZero() {
		r.TS, r.TSPrecision = base.TS, base.TSPrecision
	}
	r.Cwd, r.GitBranch, r.Project, r.User, r.Machine = base.Cwd, base.GitBranch, base.Project, base.User, base.Machine
	r.Adapter, r.IngestedAt = base.Adapter, base.IngestedAt
	r.Completeness = cmp.Or(s.complete, schema.CompleteUnknown)
	if s.hintRec != nil {
		r.Meta = s.hintRec.Meta
		if s.hintRec.Completeness != "" {
			r.Completeness = s.hintRec.Completeness
		}
	}
	// The title: what the user or the platform calls the session, else the
	// latest summary label Claude Code wrote, else the first prompt.
	titleSource := s.titleSource
	r.Title = s.title
	if r.Title == "" && len(s.labels) > 0 {
		r.Title, titleSource = s.labels[len(s.labels)-1], schema.TitleLabel
	}
	if r.Title == "" {
		// The prompt's first line, cut by a stage after pos-scrub (see
		// excerpt.Finish).
		r.Title, titleSource = excerpt.Source(s.firstPrompt), schema.TitlePrompt
	}
	if r.Title == "" {
		titleSource = ""
	}
	var total schema.Usage
	var models []schema.ModelUsage
	for _, m := range s.models {
		models = append(models, *m)
		total.Add(&m.Usage)
	}
	slices.SortFunc(models, func(a, b schema.ModelUsage) int { return cmp.Compare(a.Model, b.Model) })
	if !total.IsZero() {
		r.Usage = &total
	}
	r.Session = &schema.Session{
		Slug: s.slug, TitleSource: titleSource, FirstTS: s.firstTS, LastTS: s.lastTS,
		MessageCount: s.nMsgs, UserCount: s.nUser, AssistantCnt: s.nAsst, ToolCount: s.nTools,
		ExchangeCount: s.exchanges, Models: models, Labels: s.labels, PlanID: s.planID,
		Compactions: s.compactions, Subagents: s.subagents, PullRequests: s.prs,
	}
	return r
}

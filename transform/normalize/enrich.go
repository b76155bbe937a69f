package normalize

import (
	"slices"
	"strconv"

	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/enrich"
)

// enrich emits the file references and decisions of a message that was
// just written, and notes its files and the commits its tools reported on
// its exchange. A message an earlier run delivered (write false) only adds
// to its exchange: its references and decisions are in the lake already.
func (n *Normalizer) enrich(t *thread, m *schema.Record, write bool) error {
	opt := n.opt.Enrich
	if !opt.Any() {
		return nil
	}
	exchangeID := ""
	if t.ex != nil {
		exchangeID = schema.ExchangeID(t.ex.rec.Platform, t.ex.rec.ID)
	}
	if opt.Files && (len(m.Tools) > 0 || len(m.Files) > 0) && m.Role != schema.RoleTool {
		for _, ref := range enrich.FileRefs(n.opt.Fast, m) {
			ref.ExchangeID = exchangeID
			r := derived(m, schema.KindFileRef, schema.ID(m.Platform, "file", m.ID, ref.Action, ref.Path))
			r.FileRef = &ref
			if t.ex != nil && !slices.Contains(t.ex.files, ref.Path) {
				t.ex.files = append(t.ex.files, ref.Path)
			}
			if !write {
				continue
			}
			if err := n.emit(r); err != nil {
				return err
			}
		}
	}
	if opt.Commits && m.Role == schema.RoleTool && t.ex != nil {
		for _, tl := range m.Tools {
			for _, c := range enrich.Commits(tl.Output) {
				if !slices.Contains(t.ex.commits, c) {
					t.ex.commits = append(t.ex.commits, c)
				}
			}
		}
	}
	if write && opt.Decisions && m.Text != "" && (m.Role == schema.RoleAssistant || isPrompt(m)) {
		context := ""
		for i, f := range enrich.Decisions(enrich.DefaultPatterns, m.Text) {
			if i == 0 && t.ex != nil && t.ex.prompt {
				// The prompt, whose first line a stage after pos-scrub
				// keeps (excerpt.Finish).
				context = excerpt.ContextSource(t.ex.rec.Text)
			}
			r := derived(m, schema.KindDecision, schema.ID(m.Platform, "decision", m.ID, strconv.Itoa(i)))
			// The sentence and what follows it, which a stage after
			// pos-scrub cuts to the sentence (excerpt.Finish).
			r.Text = f.Source
			r.ContentType = "decision"
			r.Decision = &schema.Decision{Confidence: f.Confidence, Status: f.Status, Patterns: f.Patterns,
				ExchangeID: exchangeID, MessageID: m.ID, Context: context}
			if err := n.emit(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// derived is a record made from a message: its place, time and people.
func derived(m *schema.Record, kind schema.Kind, id string) *schema.Record {
	r := schema.New(kind)
	r.ID, r.Platform, r.SessionID, r.ParentID = id, m.Platform, m.SessionID, m.ID
	r.TS, r.TSPrecision, r.Role = m.TS, m.TSPrecision, m.Role
	r.Agent = m.Agent
	r.Cwd, r.GitBranch, r.Project, r.User, r.Machine = m.Cwd, m.GitBranch, m.Project, m.User, m.Machine
	r.Completeness, r.Adapter, r.IngestedAt = m.Completeness, m.Adapter, m.IngestedAt
	return r
}

package query

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/pos-lake/pos/internal/english"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
)

// Summary strategies.
const (
	// StrategyExtractive picks the most informative sentences of the
	// session's prompts, answers, subagent reports and compaction
	// summaries, locally and deterministically (see extractive).
	StrategyExtractive = "extractive"
	// StrategyAbstractive asks an LLM for a summary of the whole session in
	// one request (the first exchange and the latest that fit, when the
	// session is larger than one request).
	StrategyAbstractive = "abstractive"
	// StrategyRolling summarizes the first chunk, then folds each next
	// chunk into the summary so far, in order, as compaction does.
	StrategyRolling = "rolling"
	// StrategyMapReduce summarizes the chunks concurrently, then combines
	// the part summaries (in groups, level by level, until one is left).
	StrategyMapReduce = "map-reduce"
	// StrategyHierarchical returns every level: the chunks' summaries, the
	// session summary made from them, and a two- or three-sentence
	// abstract.
	StrategyHierarchical = "hierarchical"
	// StrategyAuto chooses by the session's size: extractive without an
	// LLM; with one, abstractive when the session fits one request, rolling
	// up to AutoRollingChunks chunks, map-reduce beyond.
	StrategyAuto = "auto"
)

// SummaryStrategies lists the strategies.
var SummaryStrategies = []string{StrategyExtractive, StrategyAbstractive, StrategyRolling, StrategyMapReduce, StrategyHierarchical, StrategyAuto}

var strategyAliases = map[string]string{
	"map_reduce": StrategyMapReduce, "mapreduce": StrategyMapReduce, "recursive": StrategyRolling,
	"extract": StrategyExtractive, "abstract": StrategyAbstractive,
}

// ParseStrategy checks a strategy name ("" is extractive).
func ParseStrategy(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return StrategyExtractive, nil
	}
	if a, ok := strategyAliases[s]; ok {
		s = a
	}
	if !slices.Contains(SummaryStrategies, s) {
		return "", argErrorf("unknown strategy %q (use %s)", s, strings.Join(SummaryStrategies, ", "))
	}
	return s, nil
}

// Defaults of SummarizeOptions.
const (
	DefaultChunkTokens  = 6000 // the session text in one LLM request
	DefaultSummaryWords = 300  // the length asked of a session summary
	DefaultSentences    = 10   // extractive: sentences picked
	// AutoRollingChunks is the largest session, in chunks, that auto
	// summarizes with rolling: beyond it, map-reduce's parallel map step is
	// faster.
	AutoRollingChunks = 4
)

// SummarizeOptions choose the session and how it is summarized.
type SummarizeOptions struct {
	// Session is a session id or a unique prefix of one; empty means the
	// most recently active session (of Platform and Project, if given).
	Session, Platform, Project string
	// Strategy is one of SummaryStrategies (default extractive).
	Strategy string
	// LLM is the chat endpoint of the LLM strategies.
	LLM LLMOptions
	// ChunkTokens bounds the session text sent in one request (default
	// DefaultChunkTokens); the session is cut into chunks of whole
	// exchanges that fit it (an exchange larger than a chunk is shortened).
	ChunkTokens int
	// Words is the length asked of the summary (default 300); chunk
	// summaries get half.
	Words int
	// Sentences is how many sentences extractive picks (default 10).
	Sentences int
	// Refresh makes a new summary even if the lake holds one for the
	// session's current state.
	Refresh bool
	// NoStore leaves a new summary out of the lake (a stored one is still
	// reused).
	NoStore bool
	// Now stamps a stored summary (default time.Now).
	Now func() time.Time
}

// Summary is a summary of a session as it stood at its last message.
type Summary struct {
	Platform      string    `json:"platform"`
	SessionID     string    `json:"session_id"`
	Title         string    `json:"title"`
	Project       string    `json:"project"`
	Strategy      string    `json:"strategy"`           // the strategy used (auto resolved)
	Requested     string    `json:"requested_strategy"` // as asked
	Model         string    `json:"model"`              // the LLM's; empty for extractive
	LastMessageID string    `json:"last_message_id"`    // the session state summarized
	LastTS        time.Time `json:"last_ts"`
	Messages      int64     `json:"message_count"`
	Exchanges     int64     `json:"exchange_count"`
	Text          string    `json:"text"`
	// Levels are every level of a hierarchical summary: 1 the chunks', then
	// any intermediate sections, then the session summary, then the
	// abstract.
	Levels []SummaryLevel `json:"levels,omitempty"`
	Notes  []string       `json:"notes,omitempty"`
	// Reused says the summary was read from the lake: it was made earlier
	// for the same state of the session.
	Reused    bool      `json:"reused"`
	Stored    bool      `json:"stored"` // in the lake (reused, or written now)
	CreatedAt time.Time `json:"created_at"`
	LLMUsage
}

// LLMUsage counts the requests and tokens a summary cost.
type LLMUsage struct {
	Calls        int64 `json:"llm_calls"`
	InputTokens  int64 `json:"llm_input_tokens"`
	OutputTokens int64 `json:"llm_output_tokens"`
	DurationMS   int64 `json:"duration_ms"`
}

// SummaryLevel is one level of a hierarchical summary.
type SummaryLevel struct {
	Level int           `json:"level"`
	Name  string        `json:"name"` // chunks, sections, session, abstract
	Parts []SummaryPart `json:"parts"`
}

// SummaryPart is one summary of a level: of the exchanges First to Last
// (0 when the part holds no exchange, only reports).
type SummaryPart struct {
	First int64     `json:"first_exchange"`
	Last  int64     `json:"last_exchange"`
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	Text  string    `json:"text"`
}

// Summarize summarizes a session. A summary of the session's current state
// (its last message) made with the same strategy, model and parameters is
// read back from the lake instead of being made again; a new one is stored
// in the lake (indexed/summaries) unless NoStore. Failing to store it is a
// note, not an error.
func (d *DB) Summarize(ctx context.Context, opt SummarizeOptions) (*Summary, error) {
	if err := d.need(ctx, "summaries", "messages", "documents", "exchange_rows"); err != nil {
		return nil, err
	}
	start := time.Now()
	strategy, err := ParseStrategy(opt.Strategy)
	if err != nil {
		return nil, err
	}
	if opt.ChunkTokens == 0 {
		opt.ChunkTokens = DefaultChunkTokens
	}
	if opt.ChunkTokens < 1000 {
		return nil, argErrorf("a chunk of %d tokens is too small (at least 1000)", opt.ChunkTokens)
	}
	if opt.Words <= 0 {
		opt.Words = DefaultSummaryWords
	}
	if opt.Sentences <= 0 {
		opt.Sentences = DefaultSentences
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if isLLMStrategy(strategy) && opt.LLM.Model == "" {
		return nil, argErrorf("the %s strategy needs an LLM: give its model (--llm-model or $POS_LLM_MODEL) and endpoint "+
			"(--llm-base-url or $POS_LLM_BASE_URL, e.g. http://localhost:11434/v1 for Ollama); extractive needs none", strategy)
	}
	ref, err := d.ResolveSession(ctx, opt.Session, opt.Platform, opt.Project)
	if err != nil {
		return nil, err
	}
	s := &Summary{Platform: ref.Platform, SessionID: ref.SessionID, Title: ref.Title, Project: ref.Project, Requested: strategy}
	if err := d.sessionState(ctx, ref, s); err != nil {
		return nil, err
	}
	var m *material
	var choice string // why auto chose the strategy; not stored with the summary
	if strategy == StrategyAuto {
		if m, err = d.summaryMaterial(ctx, ref); err != nil {
			return nil, err
		}
		strategy = autoStrategy(m, opt)
		choice = autoNote(strategy, m, opt)
	}
	s.Strategy = strategy
	if isLLMStrategy(strategy) {
		s.Model = opt.LLM.Model
	}
	params := summaryParams(strategy, opt)
	id := load.SummaryID(s.Platform, s.SessionID, s.LastMessageID, s.Strategy, s.Model, params)
	if !opt.Refresh {
		found, err := d.storedSummary(ctx, id, s)
		if err != nil {
			return nil, err
		}
		if found {
			s.Notes = withNote(choice, s.Notes)
			return s, nil
		}
	}
	if m == nil {
		if m, err = d.summaryMaterial(ctx, ref); err != nil {
			return nil, err
		}
	}
	s.Exchanges = int64(m.exchanges)
	if strategy == StrategyExtractive {
		s.Text = extractive(m, opt.Sentences)
	} else {
		llm, err := newLLM(opt.LLM)
		if err != nil {
			return nil, err
		}
		if err := summarizeLLM(ctx, llm, m, strategy, opt, s); err != nil {
			return nil, err
		}
		s.Calls, s.InputTokens, s.OutputTokens = llm.calls.Load(), llm.in.Load(), llm.out.Load()
		s.Notes = append(s.Notes, llm.notes()...)
	}
	s.DurationMS = time.Since(start).Milliseconds()
	s.CreatedAt = opt.Now().UTC()
	if !opt.NoStore {
		if err := d.storeSummary(ctx, s, params, ref.FirstTS); err != nil {
			s.Notes = append(s.Notes, "not stored in the lake: "+err.Error())
		} else {
			s.Stored = true
		}
	}
	s.Notes = withNote(choice, s.Notes)
	return s, nil
}

// withNote puts a note before the others.
func withNote(note string, notes []string) []string {
	if note == "" {
		return notes
	}
	return append([]string{note}, notes...)
}

func isLLMStrategy(s string) bool {
	return s != StrategyExtractive && s != StrategyAuto
}

// Versions of the summary texts: a change in how they are made changes the
// key, so summaries made the old way are not reused.
const (
	extractiveVersion = "extractive/v1"
	llmVersion        = "llm/v1"
)

// summaryParams are the options that shape a summary's text, part of its
// key.
func summaryParams(strategy string, opt SummarizeOptions) string {
	if strategy == StrategyExtractive {
		return fmt.Sprintf("%s sentences=%d", extractiveVersion, opt.Sentences)
	}
	return fmt.Sprintf("%s chunk=%d words=%d", llmVersion, opt.ChunkTokens, opt.Words)
}

// autoStrategy chooses a strategy by the session's size.
func autoStrategy(m *material, opt SummarizeOptions) string {
	if opt.LLM.Model == "" {
		return StrategyExtractive
	}
	switch n := len(chunkSegments(m.segments, contentBudget(opt))); {
	case n <= 1:
		return StrategyAbstractive
	case n <= AutoRollingChunks:
		return StrategyRolling
	}
	return StrategyMapReduce
}

func autoNote(strategy string, m *material, opt SummarizeOptions) string {
	if opt.LLM.Model == "" {
		return "auto: no LLM configured (--llm-model), so extractive"
	}
	n := len(chunkSegments(m.segments, contentBudget(opt)))
	return fmt.Sprintf("auto: %s for a session of %s (%s of at most %s tokens)", strategy,
		english.Plural(m.exchanges, "exchange"), english.Plural(n, "chunk"), humanize.Comma(int64(opt.ChunkTokens)))
}

// sessionState fills in the session's last message and message count: the
// state a summary is of.
func (d *DB) sessionState(ctx context.Context, ref SessionRef, s *Summary) error {
	var last sql.NullTime
	messages, _, err := d.sessionViews(ctx, ref)
	if err != nil {
		return err
	}
	err = d.db.QueryRowContext(ctx, `SELECT id, ts, count(*) OVER () FROM `+messages+`
WHERE platform = ? AND session_id = ?
ORDER BY ts DESC, id DESC LIMIT 1`, ref.Platform, ref.SessionID).Scan(&s.LastMessageID, &last, &s.Messages)
	if err == sql.ErrNoRows {
		return argErrorf("session %s has no messages to summarize", ref.SessionID)
	}
	if err != nil {
		return sqlErr(err)
	}
	s.LastTS = utc(last)
	return nil
}

// storedSummary reads the summary with the id, if the lake holds it.
func (d *DB) storedSummary(ctx context.Context, id string, s *Summary) (bool, error) {
	var levels string
	var created sql.NullTime
	err := d.db.QueryRowContext(ctx, `SELECT text, coalesce(levels, ''), coalesce(notes, []), exchange_count,
  llm_calls, input_tokens, output_tokens, duration_ms, ingested_at
FROM summaries WHERE platform = ? AND id = ?
ORDER BY ingested_at DESC LIMIT 1`, s.Platform, id).Scan(&s.Text, &levels, (*stringList)(&s.Notes), &s.Exchanges,
		&s.Calls, &s.InputTokens, &s.OutputTokens, &s.DurationMS, &created)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, sqlErr(err)
	}
	if levels != "" {
		if err := json.Unmarshal([]byte(levels), &s.Levels); err != nil {
			return false, fmt.Errorf("stored summary %s: levels: %w", id, err)
		}
	}
	s.Reused, s.Stored, s.CreatedAt = true, true, utc(created)
	return true, nil
}

// storeSummary writes the summary into the lake and redefines the
// summaries view, so that this DB sees it (a view defined over an empty
// table reads no data files).
func (d *DB) storeSummary(ctx context.Context, s *Summary, params string, first time.Time) error {
	var levels string
	if len(s.Levels) > 0 {
		b, err := json.Marshal(s.Levels)
		if err != nil {
			return err
		}
		levels = string(b)
	}
	row := layout.SummaryRow{
		Platform: s.Platform, SessionID: s.SessionID, LastMessageID: s.LastMessageID, LastTS: s.LastTS,
		MessageCount: s.Messages, ExchangeCount: s.Exchanges, Strategy: s.Strategy, Model: s.Model, Params: params,
		Text: s.Text, Levels: levels, Notes: s.Notes, LLMCalls: s.Calls, InputTokens: s.InputTokens,
		OutputTokens: s.OutputTokens, DurationMS: s.DurationMS, IngestedAt: s.CreatedAt, Date: first,
	}
	if err := load.WriteSummaries(ctx, d.lake, []layout.SummaryRow{row}, s.CreatedAt); err != nil {
		return err
	}
	stmt, err := catalog.SummariesViewSQL(d.lake)
	if err != nil {
		return err
	}
	if _, err := d.db.ExecContext(ctx, stmt); err != nil {
		return sqlErr(err)
	}
	return nil
}

// Markdown renders the summary for a person or a model: a header with the
// session and how the summary was made, the text, and for a hierarchical
// summary every level.
func (s *Summary) Markdown() string {
	var b strings.Builder
	title := s.Title
	if title == "" {
		title = s.SessionID
	}
	fmt.Fprintf(&b, "# Summary: %s\n\n", OneLine(title))
	fmt.Fprintf(&b, "%s session %s", s.Platform, s.SessionID)
	if s.Project != "" {
		fmt.Fprintf(&b, " in %s", s.Project)
	}
	fmt.Fprintf(&b, ", %s, up to %s.\n", english.Plural(int(s.Exchanges), "exchange"), s.LastTS.UTC().Format("2006-01-02 15:04 UTC"))
	how := s.Strategy
	if s.Model != "" {
		how += " with " + s.Model
	}
	fmt.Fprintf(&b, "Strategy %s", how)
	switch {
	case s.Reused:
		fmt.Fprintf(&b, "; reused the summary made %s for this state of the session (--refresh makes a new one)", s.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	case s.Calls > 0:
		fmt.Fprintf(&b, "; %s, %s tokens in, %s out", english.Plural(int(s.Calls), "LLM call"), humanize.Comma(s.InputTokens), humanize.Comma(s.OutputTokens))
	}
	b.WriteString(".\n\n")
	for _, n := range s.Notes {
		b.WriteString("> " + n + "\n\n")
	}
	if len(s.Levels) == 0 {
		b.WriteString(strings.TrimSpace(s.Text) + "\n")
		return b.String()
	}
	for i := len(s.Levels) - 1; i >= 0; i-- {
		l := s.Levels[i]
		fmt.Fprintf(&b, "## Level %d: %s\n\n", l.Level, levelTitles[l.Name])
		for _, p := range l.Parts {
			if len(l.Parts) > 1 {
				fmt.Fprintf(&b, "### %s\n\n", p.span())
			}
			b.WriteString(strings.TrimSpace(p.Text) + "\n\n")
		}
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

var levelTitles = map[string]string{"chunks": "chunk summaries", "sections": "section summaries", "session": "session summary", "abstract": "abstract"}

func (p SummaryPart) span() string {
	when := ""
	if !p.From.IsZero() {
		when = " (" + p.From.UTC().Format("2006-01-02 15:04")
		if !p.To.IsZero() && !p.To.Equal(p.From) {
			when += " to " + p.To.UTC().Format("2006-01-02 15:04")
		}
		when += " UTC)"
	}
	switch {
	case p.First == 0:
		return "Reports" + when
	case p.First == p.Last:
		return fmt.Sprintf("Exchange %d%s", p.First, when)
	}
	return fmt.Sprintf("Exchanges %d to %d%s", p.First, p.Last, when)
}

package query

// Search: hybrid retrieval over the chunks pos-embed adds to the lake.
//
// The work is split by who does it fastest, and the lake stays plain
// Parquet that any engine can read:
//
//   - Which files: the partitions (platform, date) of the window, listed by
//     directory name, not by a glob DuckDB would list and prune per query.
//   - Vectors: the chunks files' vector sidecars (quantized, read whole,
//     no decoding) are scanned in Go; DuckDB scores from the Parquet
//     vector column only a file without a sidecar, as decoding a Parquet
//     list of floats costs more a row than reading and scoring a sidecar
//     row.
//   - Lexical: BM25 in Go over the postings each sidecar holds (sorted
//     terms, binary-searched), N and the mean length from the same read;
//     a file of an older build without them is read from the Parquet
//     postings table (sorted by term: only the row groups of the query's
//     terms), as opening each of thousands of small Parquet files through
//     DuckDB or parquet-go has a fixed cost. It runs while the vector scan
//     runs.
//   - Fusion: the two sides' scores, each scaled to [0, 1], averaged over
//     units (a prompt's chunks count as its exchange), then the metadata
//     and text of the few candidates only. The vector side keeps only
//     chunks above the model's minimum similarity.
//
// A full-text library (bleve) was the other choice for the lexical side: it
// answers in milliseconds but keeps a second index outside the lake that
// pos-load must keep consistent with the Parquet files, and adds a large
// dependency; BM25 over a postings table meets the latency target with the
// date filter (see BenchmarkSearch1M) and the index stays in the lake.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
)

// Search modes.
const (
	SearchVector  = "vector"  // cosine similarity of the query's vector and the chunks'
	SearchLexical = "lexical" // BM25 over the lake's postings
	SearchHybrid  = "hybrid"  // both, their scores combined (see fuse)
)

// SearchModes lists the modes.
var SearchModes = []string{SearchHybrid, SearchVector, SearchLexical}

// SearchTypes lists the content types of chunks: what was said, then what
// was done (the shell commands agents ran, tools' outputs and failures).
var SearchTypes = []string{schema.ContentExchange, schema.ContentUserPrompt, schema.ContentSummaryLabel,
	schema.ContentCompactSummary, schema.ContentSubagentSummary, schema.ContentPlan,
	schema.ContentCommand, schema.ContentToolOutput, schema.ContentToolError}

// searchTypeAliases are shorter names people type for content types.
var searchTypeAliases = map[string]string{
	"prompt": schema.ContentUserPrompt, "prompts": schema.ContentUserPrompt, "user": schema.ContentUserPrompt,
	"label": schema.ContentSummaryLabel, "labels": schema.ContentSummaryLabel,
	"compaction": schema.ContentCompactSummary, "summary": schema.ContentCompactSummary,
	"report": schema.ContentSubagentSummary, "subagent": schema.ContentSubagentSummary, "agent": schema.ContentSubagentSummary,
	"plans": schema.ContentPlan, "exchanges": schema.ContentExchange, "turn": schema.ContentExchange,
	"commands": schema.ContentCommand, "shell": schema.ContentCommand, "output": schema.ContentToolOutput,
	"outputs": schema.ContentToolOutput, "error": schema.ContentToolError, "errors": schema.ContentToolError,
}

// ParseSearchTypes checks a comma-separated list of content types.
func ParseSearchTypes(s string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		if a, ok := searchTypeAliases[t]; ok {
			t = a
		}
		if !slices.Contains(SearchTypes, t) {
			return nil, argErrorf("unknown content type %q (use %s)", t, strings.Join(SearchTypes, ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// Embedder returns the vector of a query, made with the lake's model.
type Embedder func(ctx context.Context, text string) ([]float32, error)

// SearchOptions choose what Search looks for and where.
type SearchOptions struct {
	Query string
	Mode  string // SearchHybrid (default), SearchVector or SearchLexical
	K     int    // results (default 10)
	// Filters; zero values select everything.
	Platform     string
	Project      string // part of the project path
	Session      string // a session id (resolve a prefix with ResolveSession first)
	Types        []string
	User         string
	Machine      string
	Since, Until time.Time
	// GroupBy "session" ranks sessions by their matching units (topic
	// search across sessions) instead of listing units.
	GroupBy string
	// PerSession is how many of its best hits each session of a search
	// grouped by session keeps (default 3).
	PerSession int
	// Embed makes the query's vector; the vector modes need it.
	Embed Embedder
	// Depth is how many chunks each retriever hands to the fusion
	// (default: 20 times K, at least 200).
	Depth int
	// MinSimilarity is the least cosine similarity a chunk's vector needs
	// to count as a vector match: 0 is the lake model's own
	// (embed.MinSimilarity: 0.255 for pos-hash-v2 at 384-d, none for
	// models whose chance level pos does not know), a negative value none.
	// Without it the vector side answers any query, nonsense included,
	// with the chunks that happen to score highest.
	MinSimilarity float64
	// BM25K1 and BM25B are the lexical side's BM25 parameters: term
	// frequency saturation and length normalization (0: bm25K1 and
	// bm25B; a negative b: none).
	BM25K1, BM25B float64
	// NoStory leaves out the hits' prompts, failures and fixes (see
	// tellStories), for callers that only rank.
	NoStory bool
	// Fusion weighs hybrid search's two lists (zero fields: the defaults,
	// DefaultFusion).
	Fusion Fusion
	// NoExpand turns off query expansion (see expand.go): the hybrid and
	// lexical modes search the query's own words only.
	NoExpand bool
	// Feedback sets the expansion's parameters (zero: the defaults).
	Feedback Feedback
}

// Fusion is how hybrid search combines its vector and lexical lists (see
// fuse). Its defaults were chosen on half of the evaluation set and
// checked on the other half (query/eval -tune; the README gives the
// figures).
type Fusion struct {
	// LexicalWeight is the lexical side's share of a unit's score, in
	// (0, 1]; the vector side has the rest.
	LexicalWeight float64
	// RankK dampens reciprocal ranks, 1/(RankK + rank), in the rank
	// fusion of models whose chance level is unknown.
	RankK float64
	// RankLexicalWeight is the lexical side's share in that rank fusion.
	RankLexicalWeight float64
}

// DefaultFusion is the fusion hybrid search uses unless told otherwise.
var DefaultFusion = Fusion{LexicalWeight: 0.6, RankK: 10, RankLexicalWeight: 0.8}

// orDefault fills in f's zero fields from DefaultFusion.
func (f Fusion) orDefault() Fusion {
	if f.LexicalWeight <= 0 || f.LexicalWeight > 1 {
		f.LexicalWeight = DefaultFusion.LexicalWeight
	}
	if f.RankK <= 0 {
		f.RankK = DefaultFusion.RankK
	}
	if f.RankLexicalWeight <= 0 || f.RankLexicalWeight > 1 {
		f.RankLexicalWeight = DefaultFusion.RankLexicalWeight
	}
	return f
}

// SearchHit is one result: a unit (an exchange with the prompt that opened
// it, a subagent report, a compaction summary, a label or a plan) and its
// best matching chunk.
type SearchHit struct {
	Rank         int       `json:"rank"`
	Score        float64   `json:"score"` // hybrid: in [0, 1] (see fuse); vector: VectorScore; lexical: LexicalScore
	TS           time.Time `json:"ts"`
	ContentType  string    `json:"content_type"`
	Platform     string    `json:"platform"`
	SessionID    string    `json:"session_id"`
	Title        string    `json:"title"` // the session's
	Project      string    `json:"project"`
	Snippet      string    `json:"snippet"` // the best chunk around the query's words, **highlighted**
	ExchangeID   string    `json:"exchange_id"`
	ParentID     string    `json:"parent_id"` // the record the chunk is from
	ChunkID      string    `json:"chunk_id"`
	ChunkIndex   int64     `json:"chunk_index"`
	AgentID      string    `json:"agent_id"`
	User         string    `json:"user"`
	Machine      string    `json:"machine"`
	VectorRank   int       `json:"vector_rank"`  // the unit's rank by vector similarity (0: not in the candidates)
	VectorScore  float64   `json:"vector_score"` // cosine similarity of its best chunk (from quantized vectors: within about 1%)
	LexicalRank  int       `json:"lexical_rank"`
	LexicalScore float64   `json:"lexical_score"` // BM25 of its best chunk
	// Tool and Lines are set for a chunk of a tool call or result: the
	// tool's name and the chunk's lines that hold the query's words.
	Tool  string   `json:"tool,omitempty"`
	Lines []string `json:"lines,omitempty"`
	// Duplicates is how many other units of the results had the same
	// text, or nearly (the same output in other exchanges, a prompt
	// repeated across sessions): they are folded into this hit, the
	// first of them listed in Similar.
	Duplicates int      `json:"duplicates,omitempty"`
	Similar    []HitRef `json:"similar,omitempty"`
	// Prompt is the first line of the prompt of the hit's exchange.
	Prompt string `json:"prompt,omitempty"`
	// Error and Fix tell an exchange's story when one of its tools failed:
	// the failure, then what came after it until a command succeeded (the
	// edits, the command). Fix is empty when nothing followed.
	Error *ToolStep  `json:"error,omitempty"`
	Fix   []ToolStep `json:"fix,omitempty"`

	chunkKey int64
	file     string
	text     string
	unit     string
}

// SessionHit is a session in a search grouped by session.
type SessionHit struct {
	Rank        int       `json:"rank"`
	Score       float64   `json:"score"` // its best unit's score, plus half the second's, a quarter the third's …
	Hits        int       `json:"hits"`  // its units among the candidates
	FirstTS     time.Time `json:"first_ts"`
	LastTS      time.Time `json:"last_ts"`
	Platform    string    `json:"platform"`
	SessionID   string    `json:"session_id"`
	Title       string    `json:"title"`
	Project     string    `json:"project"`
	ContentType string    `json:"content_type"` // of its best unit
	Snippet     string    `json:"snippet"`      // of its best unit
	ExchangeID  string    `json:"exchange_id"`  // of its best unit
	// Best are its best hits, in rank order, at most
	// SearchOptions.PerSession.
	Best []SearchHit `json:"best"`
}

// HitRef names a unit folded into a hit as its near duplicate.
type HitRef struct {
	Platform    string    `json:"platform"`
	SessionID   string    `json:"session_id"`
	ExchangeID  string    `json:"exchange_id,omitempty"`
	ChunkID     string    `json:"chunk_id"`
	ContentType string    `json:"content_type"`
	TS          time.Time `json:"ts"`
}

// SearchResult holds the hits of a search, or its sessions when grouped.
type SearchResult struct {
	Mode  string
	Model string // the embedding model of the vector side
	// Warning says why a vector or hybrid search answered with lexical
	// results only (the query's embedding failed); empty otherwise.
	Warning string
	// MinSimilarity is the least vector similarity that counted (see
	// SearchOptions).
	MinSimilarity float64
	Terms         []string
	Hits          []SearchHit
	Sessions      []SessionHit
	Timing        SearchTiming
}

// SearchTiming says where a search spent its time, and how many rows the
// vector scan compared with the query and scored exactly (the others were
// ruled out on their sign codes).
type SearchTiming struct {
	Embed, Vector, Lexical, Describe time.Duration
	VectorRows, VectorExact          int
}

// BM25 parameters (see BM25Defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// rrfK dampens the reciprocal ranks by which a unit's chunk to show is
	// chosen (the best ranked in either list).
	rrfK = 60
)

// BM25Defaults says BM25's default k1 and b.
var BM25Defaults = fmt.Sprintf("k1 %g, b %g", bm25K1, bm25B)

// Search finds the units of the lake that match a query: by vector
// similarity (the query embedded with the lake's model), by BM25 over the
// lexical index, or both combined (see fuse). Chunks are collapsed to
// their unit (a prompt's chunks to the exchange it opens), so each result
// is a different unit.
func (d *DB) Search(ctx context.Context, opt SearchOptions) (*SearchResult, error) {
	res, err := d.search(ctx, opt)
	if FileVanished(err) {
		// A load is merging files: the next search lists them again.
		d.listing.Forget()
	}
	return res, err
}

func (d *DB) search(ctx context.Context, opt SearchOptions) (*SearchResult, error) {
	if strings.TrimSpace(opt.Query) == "" {
		return nil, argErrorf("the query is empty")
	}
	if opt.Mode == "" {
		opt.Mode = SearchHybrid
	}
	if !slices.Contains(SearchModes, opt.Mode) {
		return nil, argErrorf("unknown mode %q (use hybrid, vector or lexical)", opt.Mode)
	}
	if opt.GroupBy != "" && opt.GroupBy != "session" {
		return nil, argErrorf("cannot group by %q (only session)", opt.GroupBy)
	}
	if err := checkWindow(opt.Since, opt.Until); err != nil {
		return nil, err
	}
	if opt.K <= 0 {
		opt.K = 10
	}
	depth := opt.Depth
	if depth <= 0 {
		depth = max(200, 20*opt.K)
		if opt.GroupBy != "" {
			depth = max(500, 50*opt.K)
		}
	}
	// The files of the chunks and postings are read directly, and of the
	// views only what describing the hits needs (see describeHits).
	d.beginSearch()
	defer d.endSearch()
	lq := newLexQuery(opt.Query)
	res := &SearchResult{Mode: opt.Mode, Terms: lq.parsed.Highlight()}
	expand := expands(opt, lq)
	if expand {
		lq = withExpansion(lq, opt.Query, opt.Feedback.withDefaults())
	}
	model, hasVectors, err := layout.LakeEmbedding(ctx, d.lake)
	if err != nil {
		return nil, err
	}
	if !hasVectors && !d.hasChunks(ctx) {
		return nil, argErrorf("the lake has no chunks to search: add pos-embed to the pipeline (pos-normalize | pos-scrub | pos-embed | pos-load)")
	}
	versioned := layout.Versioned(d.lake)[layout.TableChunks]
	files, err := d.windowFiles(layout.TableChunks, opt)
	if err != nil {
		return nil, err
	}
	if versioned {
		depth *= 2 // superseded versions take some of the places
	}
	var keep map[int64]bool // the window's chunks that pass the other filters
	if narrowed(opt) && len(files) > 0 {
		if keep, err = d.chunkKeys(ctx, opt, files); err != nil {
			return nil, err
		}
	}
	var vs, ls []scored
	var vecErr error
	var vecDone sync.WaitGroup
	var q []float32 // the query's vector
	if opt.Mode != SearchLexical {
		if !hasVectors {
			return nil, argErrorf("the lake's chunks have no vectors: search with --mode lexical, or embed them again")
		}
		if opt.Embed == nil {
			return nil, argErrorf("no embedder for the lake's model %s", model.Model)
		}
		res.Model = model.Model
		start := time.Now()
		q, err = opt.Embed(ctx, opt.Query)
		res.Timing.Embed = time.Since(start)
		if err == nil && len(q) != model.Dim {
			err = fmt.Errorf("the query's vector has %d dimensions, the lake's %d (model %s)", len(q), model.Dim, model.Model)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The endpoint is down, slow or refuses: the lexical side
			// still answers, and the caller says why it alone did.
			res.Warning = "lexical results only: " + OneLine(err.Error())
			opt.Mode, res.Mode, res.Model = SearchLexical, SearchLexical, ""
		}
	}
	if opt.Mode != SearchLexical {
		q = unit(q)
		minSim := opt.MinSimilarity
		if minSim == 0 {
			minSim = embed.MinSimilarity(model.Model, model.Dim)
		}
		res.MinSimilarity = max(minSim, 0)
		if !zero(q) && len(files) > 0 {
			// The vector scan is Go's work, the lexical query DuckDB's:
			// they run side by side.
			vecDone.Add(1)
			go func() {
				defer vecDone.Done()
				start := time.Now()
				var n scanCounts
				vs, n, vecErr = d.vectorScores(ctx, opt, files, model, q, depth, keep, res.MinSimilarity)
				res.Timing.Vector = time.Since(start)
				res.Timing.VectorRows, res.Timing.VectorExact = n.Rows, n.Exact
			}()
		}
	}
	if opt.Mode != SearchVector && !lq.empty() && len(files) > 0 {
		start := time.Now()
		ls, err = d.lexicalScores(ctx, opt, files, lq, depth, keep)
		res.Timing.Lexical = time.Since(start)
		if err != nil {
			vecDone.Wait()
			return nil, err
		}
	}
	vecDone.Wait()
	if vecErr != nil {
		return nil, vecErr
	}
	start := time.Now()
	defer func() { res.Timing.Describe = time.Since(start) }()
	if len(lq.parsed.Phrases) > 0 {
		if vs, ls, err = d.withPhrases(ctx, lq.parsed, vs, ls); err != nil {
			return nil, err
		}
	}
	cands, err := d.candidates(ctx, versioned, vs, ls)
	if err != nil {
		return nil, err
	}
	vec, lex := cands[0], cands[1]
	units := fuse(opt.Mode, vec, lex, res.MinSimilarity, opt.Fusion)
	if expand {
		if units, err = d.feedback(ctx, opt, lq, files, depth, keep, versioned, vec, units, res.MinSimilarity); err != nil {
			return nil, err
		}
	}
	if opt.GroupBy == "session" {
		per := opt.PerSession
		if per <= 0 {
			per = 3
		}
		// Twice as many as kept, described, so that the near duplicates
		// and repeats of an exchange folded leave enough.
		sessions, pools := groupSessions(units, opt.K, 2*per)
		var all []SearchHit
		for _, p := range pools {
			all = append(all, p...)
		}
		if err := d.describeHits(ctx, all, res.Terms); err != nil {
			return nil, err
		}
		var best []SearchHit
		for i := range sessions {
			n := len(pools[i])
			s := &sessions[i]
			s.Best = collapse(all[:n], per)
			all = all[n:]
			best = append(best, s.Best...)
		}
		if !opt.NoStory {
			if err := d.tellStories(ctx, best, res.Terms); err != nil {
				return nil, err
			}
		}
		for i := range sessions {
			s := &sessions[i]
			s.Best = best[:len(s.Best)]
			best = best[len(s.Best):]
			if len(s.Best) > 0 {
				h := s.Best[0]
				s.Title, s.Project, s.Snippet, s.ExchangeID, s.ContentType = h.Title, h.Project, h.Snippet, h.ExchangeID, h.ContentType
			}
		}
		res.Sessions = sessions
		return res, nil
	}
	// A subagent's report and its last exchange, or a compaction summary
	// and the exchange it was written in, often say the same: described,
	// they count once, and the places they leave go to the next units; so
	// do chunks of the same text (see collapse).
	hits := units[:min(3*opt.K, len(units))]
	if err := d.describeHits(ctx, hits, res.Terms); err != nil {
		return nil, err
	}
	res.Hits = collapse(hits, opt.K)
	if !opt.NoStory {
		if err := d.tellStories(ctx, res.Hits, res.Terms); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// unit returns v scaled to length 1 (a zero vector stays zero).
func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return v
	}
	out := make([]float32, len(v))
	inv := 1 / math.Sqrt(s)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

func zero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

func (d *DB) hasChunks(ctx context.Context) bool {
	if d.need(ctx, "chunk_rows") != nil {
		return false
	}
	var n int64
	err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM chunk_rows LIMIT 1)`).Scan(&n)
	return err == nil && n > 0
}

// candidate is a chunk a retriever found.
type candidate struct {
	chunkKey                   int64
	id, parent, ctype          string
	platform, session, agentID string
	ts                         time.Time
	file                       string
	score                      float64
}

// scored is a chunk version and its score, before its metadata is read.
type scored struct {
	key   int64
	file  string // the chunks file it is in
	score float64
}

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
//     vector column only a file without a sidecar. Decoding a Parquet list
//     of 384 floats costs DuckDB ~1.7 µs a row; reading and scoring a
//     sidecar row costs Go ~0.7 µs.
//   - Lexical: BM25 in Go over the postings each sidecar holds (sorted
//     terms, binary-searched), N and the mean length from the same read;
//     a file of an older build without them is read from the Parquet
//     postings table (sorted by term: only the row groups of the query's
//     terms). Opening thousands of small Parquet files cost DuckDB, or
//     parquet-go, about a millisecond each. It runs while the vector scan
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
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pos-lake/pos/internal/fsglob"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/searchindex"
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
	model, hasVectors, err := load.LakeEmbedding(ctx, d.lake)
	if err != nil {
		return nil, err
	}
	if !hasVectors && !d.hasChunks(ctx) {
		return nil, argErrorf("the lake has no chunks to search: add pos-embed to the pipeline (pos-normalize | pos-scrub | pos-embed | pos-load)")
	}
	versioned := load.Versioned(d.lake)[load.TableChunks]
	files, err := d.windowFiles(load.TableChunks, opt)
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

// The retrievers read as little as they can from every chunk of the window:
// the vector side its vector, the lexical side the postings of the query's
// terms. They hand on chunk keys and scores; the metadata of the candidates
// alone is read after (one query for both sides).

// chunkFilter is the WHERE clause of the search's filters over chunks.
func chunkFilter(opt SearchOptions) *where {
	w := &where{}
	w.eq("platform", opt.Platform)
	w.window("ts", opt.Since, opt.Until, true)
	w.contains("project", opt.Project)
	w.eq("session_id", opt.Session)
	w.eq("user", opt.User)
	w.eq("machine", opt.Machine)
	if len(opt.Types) > 0 {
		w.add("content_type IN ("+placeholders(len(opt.Types))+")", anys(opt.Types)...)
	}
	return w
}

// narrowed reports whether the search filters on more than platform and
// time, the filters the partitions answer.
func narrowed(opt SearchOptions) bool {
	return opt.Project != "" || opt.Session != "" || opt.User != "" || opt.Machine != "" || len(opt.Types) > 0
}

// latestVersion keeps the latest version of each chunk (see load's views).
const latestVersion = ` QUALIFY row_number() OVER (PARTITION BY id ORDER BY ingested_at DESC, content_hash) = 1`

// windowFiles lists the files of a table in the partitions the search's
// platform and window can match.
func (d *DB) windowFiles(table string, opt SearchOptions) ([]string, error) {
	return d.listing.PartitionFiles(d.lake, table, opt.Platform, opt.Since, opt.Until)
}

// vectorScores ranks the window's chunks by the inner product of their
// vectors and the query's: pos-embed stores unit vectors, so this is their
// cosine similarity. The vector sidecars are scanned in Go (see
// scanVectors); a chunks file without one is scored by DuckDB.
func (d *DB) vectorScores(ctx context.Context, opt SearchOptions, files []string, m load.EmbeddingModel, q []float32, depth int,
	keep map[int64]bool, minSim float64) ([]scored, scanCounts, error) {
	out, missing, n, err := d.scanVectors(ctx, files, m.Model, q, opt, keep, depth, minSim)
	if err != nil || len(missing) == 0 {
		return out, n, err
	}
	more, err := d.duckVectorScores(ctx, opt, missing, m, q, depth, minSim)
	if err != nil {
		return nil, n, err
	}
	out = append(out, more...)
	slices.SortFunc(out, func(a, b scored) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.key, b.key)) })
	return out[:min(len(out), depth)], n, nil
}

// chunkKeys returns the keys of the window's chunks that pass the search's
// filters.
func (d *DB) chunkKeys(ctx context.Context, opt SearchOptions, files []string) (map[int64]bool, error) {
	src, list, err := load.FilesSource(d.lake, load.TableChunks, files)
	if err != nil {
		return nil, err
	}
	w := chunkFilter(opt)
	rows, err := d.db.QueryContext(ctx, `SELECT chunk_key FROM `+src+w.sql(), append([]any{list}, w.args...)...)
	if err != nil {
		return nil, sqlErr(err)
	}
	defer rows.Close()
	keep := map[int64]bool{}
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			return nil, sqlErr(err)
		}
		keep[k] = true
	}
	return keep, sqlErr(rows.Err())
}

// duckVectorScores scores chunks files from their Parquet vectors.
func (d *DB) duckVectorScores(ctx context.Context, opt SearchOptions, files []string, m load.EmbeddingModel, q []float32, depth int, minSim float64) ([]scored, error) {
	src, list, err := load.FilesSource(d.lake, load.TableChunks, files)
	if err != nil {
		return nil, err
	}
	w := chunkFilter(opt)
	w.add("model = ?", m.Model)
	w.add("dim = ?", m.Dim)
	arr := fmt.Sprintf("FLOAT[%d]", m.Dim)
	query := fmt.Sprintf(`SELECT * FROM (
  SELECT chunk_key, file_index, array_inner_product(CAST(embedding AS %s), CAST(? AS %s)) AS score
  FROM %s%s
) WHERE score >= ?
ORDER BY score DESC, chunk_key LIMIT ?`, arr, arr, src, w.sql())
	return d.scores(ctx, query, list, append(append([]any{q, list}, w.args...), minSim, depth)...)
}

// msWindow is the search's window in Unix milliseconds, [since, until).
func msWindow(opt SearchOptions) (since, until int64) {
	since, until = -1<<62, 1<<62
	if !opt.Since.IsZero() {
		since = opt.Since.UnixMilli()
	}
	if !opt.Until.IsZero() {
		until = opt.Until.UnixMilli()
	}
	return since, until
}

// partitionsOf lists every Parquet file in the directories of files.
func partitionsOf(files []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		dir := filepath.Dir(f)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		all, err := filepath.Glob(filepath.Join(fsglob.Quote(dir), "*.parquet"))
		if err != nil {
			return nil, err
		}
		out = append(out, all...)
	}
	return out, nil
}

// scores runs a query of chunk_key, file_index (into files) and score.
func (d *DB) scores(ctx context.Context, q string, files []string, args ...any) ([]scored, error) {
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, sqlErr(err)
	}
	defer rows.Close()
	var out []scored
	for rows.Next() {
		var s scored
		var file int64
		var score sql.NullFloat64
		if err := rows.Scan(&s.key, &file, &score); err != nil {
			return nil, sqlErr(err)
		}
		if file >= 0 && file < int64(len(files)) {
			s.file = files[file]
		}
		s.score = score.Float64
		out = append(out, s)
	}
	return out, sqlErr(rows.Err())
}

// candidates reads the metadata of the scored chunks, from their files
// only; in a lake whose chunks have versions, it keeps those that are their
// chunk's latest version.
func (d *DB) candidates(ctx context.Context, versioned bool, lists ...[]scored) ([][]candidate, error) {
	out := make([][]candidate, len(lists))
	if !slices.ContainsFunc(lists, func(l []scored) bool { return len(l) > 0 }) {
		return out, nil
	}
	var meta map[int64]candidate
	var err error
	if versioned || !candidatesInGo {
		meta, err = d.latestCandidates(ctx, lists)
	} else {
		meta, err = candidateMeta(ctx, d.searchIndex(), lists)
	}
	if err != nil {
		return nil, err
	}
	for i, l := range lists {
		for _, s := range l {
			if c, ok := meta[s.key]; ok {
				c.score = s.score
				out[i] = append(out[i], c)
			}
		}
	}
	return out, nil
}

// candidatesInGo is false only in a test that holds candidateMeta to
// latestCandidates.
var candidatesInGo = true

// candidateMeta reads the candidates' metadata from their chunks files'
// sidecars, or in Go from the files (load.ReadChunkMeta), each key in the
// file its retriever found it in.
func candidateMeta(ctx context.Context, ix *searchindex.Index, lists [][]scored) (map[int64]candidate, error) {
	var files []string
	var wanted []map[int64]bool
	index := map[string]int{}
	for _, l := range lists {
		for _, s := range l {
			i, ok := index[s.file]
			if !ok {
				i = len(files)
				index[s.file] = i
				files = append(files, s.file)
				wanted = append(wanted, map[int64]bool{})
			}
			wanted[i][s.key] = true
		}
	}
	per := make([][]candidate, len(files))
	err := eachFile(ctx, files, func(i int, path string) error {
		return readChunkMeta(ix, path, wanted[i], func(m load.ChunkMeta) {
			per[i] = append(per[i], candidate{chunkKey: m.Key, id: m.ID, parent: m.ParentID, ctype: m.ContentType,
				platform: m.Platform, session: m.SessionID, agentID: m.AgentID, ts: m.TS, file: path})
		})
	})
	if err != nil {
		return nil, err
	}
	meta := map[int64]candidate{}
	for _, cs := range per {
		for _, c := range cs {
			meta[c.chunkKey] = c
		}
	}
	return meta, nil
}

// latestCandidates reads the candidates' metadata with DuckDB, keeping a
// candidate only if it is its chunk's latest version (a lake whose chunks
// have versions).
func (d *DB) latestCandidates(ctx context.Context, lists [][]scored) (map[int64]candidate, error) {
	keys := map[int64]bool{}
	var files []string
	var args []any
	for _, l := range lists {
		for _, s := range l {
			if !keys[s.key] {
				keys[s.key] = true
				args = append(args, s.key)
				if !slices.Contains(files, s.file) {
					files = append(files, s.file)
				}
			}
		}
	}
	src, list, err := load.FilesSource(d.lake, load.TableChunks, files)
	if err != nil {
		return nil, err
	}
	const cols = `chunk_key, id, parent_id, content_type, platform, session_id, agent_id, ts, file_index`
	// The versions of a chunk are in its partition, not always in its file.
	all, err := partitionsOf(files)
	if err != nil {
		return nil, err
	}
	vsrc, vlist, err := load.FilesSource(d.lake, load.TableChunks, all)
	if err != nil {
		return nil, err
	}
	query := `WITH c AS (SELECT ` + cols + ` FROM ` + src + ` WHERE chunk_key IN (` + placeholders(len(args)) + `))
SELECT c.* FROM c JOIN (
  SELECT chunk_key FROM ` + vsrc + ` WHERE id IN (SELECT id FROM c)` + latestVersion + `
) USING (chunk_key)`
	args = append(args, vlist)
	rows, err := d.db.QueryContext(ctx, query, append([]any{list}, args...)...)
	if err != nil {
		return nil, sqlErr(err)
	}
	defer rows.Close()
	meta := map[int64]candidate{}
	for rows.Next() {
		var c candidate
		var ts sql.NullTime
		var parent, session, agentID sql.NullString
		var file int64
		if err := rows.Scan(&c.chunkKey, &c.id, &parent, &c.ctype, &c.platform, &session, &agentID, &ts, &file); err != nil {
			return nil, sqlErr(err)
		}
		if file >= 0 && file < int64(len(list)) {
			c.file = list[file]
		}
		c.parent, c.session, c.agentID, c.ts = parent.String, session.String, agentID.String, utc(ts)
		meta[c.chunkKey] = c
	}
	if err := rows.Err(); err != nil {
		return nil, sqlErr(err)
	}
	return meta, nil
}

// unitKey is the unit a chunk belongs to: a prompt's chunks belong to the
// exchange the prompt opens, every other chunk to the record it is from.
func unitKey(c candidate) string {
	if c.ctype == schema.ContentUserPrompt {
		return schema.ExchangeID(c.platform, c.parent)
	}
	if c.parent == "" {
		return c.id
	}
	return c.parent
}

// fuse collapses each retriever's chunks to units (a unit ranks as its best
// chunk) and, in hybrid mode, fuses the two by a convex combination of
// their scores, each brought to [0, 1]:
//
//	score = w · bm25 / best bm25 of the query + (1 − w) · (cos − min) / (1 − min)
//
// where w is f.LexicalWeight and min the model's minimum similarity. The
// lexical side is scaled by its best score, as BM25 has no upper bound;
// the vector side on its own fixed scale, from the chance level up, so a
// vector list that is all weak matches adds little and a close match much.
// Reciprocal rank fusion weighs the two lists alike whatever their scores,
// which lets a unit found fairly high in both lists pass the one BM25 put
// well ahead. A model without a minimum similarity (pos-hash-v1,
// OpenAI-compatible ones), or a search without one, gives no chance level
// to scale from: its units are fused by weighted reciprocal rank,
// w'/(k + lexical rank) + (1 − w')/(k + vector rank), scaled so that first
// in both is 1 (w' is f.RankLexicalWeight, k f.RankK). The weights are
// chosen on the evaluation set (query/eval -tune).
func fuse(mode string, vec, lex []candidate, minSim float64, f Fusion) []SearchHit {
	f = f.orDefault()
	byUnit := map[string]*SearchHit{}
	var order []*SearchHit
	best := map[string]float64{} // the rank-fused score of the chunk shown
	collapse := func(cs []candidate, vectorSide bool) {
		rank := 0
		seen := map[string]bool{}
		for _, c := range cs {
			u := unitKey(c)
			if seen[u] {
				continue
			}
			seen[u] = true
			rank++
			h := byUnit[u]
			if h == nil {
				h = &SearchHit{unit: u}
				byUnit[u] = h
				order = append(order, h)
			}
			if vectorSide {
				h.VectorRank, h.VectorScore = rank, c.score
			} else {
				h.LexicalRank, h.LexicalScore = rank, c.score
			}
			// The chunk shown is the unit's best-ranked in either list.
			if s := 1 / float64(rrfK+rank); s > best[u] {
				best[u] = s
				h.setChunk(c)
			}
		}
	}
	collapse(vec, true)
	collapse(lex, false)
	var lexTop float64 // the best BM25 score, the lexical side's scale
	if len(lex) > 0 {
		lexTop = lex[0].score
	}
	for _, h := range order {
		switch mode {
		case SearchVector:
			h.Score = h.VectorScore
		case SearchLexical:
			h.Score = h.LexicalScore
		case SearchHybrid:
			var s float64
			if minSim <= 0 || minSim >= 1 {
				// No known chance level to scale the similarity from:
				// reciprocal ranks, scaled so that first in both is 1.
				if h.VectorRank > 0 {
					s += (1 - f.RankLexicalWeight) / (f.RankK + float64(h.VectorRank))
				}
				if h.LexicalRank > 0 {
					s += f.RankLexicalWeight / (f.RankK + float64(h.LexicalRank))
				}
				h.Score = s * (f.RankK + 1)
				break
			}
			if h.LexicalRank > 0 && lexTop > 0 {
				s += f.LexicalWeight * h.LexicalScore / lexTop
			}
			if h.VectorRank > 0 {
				s += (1 - f.LexicalWeight) * max(0, min(1, (h.VectorScore-minSim)/(1-minSim)))
			}
			h.Score = s
		}
	}
	out := make([]SearchHit, len(order))
	for i, h := range order {
		out[i] = *h
	}
	slices.SortStableFunc(out, func(a, b SearchHit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.bestRank(), b.bestRank()), cmp.Compare(a.unit, b.unit))
	})
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

func (h *SearchHit) bestRank() int {
	r := 1 << 30
	if h.VectorRank > 0 {
		r = h.VectorRank
	}
	if h.LexicalRank > 0 && h.LexicalRank < r {
		r = h.LexicalRank
	}
	return r
}

func (h *SearchHit) setChunk(c candidate) {
	h.chunkKey, h.file = c.chunkKey, c.file
	h.ChunkID, h.ParentID, h.ContentType = c.id, c.parent, c.ctype
	h.Platform, h.SessionID, h.AgentID, h.TS = c.platform, c.session, c.agentID, c.ts
	// A tool chunk's parent is its exchange, or its message when it ran
	// outside one: resolveExchanges tells which.
	if c.ctype == schema.ContentExchange || c.ctype == schema.ContentUserPrompt {
		h.ExchangeID = h.unit
	}
}

// describeHits fills in what the results show: the chunk's text (for the
// snippet), the session's title and project, and the exchange a report or
// summary belongs to.
func (d *DB) describeHits(ctx context.Context, hits []SearchHit, terms []string) error {
	if len(hits) == 0 {
		return nil
	}
	// The chunks, read from their sidecars, else from their files only.
	byKey := map[int64][]int{}
	for i, h := range hits {
		byKey[h.chunkKey] = append(byKey[h.chunkKey], i)
	}
	fill := func(key int64, text string, idx int64, project, user, machine, tool string) {
		for _, i := range byKey[key] {
			h := &hits[i]
			h.text, h.ChunkIndex, h.Project, h.User, h.Machine = text, idx, project, user, machine
			h.Snippet = Snippet(text, terms, snippetWords)
			if embed.IsToolType(h.ContentType) {
				h.Tool, h.Lines = tool, MatchingLines(text, terms, matchingLines)
			}
		}
	}
	found, err := d.sidecarTexts(ctx, hits, fill)
	if err != nil {
		return err
	}
	var files []string
	var keys []any
	for _, h := range hits {
		if found[h.chunkKey] {
			continue
		}
		if !slices.Contains(keys, any(h.chunkKey)) {
			keys = append(keys, h.chunkKey)
		}
		if !slices.Contains(files, h.file) {
			files = append(files, h.file)
		}
	}
	if len(keys) == 0 {
		if err := d.sessionTitles(ctx, hits); err != nil {
			return err
		}
		return d.resolveExchanges(ctx, hits)
	}
	// With the lake's schema file when some files are older than the tool
	// column.
	src, list, err := load.FilesSource(d.lake, load.TableChunks, files)
	if err != nil {
		return err
	}
	q := `SELECT chunk_key, text, chunk_index, coalesce(project, ''), coalesce(user, ''), coalesce(machine, ''), coalesce(tool, '')
FROM ` + src + `
WHERE chunk_key IN (` + placeholders(len(keys)) + `)`
	rows, err := d.db.QueryContext(ctx, q, append([]any{list}, keys...)...)
	if err != nil {
		return sqlErr(err)
	}
	for rows.Next() {
		var key, idx int64
		var text, project, user, machine, tool string
		if err := rows.Scan(&key, &text, &idx, &project, &user, &machine, &tool); err != nil {
			rows.Close()
			return sqlErr(err)
		}
		fill(key, text, idx, project, user, machine, tool)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return sqlErr(err)
	}
	if err := d.sessionTitles(ctx, hits); err != nil {
		return err
	}
	return d.resolveExchanges(ctx, hits)
}

// sessionTitles fills in the sessions' titles.
func (d *DB) sessionTitles(ctx context.Context, hits []SearchHit) error {
	var args []any
	seen := map[string]bool{}
	for _, h := range hits {
		k := h.Platform + "\x00" + h.SessionID
		if h.SessionID != "" && !seen[k] {
			seen[k] = true
			args = append(args, h.SessionID)
		}
	}
	if len(args) == 0 {
		return nil
	}
	want := map[string]bool{}
	for k := range seen {
		want[k] = true
	}
	if ok, err := d.sessionTitlesInGo(ctx, hits, want); ok || err != nil {
		return err
	}
	// The sessions view's choice of title (the user's, else the
	// platform's, else the latest summary label, else the first prompt) over these sessions' rollups
	// only: the view itself recounts every message of the lake. The rollups
	// are read from the session cache's copy, one file, when it can.
	rows, err := d.queryCached(ctx, func(view bool) (string, error) { return d.sessionRowsFrom(ctx, view) }, "session_rows",
		func(from string) (string, []any) {
			return `SELECT platform, session_id,
  coalesce(arg_max(title, ingested_at) FILTER (WHERE title_source = 'user'),
    arg_max(title, ingested_at) FILTER (WHERE title_source = 'platform'),
    flatten(list(labels ORDER BY ingested_at))[-1],
    arg_min(title, coalesce(first_ts, ts)) FILTER (WHERE title_source = 'prompt'), '') AS title,
  coalesce(arg_min(project, coalesce(first_ts, ts)), '') AS project
FROM ` + from + ` WHERE session_id IN (` + placeholders(len(args)) + `)
GROUP BY ALL`, args
		})
	if err != nil {
		return sqlErr(err)
	}
	defer rows.Close()
	type ref struct{ title, project string }
	titles := map[string]ref{}
	for rows.Next() {
		var p, s, t, proj string
		if err := rows.Scan(&p, &s, &t, &proj); err != nil {
			return sqlErr(err)
		}
		titles[p+"\x00"+s] = ref{t, proj}
	}
	for i := range hits {
		if r, ok := titles[hits[i].Platform+"\x00"+hits[i].SessionID]; ok {
			hits[i].Title = r.title
			if hits[i].Project == "" {
				hits[i].Project = r.project
			}
		}
	}
	return sqlErr(rows.Err())
}

// resolveExchanges finds the exchange a subagent report or a compaction
// summary belongs to: the last exchange of the report's subagent thread,
// the exchange of the summary's thread under way when it was written. One
// query reads the exchanges of the sessions concerned.
func (d *DB) resolveExchanges(ctx context.Context, hits []SearchHit) error {
	var todo []int
	var args []any
	var refs []SessionRef
	for i, h := range hits {
		switch {
		case h.ExchangeID != "" || h.SessionID == "":
		case h.ContentType == schema.ContentSubagentSummary && h.AgentID != "",
			(h.ContentType == schema.ContentCompactSummary || h.ContentType == schema.ContentSummaryLabel || embed.IsToolType(h.ContentType)) && !h.TS.IsZero():
			todo = append(todo, i)
			args = append(args, h.SessionID)
			refs = append(refs, SessionRef{Platform: h.Platform, SessionID: h.SessionID})
		}
	}
	if len(todo) == 0 {
		return nil
	}
	bySession := map[string][]exchangeRef{}
	read := false
	if parts, ok := d.exchangePartitionsInGo(ctx, refs); ok {
		want := map[string]bool{}
		for _, r := range refs {
			want[r.Platform+"\x00"+r.SessionID] = true
		}
		rows, ok, err := d.exchangesInGo(parts, want, nil)
		if err != nil {
			return err
		}
		for _, e := range rows {
			k := e.Platform + "\x00" + e.SessionID
			bySession[k] = append(bySession[k], exchangeRef{id: e.ID, thread: e.AgentID, ts: e.TS})
		}
		read = ok
	}
	if !read {
		var err error
		if bySession, err = d.exchangesSQL(ctx, refs, args); err != nil {
			return err
		}
	}
	for _, i := range todo {
		h := &hits[i]
		if embed.IsToolType(h.ContentType) && slices.ContainsFunc(bySession[h.Platform+"\x00"+h.SessionID], func(e exchangeRef) bool { return e.id == h.ParentID }) {
			h.ExchangeID = h.ParentID // linked by pos-embed
			continue
		}
		for _, e := range bySession[h.Platform+"\x00"+h.SessionID] { // in time order: the last match wins
			if e.thread != h.AgentID {
				continue
			}
			if h.ContentType == schema.ContentSubagentSummary || !e.ts.After(h.TS) {
				h.ExchangeID = e.id
			}
		}
	}
	return nil
}

// exchangeRef is an exchange as resolveExchanges reads it.
type exchangeRef struct {
	id, thread string
	ts         time.Time
}

// exchangesSQL reads the sessions' exchanges with DuckDB: from their
// partitions when the session cache knows them, else from the view.
func (d *DB) exchangesSQL(ctx context.Context, refs []SessionRef, args []any) (map[string][]exchangeRef, error) {
	// The sessions' exchange partitions only, when the session cache
	// knows them; else the view.
	src := "exchange_rows"
	if _, parts, ok := d.partitionsOf(ctx, refs); ok {
		s, err := load.PartitionSource(d.lake, "exchange_rows", parts)
		if err != nil {
			return nil, err
		}
		src = s
	} else if err := d.need(ctx, "exchange_rows"); err != nil {
		return nil, err
	}
	rows, err := d.db.QueryContext(ctx, `SELECT id, platform, session_id, coalesce(agent_id, ''), ts FROM `+src+`
WHERE session_id IN (`+placeholders(len(args))+`) ORDER BY ts, id`, args...)
	if err != nil {
		return nil, sqlErr(err)
	}
	defer rows.Close()
	bySession := map[string][]exchangeRef{}
	for rows.Next() {
		var e exchangeRef
		var platform, session, agentID string
		var ts sql.NullTime
		if err := rows.Scan(&e.id, &platform, &session, &agentID, &ts); err != nil {
			return nil, sqlErr(err)
		}
		e.thread, e.ts = agentID, utc(ts)
		k := platform + "\x00" + session
		bySession[k] = append(bySession[k], e)
	}
	if err := rows.Err(); err != nil {
		return nil, sqlErr(err)
	}
	return bySession, nil
}

// groupSessions ranks the sessions of the best units: a session scores its
// best unit's score, plus half its second's, a quarter its third's …, so a
// session that keeps coming back to a topic ranks above one that mentions
// it once, and a long tail of weak matches adds nearly nothing. It returns
// the first k sessions with the best units of each, at most keep, in rank
// order.
func groupSessions(units []SearchHit, k, keep int) ([]SessionHit, [][]SearchHit) {
	type group struct {
		s      SessionHit
		units  []SearchHit
		weight float64
	}
	by := map[string]*group{}
	var order []*group
	pool := units[:min(len(units), max(50, 5*k))]
	for _, h := range pool { // in score order
		key := h.Platform + "\x00" + h.SessionID
		g := by[key]
		if g == nil {
			g = &group{s: SessionHit{Platform: h.Platform, SessionID: h.SessionID, ContentType: h.ContentType}, weight: 1}
			by[key] = g
			order = append(order, g)
		}
		if len(g.units) < keep {
			g.units = append(g.units, h)
		}
		g.s.Score += g.weight * h.Score
		g.weight /= 2
		g.s.Hits++
		if !h.TS.IsZero() && (g.s.FirstTS.IsZero() || h.TS.Before(g.s.FirstTS)) {
			g.s.FirstTS = h.TS
		}
		if h.TS.After(g.s.LastTS) {
			g.s.LastTS = h.TS
		}
	}
	slices.SortStableFunc(order, func(a, b *group) int { return cmp.Compare(b.s.Score, a.s.Score) })
	order = order[:min(k, len(order))]
	sessions, best := make([]SessionHit, len(order)), make([][]SearchHit, len(order))
	for i, g := range order {
		sessions[i], best[i] = g.s, g.units
		sessions[i].Rank = i + 1
	}
	return sessions, best
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

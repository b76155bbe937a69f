// Command eval measures pos-query search on a retrieval set built from the
// real corpus: it builds a lake from the shared corpus of every platform
// (extract with every adapter, normalize, embed with the hash provider,
// load), runs every query of the set in the lexical, vector and hybrid
// modes, and prints recall@k, MRR, exchange-tight and session figures per
// mode, then per kind of query.
//
//	go run ./query/eval [-corpus DIR] [-queries FILE] [-lake DIR] [-build DIR] [-min-similarity X] [-json] [-v]
//
// How a query is scored, from the k results of query.Search (ungrouped,
// in rank order):
//
//   - A result stands for the exchange search attributes it to, its
//     SearchHit.ExchangeID: an exchange's or its prompt's chunk, that
//     exchange; a subagent report, its subagent's last exchange; a
//     compaction summary or a label, the exchange under way when it was
//     written; a plan or a unit search could not place, none. Search lists
//     each exchange once.
//   - A result that folds near duplicates into itself (SearchHit.Similar:
//     the same output or text in other exchanges) stands for their
//     exchanges too, at its rank, by the same rules: search names them.
//   - recall@k is the share of the query's relevant exchanges that some
//     result stands for; MRR averages 1/rank of the first result that
//     stands for a relevant exchange (0 when none does).
//   - exchange-tight@k is the share of queries with a result that is a
//     relevant exchange itself: its unit is the exchange (an exchange,
//     prompt or other chunk of the exchange's own content, whose id search
//     takes from the chunk), not a report, summary, label or plan that
//     search maps to an exchange after the fact.
//   - session@k is the share of queries with a result, of any kind, from a
//     session holding a relevant exchange: finding the right session is
//     looser than finding the exchange, and the gap between session@k and
//     exchange-tight@k is how often search only gets close.
//
// Figures are averaged over all queries and over each kind (direct,
// paraphrase, tool_output, cross_session; see the set's about). -v adds
// each query's ranks and the figures per platform and per query language;
// -json prints the whole report as one JSON object instead, for tracking
// figures over time.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/pos-lake/pos/extract"
	_ "github.com/pos-lake/pos/extract/all" // every adapter
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
)

func main() {
	corpus := flag.String("corpus", defaultCorpus(), "the corpus directory ($POS_CORPUS)")
	queries := flag.String("queries", DefaultSet(), "the evaluation set")
	lake := flag.String("lake", "", "search this lake instead of building one from the corpus")
	build := flag.String("build", "", "build the corpus lake in this directory and keep it (search it later with -lake)")
	k := flag.Int("k", 10, "results per query")
	verbose := flag.Bool("v", false, "print each query's ranks and the figures per platform and language")
	asJSON := flag.Bool("json", false, "print the report as JSON")
	minSim := flag.Float64("min-similarity", 0, "the vector side's minimum similarity (0: the model's; negative: none)")
	flag.Float64Var(&bm25.K1, "bm25-k1", 0, "BM25's k1 (0: pos-query's default)")
	flag.Float64Var(&bm25.B, "bm25-b", 0, "BM25's b (0: pos-query's default; negative: 0)")
	flag.StringVar(&staticModel, "static-model", "", "build the lake with this static model (a name in the models directory, e.g. one pos-embed model train wrote) instead of the hash provider")
	tune := flag.Bool("tune", false, "choose hybrid's fusion weights on the queries of even id and report them on the odd ones")
	flag.BoolVar(&noExpand, "no-expand", false, "search without query expansion")
	flag.IntVar(&feedback.Units, "fb-units", 0, "expansion: units of the first pass read (0: the default)")
	flag.IntVar(&feedback.Terms, "fb-terms", 0, "expansion: terms added (0: the default)")
	flag.Float64Var(&feedback.Weight, "fb-weight", 0, "expansion: weight of the best added term (0: the default)")
	flag.Float64Var(&feedback.Synonyms, "synonyms", 0, "expansion: weight of a WordNet synonym (0: the default, negative: none)")
	flag.Float64Var(&feedback.Translations, "translations", 0, "expansion: weight of a dictionary translation (0: the default, negative: none)")
	flag.IntVar(&feedback.PerWord, "per-word", 0, "expansion: terms a word's translation adds (0: the default)")
	flag.Float64Var(&feedback.Outward, "outward", 0, "expansion: weight of a translation out of English (0: the default, negative: none)")
	flag.IntVar(&feedback.OutwardPerWord, "outward-per-word", 0, "expansion: terms an English word's translation adds (0: the default)")
	flag.BoolVar(&feedback.NoCap, "no-cap", false, "expansion: a translation out of English weighs its own IDF, not at most its word's")
	flag.BoolVar(&tuneExpansion, "tune-expansion", false, "choose the expansion's weights on the queries of even id and report them on the odd ones")
	flag.Parse()
	if *tune {
		tuneFusion = true
	}
	if err := run(context.Background(), os.Stdout, *corpus, *queries, *lake, *build, *k, *minSim, *verbose, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, corpus, queriesFile, lake, build string, k int, minSim float64, verbose, asJSON bool) error {
	set, err := ReadSet(queriesFile)
	if err != nil {
		return err
	}
	// Progress goes to stderr with -json, so that stdout is one object.
	info := w
	if asJSON {
		info = os.Stderr
	}
	if lake == "" {
		lake = build
		if lake == "" {
			dir, err := os.MkdirTemp("", "pos-eval-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			lake = filepath.Join(dir, "lake")
		} else if _, err := os.Stat(lake); err == nil {
			return fmt.Errorf("%s: already exists (search it with -lake)", lake)
		}
		start := time.Now()
		if err := BuildLake(ctx, corpus, lake); err != nil {
			return err
		}
		fmt.Fprintf(info, "lake built from %s in %v\n", corpus, time.Since(start).Round(time.Millisecond))
	}
	if tuneExpansion {
		return TuneExpansion(ctx, w, lake, set, k)
	}
	if tuneFusion {
		return Tune(ctx, w, lake, set, k)
	}
	rep, err := Evaluate(ctx, lake, set, k, minSim)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rep.Summary())
	}
	rep.Print(w, verbose)
	return nil
}

// noExpand and feedback are the searches' expansion settings.
var (
	noExpand bool
	feedback query.Feedback
)

// Set is an evaluation set: queries and the exchanges that answer them.
type Set struct {
	Corpus  string  `json:"corpus"`
	About   string  `json:"about"`
	Queries []Query `json:"queries"`
}

// The kinds of query.
const (
	// KindDirect asks in the words of the session.
	KindDirect = "direct"
	// KindParaphrase avoids the answer's words, or asks in another
	// language than the session's.
	KindParaphrase = "paraphrase"
	// KindToolOutput is answered only by a tool result: an error, a
	// failing test, a command's output.
	KindToolOutput = "tool_output"
	// KindCrossSession is answered by exchanges of several sessions.
	KindCrossSession = "cross_session"
)

// Kinds are the kinds of query, in report order.
var Kinds = []string{KindDirect, KindParaphrase, KindToolOutput, KindCrossSession}

// Query is one query and the ids of the exchanges that answer it.
type Query struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// Lang is the query's language (ISO 639-1) when not English.
	Lang     string   `json:"lang,omitempty"`
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
	// Evidence, for a tool_output query, is text of the tool result that
	// answers it, which no prompt, reply, summary or report holds.
	Evidence string `json:"evidence,omitempty"`
}

// Language is the query's language, "en" when unset.
func (q Query) Language() string { return cmp.Or(q.Lang, "en") }

// ReadSet reads an evaluation set and checks its form: unique ids, a
// known kind, a query, relevant exchanges without repeats, and evidence
// on the tool_output queries.
func ReadSet(path string) (*Set, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Set
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(s.Queries) == 0 {
		return nil, fmt.Errorf("%s: no queries", path)
	}
	seen := map[string]bool{}
	for i, q := range s.Queries {
		var problem string
		switch {
		case q.ID == "":
			problem = "no id"
		case seen[q.ID]:
			problem = "id used twice"
		case !slices.Contains(Kinds, q.Kind):
			problem = fmt.Sprintf("kind %q is not one of %s", q.Kind, strings.Join(Kinds, ", "))
		case strings.TrimSpace(q.Query) == "":
			problem = "no query"
		case len(q.Relevant) == 0:
			problem = "no relevant exchange"
		case len(slices.Compact(slices.Sorted(slices.Values(q.Relevant)))) != len(q.Relevant):
			problem = "an exchange listed twice"
		case q.Kind == KindToolOutput && strings.TrimSpace(q.Evidence) == "":
			problem = "a tool_output query without evidence"
		case q.Kind != KindToolOutput && q.Evidence != "":
			problem = "evidence on a query that is not tool_output"
		}
		if problem != "" {
			return nil, fmt.Errorf("%s: query %d (%q): %s", path, i+1, q.ID, problem)
		}
		seen[q.ID] = true
	}
	return &s, nil
}

// Modes are the search modes evaluated, in report order.
var Modes = []string{query.SearchLexical, query.SearchVector, query.SearchHybrid}

// Score is one mode's figures over a group of queries.
type Score struct {
	Mode      string  `json:"mode"`
	RecallAtK float64 `json:"recall"`
	MRR       float64 `json:"mrr"`
	// TightAtK is the share of queries with a result that is a relevant
	// exchange itself, SessionAtK the share with a result from a session
	// of a relevant exchange.
	TightAtK   float64 `json:"exchange_tight"`
	SessionAtK float64 `json:"session"`
	Queries    int     `json:"queries"`
}

// Report holds the figures of an evaluation.
type Report struct {
	K int
	// Model is the lake's embedding model, MinSimilarity the vector
	// side's minimum similarity.
	Model         string
	Dim           int
	MinSimilarity float64
	Queries       []Query
	Scores        []Score
	// PerQuery[mode][i] is query i's outcome in a mode.
	PerQuery map[string][]QueryResult
	// Exchanges maps the lake's exchange ids to their platform and session.
	Exchanges map[string]ExchangeRef
}

// ExchangeRef is where an exchange is.
type ExchangeRef struct {
	Platform string
	Session  string
}

// QueryResult is one query's outcome in one mode.
type QueryResult struct {
	Recall float64 `json:"recall"`
	// First is the rank of the first result that stands for a relevant
	// exchange, Tight of the first that is one, Session of the first
	// from a session of one (0: none).
	First   int `json:"first"`
	Tight   int `json:"tight"`
	Session int `json:"session"`
}

// bm25 are the BM25 parameters the searches use (zero: pos-query's
// defaults), set by -bm25-k1 and -bm25-b to tune them.
var bm25 struct{ K1, B float64 }

// Searcher runs one query in one mode.
type Searcher func(ctx context.Context, q Query, mode string) ([]query.SearchHit, error)

// Evaluate runs every query in every mode; minSim is the vector side's
// minimum similarity (0: the model's, negative: none). Every relevant
// exchange must be in the lake: an id that is not would count as a miss
// forever.
func Evaluate(ctx context.Context, lake string, set *Set, k int, minSim float64) (*Report, error) {
	return evaluate(ctx, lake, set, k, minSim, query.Fusion{}, Modes)
}

// evaluate runs the queries in the given modes (the others have no
// results), hybrid fusing by fusion.
func evaluate(ctx context.Context, lake string, set *Set, k int, minSim float64, fusion query.Fusion, modes []string) (*Report, error) {
	db, err := query.Open(ctx, lake)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	m, ok, err := layout.LakeEmbedding(ctx, lake)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("the lake has no vectors: build it with pos-embed in the pipeline")
	}
	p, err := embed.ProviderFor(m.Model, m.Dim, embed.Config{Provider: m.Provider, ModelsDir: embed.ModelsDir()})
	if err != nil {
		return nil, err
	}
	embedder := func(ctx context.Context, text string) ([]float32, error) {
		vs, err := p.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		return vs[0], nil
	}
	exchanges, err := LakeExchanges(ctx, db)
	if err != nil {
		return nil, err
	}
	var minSeen float64
	search := func(ctx context.Context, q Query, mode string) ([]query.SearchHit, error) {
		if !slices.Contains(modes, mode) {
			return nil, nil
		}
		res, err := db.Search(ctx, query.SearchOptions{Query: q.Query, Mode: mode, K: k, Embed: embedder, MinSimilarity: minSim,
			BM25K1: bm25.K1, BM25B: bm25.B, Fusion: fusion, NoStory: true,
			NoExpand: noExpand, Feedback: feedback})
		if err != nil {
			return nil, err
		}
		if mode != query.SearchLexical {
			minSeen = res.MinSimilarity
		}
		return res.Hits, nil
	}
	rep, err := ScoreSet(ctx, set, k, exchanges, search)
	if err != nil {
		return nil, err
	}
	rep.Model, rep.Dim, rep.MinSimilarity = m.Model, m.Dim, minSeen
	return rep, nil
}

// LakeExchanges reads where each exchange of the lake is.
func LakeExchanges(ctx context.Context, db *query.DB) (map[string]ExchangeRef, error) {
	tbl, err := db.SQL(ctx, "SELECT id, platform, session_id FROM exchange_rows")
	if err != nil {
		return nil, err
	}
	out := make(map[string]ExchangeRef, len(tbl.Rows))
	for _, r := range tbl.Rows {
		id, _ := r[0].(string)
		platform, _ := r[1].(string)
		session, _ := r[2].(string)
		out[id] = ExchangeRef{Platform: platform, Session: session}
	}
	return out, nil
}

// ScoreSet runs every query of the set in every mode with search and
// scores the results by the rules at the top of this file; exchanges says
// where each exchange is.
func ScoreSet(ctx context.Context, set *Set, k int, exchanges map[string]ExchangeRef, search Searcher) (*Report, error) {
	for _, q := range set.Queries {
		for _, id := range q.Relevant {
			if _, ok := exchanges[id]; !ok {
				return nil, fmt.Errorf("%s: relevant exchange %s is not in the lake", q.ID, id)
			}
		}
	}
	rep := &Report{K: k, Queries: set.Queries, PerQuery: map[string][]QueryResult{}, Exchanges: exchanges}
	for _, mode := range Modes {
		for _, q := range set.Queries {
			hits, err := search(ctx, q, mode)
			if err != nil {
				return nil, fmt.Errorf("%s (%s): %w", q.ID, mode, err)
			}
			rep.PerQuery[mode] = append(rep.PerQuery[mode], Judge(hits[:min(k, len(hits))], q.Relevant, exchanges))
		}
	}
	rep.Scores = rep.scores(func(Query) bool { return true })
	return rep, nil
}

// attributed lists the content types whose results search maps to an
// exchange after the fact (a report to its subagent's last exchange, a
// summary or label to the exchange under way): they count for recall and
// MRR, but are not the exchange itself.
var attributed = []string{string(schema.ContentSubagentSummary), string(schema.ContentCompactSummary),
	string(schema.ContentSummaryLabel), string(schema.ContentPlan)}

// Judge scores one result list against the relevant exchanges, by the
// rules at the top of this file; exchanges says where each exchange is.
func Judge(hits []query.SearchHit, relevant []string, exchanges map[string]ExchangeRef) QueryResult {
	sessions := map[ExchangeRef]bool{}
	for _, id := range relevant {
		if ref, ok := exchanges[id]; ok {
			sessions[ref] = true
		}
	}
	found := map[string]bool{}
	var r QueryResult
	for i, h := range hits {
		rank := i + 1
		units := []query.HitRef{{Platform: h.Platform, SessionID: h.SessionID, ExchangeID: h.ExchangeID, ContentType: h.ContentType}}
		units = append(units, h.Similar...)
		for _, u := range units {
			if r.Session == 0 && sessions[ExchangeRef{Platform: u.Platform, Session: u.SessionID}] {
				r.Session = rank
			}
			if u.ExchangeID == "" || !slices.Contains(relevant, u.ExchangeID) {
				continue
			}
			found[u.ExchangeID] = true
			if r.First == 0 {
				r.First = rank
			}
			if r.Tight == 0 && !slices.Contains(attributed, u.ContentType) {
				r.Tight = rank
			}
		}
	}
	r.Recall = float64(len(found)) / float64(len(relevant))
	return r
}

// staticModel, when set (-static-model), is the static model BuildLake
// embeds with instead of the hash provider.
var staticModel string

// BuildLake runs extract (every adapter) → normalize → embed (hash, or
// the static model -static-model names) → load over the histories under
// root into lake.
func BuildLake(ctx context.Context, root, lake string) error {
	if _, err := os.Stat(root); err != nil {
		return fmt.Errorf("the corpus is not at %s (set -corpus or $POS_CORPUS): %w", root, err)
	}
	now := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	var extracted, normalized, embedded bytes.Buffer
	enc := schema.NewEncoder(&extracted)
	opt := extract.Options{Roots: []string{root}, User: "eval", Machine: "eval", Now: func() time.Time { return now },
		State: watermark.NewState(), OnSkip: func(*schema.BadInput) error { return nil }}
	for _, a := range extract.Adapters() {
		if err := a.Extract(ctx, opt, enc.Encode); err != nil {
			return fmt.Errorf("%s: %w", a.Platform(), err)
		}
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	if _, err := normalize.Normalize(ctx, &extracted, &normalized, normalize.Options{Name: root, Enrich: enrich.All}); err != nil {
		return err
	}
	var p embed.Provider = embed.NewHash(0)
	if staticModel != "" {
		var err error
		if p, err = embed.NewProvider(embed.Config{Provider: "static", Model: staticModel, ModelsDir: embed.ModelsDir()}); err != nil {
			return err
		}
	}
	if _, err := embed.Embed(ctx, &normalized, &embedded, embed.Options{Name: root, Provider: p}); err != nil {
		return err
	}
	_, err := load.Load(ctx, &embedded, load.Options{Lake: lake, Now: func() time.Time { return now }, NoCatalog: true})
	return err
}

func sourceDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// defaultCorpus is $POS_CORPUS, else the shared corpus beside the
// repository.
func defaultCorpus() string {
	if d := os.Getenv("POS_CORPUS"); d != "" {
		return d
	}
	return filepath.Join(sourceDir(), "..", "..", "..", "shared", "corpus")
}

// DefaultSet is the evaluation set in the repository.
func DefaultSet() string { return filepath.Join(sourceDir(), "..", "testdata", "eval", "corpus.json") }

// Command eval measures pos-query search on a retrieval set built from the
// real corpus: it builds a lake from the shared corpus of every platform
// (extract with every adapter, normalize, embed with the hash provider,
// load), runs every query of the set in the lexical, vector and hybrid
// modes, and prints recall@10 and MRR per mode.
//
//	go run ./query/eval [-corpus DIR] [-queries FILE] [-lake DIR] [-min-similarity X] [-v]
package main

import (
	"bytes"
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
	"text/tabwriter"
	"time"

	"github.com/pos-lake/pos/extract"
	_ "github.com/pos-lake/pos/extract/all" // every adapter
	"github.com/pos-lake/pos/load"
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
	k := flag.Int("k", 10, "results per query")
	verbose := flag.Bool("v", false, "print each query's ranks")
	minSim := flag.Float64("min-similarity", 0, "the vector side's minimum similarity (0: the model's; negative: none)")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *corpus, *queries, *lake, *k, *minSim, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, corpus, queriesFile, lake string, k int, minSim float64, verbose bool) error {
	set, err := ReadSet(queriesFile)
	if err != nil {
		return err
	}
	if lake == "" {
		dir, err := os.MkdirTemp("", "pos-eval-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		lake = filepath.Join(dir, "lake")
		start := time.Now()
		if err := BuildLake(ctx, corpus, lake); err != nil {
			return err
		}
		fmt.Fprintf(w, "lake built from %s in %v\n", corpus, time.Since(start).Round(time.Millisecond))
	}
	rep, err := Evaluate(ctx, lake, set, k, minSim)
	if err != nil {
		return err
	}
	rep.Print(w, verbose)
	return nil
}

// Set is an evaluation set: queries and the exchanges that answer them.
type Set struct {
	Corpus  string  `json:"corpus"`
	About   string  `json:"about"`
	Queries []Query `json:"queries"`
}

// Query is one query and the ids of the exchanges that answer it.
type Query struct {
	ID       string   `json:"id"`
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
}

// ReadSet reads an evaluation set.
func ReadSet(path string) (*Set, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Set
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(s.Queries) == 0 {
		return nil, fmt.Errorf("%s: no queries", path)
	}
	return &s, nil
}

// Modes are the search modes evaluated, in report order.
var Modes = []string{query.SearchLexical, query.SearchVector, query.SearchHybrid}

// Score is one mode's figures.
type Score struct {
	Mode      string
	RecallAtK float64
	MRR       float64
	Queries   int
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
	// PerQuery[mode][i] is the recall and the rank of the first relevant
	// result (0: none) of query i.
	PerQuery map[string][]QueryResult
	// Platform maps the lake's exchange ids to their platforms.
	Platform map[string]string
}

// QueryResult is one query's outcome in one mode.
type QueryResult struct {
	Recall float64
	First  int
}

// Evaluate runs every query in every mode; minSim is the vector side's
// minimum similarity (0: the model's, negative: none).
func Evaluate(ctx context.Context, lake string, set *Set, k int, minSim float64) (*Report, error) {
	db, err := query.Open(ctx, lake)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	m, ok, err := load.LakeEmbedding(ctx, lake)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("the lake has no vectors: build it with pos-embed in the pipeline")
	}
	p, err := embed.ProviderFor(m.Model, m.Dim, embed.Config{})
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
	rep := &Report{K: k, Model: m.Model, Dim: m.Dim, Queries: set.Queries, PerQuery: map[string][]QueryResult{}, Platform: map[string]string{}}
	// Each query's platform: its first relevant exchange's.
	tbl, err := db.SQL(ctx, "SELECT id, platform FROM exchange_rows")
	if err != nil {
		return nil, err
	}
	for _, r := range tbl.Rows {
		rep.Platform[r[0].(string)] = r[1].(string)
	}
	for _, mode := range Modes {
		for _, q := range set.Queries {
			res, err := db.Search(ctx, query.SearchOptions{Query: q.Query, Mode: mode, K: k, Embed: embedder, MinSimilarity: minSim})
			if err != nil {
				return nil, fmt.Errorf("%s (%s): %w", q.ID, mode, err)
			}
			if mode != query.SearchLexical {
				rep.MinSimilarity = res.MinSimilarity
			}
			rep.PerQuery[mode] = append(rep.PerQuery[mode], Judge(res.Hits, q.Relevant))
		}
	}
	rep.Scores = rep.scores("")
	return rep, nil
}

// scores averages each mode's results over the queries of a platform ("":
// all).
func (r *Report) scores(platform string) []Score {
	var out []Score
	for _, mode := range Modes {
		var n, recall, rr float64
		for i, q := range r.Queries {
			if platform != "" && r.Platform[q.Relevant[0]] != platform {
				continue
			}
			qr := r.PerQuery[mode][i]
			n++
			recall += qr.Recall
			if qr.First > 0 {
				rr += 1 / float64(qr.First)
			}
		}
		if n > 0 {
			out = append(out, Score{Mode: mode, RecallAtK: recall / n, MRR: rr / n, Queries: int(n)})
		}
	}
	return out
}

// Judge scores one result list: the share of the relevant exchanges among
// the hits, and the rank of the first hit that is one of them. A hit counts
// as the exchange it belongs to.
func Judge(hits []query.SearchHit, relevant []string) QueryResult {
	found := map[string]bool{}
	var r QueryResult
	for i, h := range hits {
		id := h.ExchangeID
		if id == "" {
			id = h.ParentID
		}
		if slices.Contains(relevant, id) {
			found[id] = true
			if r.First == 0 {
				r.First = i + 1
			}
		}
	}
	r.Recall = float64(len(found)) / float64(len(relevant))
	return r
}

// Score returns the figures of a mode.
func (r *Report) Score(mode string) Score {
	for _, s := range r.Scores {
		if s.Mode == mode {
			return s
		}
	}
	return Score{}
}

// Print writes the report: a line per mode, and with verbose a line per
// query.
func (r *Report) Print(w io.Writer, verbose bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if verbose {
		fmt.Fprintf(tw, "query\t%s\ttext\n", strings.Join(Modes, "\t"))
		for i, q := range r.Queries {
			var cells []string
			for _, m := range Modes {
				qr := r.PerQuery[m][i]
				first := "-"
				if qr.First > 0 {
					first = fmt.Sprint(qr.First)
				}
				cells = append(cells, fmt.Sprintf("%.2f@%s", qr.Recall, first))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", q.ID, strings.Join(cells, "\t"), q.Query)
		}
		fmt.Fprintln(tw, "\t\t\t\t(recall@k, rank of the first relevant result)")
		tw.Flush()
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "vectors: %s (%d-d), minimum similarity %.3f\n", r.Model, r.Dim, r.MinSimilarity)
	fmt.Fprintf(tw, "mode\trecall@%d\tMRR\tqueries\n", r.K)
	row := func(label string, ss []Score) {
		for _, s := range ss {
			name := s.Mode
			if name == query.SearchVector {
				name = "vector (hash)"
			}
			fmt.Fprintf(tw, "%s%s\t%.3f\t%.3f\t%d\n", label, name, s.RecallAtK, s.MRR, s.Queries)
		}
	}
	row("", r.Scores)
	if verbose {
		var platforms []string
		for _, q := range r.Queries {
			if p := r.Platform[q.Relevant[0]]; !slices.Contains(platforms, p) {
				platforms = append(platforms, p)
			}
		}
		for _, p := range platforms {
			fmt.Fprintln(tw, "\t\t\t")
			row(p+": ", r.scores(p))
		}
	}
	tw.Flush()
}

// BuildLake runs extract (every adapter) → normalize → embed (hash) →
// load over the histories under root into lake.
func BuildLake(ctx context.Context, root, lake string) error {
	if _, err := os.Stat(root); err != nil {
		return fmt.Errorf("the corpus is not at %s (set -corpus or $POS_CORPUS): %w", root, err)
	}
	now := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	var extracted, normalized, embedded bytes.Buffer
	enc := schema.NewEncoder(&extracted)
	opt := extract.Options{Roots: []string{root}, User: "eval", Machine: "eval", Now: func() time.Time { return now },
		State: extract.NewState(), OnSkip: func(*schema.BadInput) error { return nil }}
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
	if _, err := embed.Embed(ctx, &normalized, &embedded, embed.Options{Name: root, Provider: embed.NewHash(0)}); err != nil {
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

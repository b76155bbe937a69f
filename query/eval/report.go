package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	_ "github.com/pos-lake/pos/extract/all" // every adapter
	"github.com/pos-lake/pos/query"
)

// scores averages each mode's results over the queries that keep selects.
func (r *Report) scores(keep func(Query) bool) []Score {
	var out []Score
	for _, mode := range Modes {
		var n, recall, rr, tight, session float64
		for i, q := range r.Queries {
			if !keep(q) {
				continue
			}
			qr := r.PerQuery[mode][i]
			n++
			recall += qr.Recall
			if qr.First > 0 {
				rr += 1 / float64(qr.First)
			}
			if qr.Tight > 0 {
				tight++
			}
			if qr.Session > 0 {
				session++
			}
		}
		if n > 0 {
			out = append(out, Score{Mode: mode, RecallAtK: recall / n, MRR: rr / n, TightAtK: tight / n, SessionAtK: session / n, Queries: int(n)})
		}
	}
	return out
}

// ScoresOfKind averages each mode's results over the queries of a kind.
func (r *Report) ScoresOfKind(kind string) []Score {
	return r.scores(func(q Query) bool { return q.Kind == kind })
}

// Platform is the platform of a query: its first relevant exchange's.
func (r *Report) Platform(q Query) string { return r.Exchanges[q.Relevant[0]].Platform }

// Score returns the figures of a mode over all queries.
func (r *Report) Score(mode string) Score {
	for _, s := range r.Scores {
		if s.Mode == mode {
			return s
		}
	}
	return Score{}
}

// Summary is a report as -json prints it.
type Summary struct {
	K             int                `json:"k"`
	Model         string             `json:"model"`
	Dim           int                `json:"dim"`
	MinSimilarity float64            `json:"min_similarity"`
	Overall       []Score            `json:"overall"`
	ByKind        map[string][]Score `json:"by_kind"`
	ByPlatform    map[string][]Score `json:"by_platform"`
	ByLanguage    map[string][]Score `json:"by_language"`
	Queries       []QuerySummary     `json:"queries"`
}

// QuerySummary is one query's outcome in each mode.
type QuerySummary struct {
	ID    string                 `json:"id"`
	Kind  string                 `json:"kind"`
	Query string                 `json:"query"`
	Modes map[string]QueryResult `json:"modes"`
}

// Summary gathers the report's figures.
func (r *Report) Summary() Summary {
	s := Summary{K: r.K, Model: r.Model, Dim: r.Dim, MinSimilarity: r.MinSimilarity, Overall: r.Scores,
		ByKind: map[string][]Score{}, ByPlatform: map[string][]Score{}, ByLanguage: map[string][]Score{}}
	for _, k := range Kinds {
		if ss := r.ScoresOfKind(k); len(ss) > 0 {
			s.ByKind[k] = ss
		}
	}
	for _, p := range r.platforms() {
		s.ByPlatform[p] = r.scores(func(q Query) bool { return r.Platform(q) == p })
	}
	for _, l := range r.languages() {
		s.ByLanguage[l] = r.scores(func(q Query) bool { return q.Language() == l })
	}
	for i, q := range r.Queries {
		qs := QuerySummary{ID: q.ID, Kind: q.Kind, Query: q.Query, Modes: map[string]QueryResult{}}
		for _, m := range Modes {
			qs.Modes[m] = r.PerQuery[m][i]
		}
		s.Queries = append(s.Queries, qs)
	}
	return s
}

func (r *Report) platforms() []string {
	var out []string
	for _, q := range r.Queries {
		if p := r.Platform(q); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func (r *Report) languages() []string {
	var out []string
	for _, q := range r.Queries {
		if l := q.Language(); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// Print writes the report: a line per mode, then a line per mode and
// kind; with verbose first a line per query, and last the lines per
// platform and per query language.
func (r *Report) Print(w io.Writer, verbose bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	rank := func(n int) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprint(n)
	}
	if verbose {
		fmt.Fprintf(tw, "query\tkind\t%s\ttext\n", strings.Join(Modes, "\t"))
		for i, q := range r.Queries {
			var cells []string
			for _, m := range Modes {
				qr := r.PerQuery[m][i]
				cells = append(cells, fmt.Sprintf("%.2f@%s/%s/%s", qr.Recall, rank(qr.First), rank(qr.Tight), rank(qr.Session)))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", q.ID, q.Kind, strings.Join(cells, "\t"), q.Query)
		}
		fmt.Fprintln(tw, "\t\t\t\t\t(recall@k @ rank of the first result for a relevant exchange / that is one / from its session)")
		tw.Flush()
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "vectors: %s (%d-d), minimum similarity %.3f\n", r.Model, r.Dim, r.MinSimilarity)
	fmt.Fprintf(tw, "queries\tmode\trecall@%d\tMRR\texchange-tight@%d\tsession@%d\tn\n", r.K, r.K, r.K)
	rows := func(label string, ss []Score) {
		for _, s := range ss {
			name := s.Mode
			if name == query.SearchVector {
				name = "vector (" + cmp.Or(r.Model, "?") + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%d\n", label, name, s.RecallAtK, s.MRR, s.TightAtK, s.SessionAtK, s.Queries)
		}
	}
	rows("all", r.Scores)
	for _, k := range Kinds {
		rows(k, r.ScoresOfKind(k))
	}
	if verbose {
		for _, p := range r.platforms() {
			rows(p, r.scores(func(q Query) bool { return r.Platform(q) == p }))
		}
		for _, l := range r.languages() {
			rows("lang="+l, r.scores(func(q Query) bool { return q.Language() == l }))
		}
	}
	tw.Flush()
}

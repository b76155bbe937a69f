package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pos-lake/pos/query"
)

// tuneFusion is set by -tune.
var tuneFusion bool

// Fusion weights are chosen on one half of the set and reported on the
// other, so that the figures printed are not those the choice was made
// on: the queries of even id number (q02, q04, …) choose, those of odd id
// number report.

// half returns the queries whose id number has the given parity.
func half(set *Set, even bool) *Set {
	out := &Set{Corpus: set.Corpus, About: set.About}
	for _, q := range set.Queries {
		n, err := strconv.Atoi(strings.TrimLeft(q.ID, "abcdefghijklmnopqrstuvwxyz_-"))
		if err == nil && (n%2 == 0) == even {
			out.Queries = append(out.Queries, q)
		}
	}
	return out
}

// fusionTrial is a fusion tried on the choosing half.
type fusionTrial struct {
	name   string
	minSim float64 // the vector side's minimum similarity: 0 the model's (score fusion), -1 none (rank fusion)
	fusion query.Fusion
}

// fusionGrid lists the fusions tried: score fusion's lexical weight, and
// rank fusion's lexical weight and k.
func fusionGrid() []fusionTrial {
	var out []fusionTrial
	for _, w := range []float64{0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 0.9} {
		out = append(out, fusionTrial{fmt.Sprintf("score w=%.2f", w), 0, query.Fusion{LexicalWeight: w}})
	}
	for _, w := range []float64{0.3, 0.5, 0.6, 0.7, 0.8} {
		for _, k := range []float64{10, 30, 60} {
			out = append(out, fusionTrial{fmt.Sprintf("rank w=%.2f k=%g", w, k), -1, query.Fusion{RankLexicalWeight: w, RankK: k}})
		}
	}
	return out
}

// objective is what the choice maximizes: hybrid's recall@k plus its MRR.
func objective(sc Score) float64 { return sc.RecallAtK + sc.MRR }

// Tune runs hybrid search with each fusion of the grid on the choosing
// half, picks the best of score fusion and of rank fusion, and prints
// each with the defaults' figures on the reporting half.
func Tune(ctx context.Context, w io.Writer, lake string, set *Set, k int) error {
	choose, report := half(set, true), half(set, false)
	hybrid := []string{query.SearchHybrid}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "fusion\trecall@%d\tMRR\t(%d queries of even id)\n", k, len(choose.Queries))
	best := map[float64]fusionTrial{}
	bestScore := map[float64]float64{}
	for _, t := range fusionGrid() {
		rep, err := evaluate(ctx, lake, choose, k, t.minSim, t.fusion, hybrid)
		if err != nil {
			return err
		}
		sc := rep.Score(query.SearchHybrid)
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\n", t.name, sc.RecallAtK, sc.MRR)
		if o := objective(sc); o > bestScore[t.minSim]+1e-9 {
			best[t.minSim], bestScore[t.minSim] = t, o
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintf(tw, "fusion\trecall@%d\tMRR\t(%d queries of odd id)\n", k, len(report.Queries))
	for _, minSim := range []float64{0, -1} {
		for _, t := range []fusionTrial{{"default", minSim, query.Fusion{}}, best[minSim]} {
			rep, err := evaluate(ctx, lake, report, k, t.minSim, t.fusion, hybrid)
			if err != nil {
				return err
			}
			sc := rep.Score(query.SearchHybrid)
			name := t.name
			if name == "default" {
				name = fmt.Sprintf("default %+v (min similarity %g)", query.DefaultFusion, minSim)
			}
			fmt.Fprintf(tw, "%s\t%.3f\t%.3f\n", name, sc.RecallAtK, sc.MRR)
		}
	}
	return tw.Flush()
}

package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/pos-lake/pos/query"
)

// tuneExpansion is set by -tune-expansion.
var tuneExpansion bool

// expansionGrid lists the expansions tried: the weight and breadth of the
// translations out of English.
func expansionGrid() []query.Feedback {
	out := []query.Feedback{{Outward: -1}}
	for _, ow := range []float64{0.5, 0.7, 1, 1.5, 2} {
		for _, opw := range []int{2, 3, 5} {
			out = append(out, query.Feedback{Outward: ow, OutwardPerWord: opw})
		}
	}
	return out
}

// TuneExpansion runs hybrid search with each expansion of the grid on the
// queries of even id, picks the one with the best recall@k plus MRR over
// all of them (so that the other kinds weigh as much as paraphrases)
// among those that find as many of the direct queries' answers as the
// search without translation out of English, and prints it next to the
// defaults on the queries of odd id.
func TuneExpansion(ctx context.Context, w io.Writer, lake string, set *Set, k int) error {
	choose, report := half(set, true), half(set, false)
	hybrid := []string{query.SearchHybrid}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "expansion\tall recall@%d\tMRR\tparaphrase recall\tMRR\tdirect recall\t(%d queries of even id)\n", k, len(choose.Queries))
	base := feedback
	var best query.Feedback
	bestScore, direct := -1.0, -1.0
	for _, f := range expansionGrid() {
		feedback = base
		feedback.Outward, feedback.OutwardPerWord = f.Outward, f.OutwardPerWord
		rep, err := evaluate(ctx, lake, choose, k, 0, query.Fusion{}, hybrid)
		if err != nil {
			return err
		}
		all, para, dir := rep.Score(query.SearchHybrid), kindScore(rep, KindParaphrase), kindScore(rep, KindDirect)
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", expansionName(f), all.RecallAtK, all.MRR, para.RecallAtK, para.MRR, dir.RecallAtK)
		if f.Outward < 0 {
			direct = dir.RecallAtK // the grid's first
		}
		if o := objective(all); o > bestScore+1e-9 && dir.RecallAtK >= direct-1e-9 {
			best, bestScore = feedback, o
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintf(tw, "expansion\tall recall@%d\tMRR\tparaphrase recall\tMRR\t(%d queries of odd id)\n", k, len(report.Queries))
	none := base
	none.Outward = -1
	for _, f := range []query.Feedback{none, base, best} {
		feedback = f
		rep, err := evaluate(ctx, lake, report, k, 0, query.Fusion{}, hybrid)
		if err != nil {
			return err
		}
		all, para := rep.Score(query.SearchHybrid), kindScore(rep, KindParaphrase)
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\n", expansionName(f), all.RecallAtK, all.MRR, para.RecallAtK, para.MRR)
	}
	feedback = base
	return tw.Flush()
}

func kindScore(rep *Report, kind string) Score {
	for _, s := range rep.ScoresOfKind(kind) {
		if s.Mode == query.SearchHybrid {
			return s
		}
	}
	return Score{}
}

func expansionName(f query.Feedback) string {
	switch {
	case f.Outward == 0:
		return "defaults"
	case f.Outward < 0:
		return "no translation out of English"
	}
	return fmt.Sprintf("out of English: weight %g, %d terms a word", f.Outward, f.OutwardPerWord)
}

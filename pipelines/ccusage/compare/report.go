package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

func diff(a, b contribution) contribution {
	out := contribution{}
	for k, v := range a {
		out.add(k, v)
	}
	for k, v := range b {
		out.add(k, tokens{}.sub(v))
	}
	for k, v := range out {
		if v.zero() {
			delete(out, k)
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// The report

func report(w io.Writer, cc, ps map[rowKey]row, x *explanation, tol float64, maxLines int) error {
	keys := map[rowKey]bool{}
	for k := range cc {
		keys[k] = true
	}
	for k := range ps {
		keys[k] = true
	}
	sorted := make([]rowKey, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, func(a, b rowKey) int { return strings.Compare(a.Day+"\x00"+a.Model, b.Day+"\x00"+b.Model) })

	explained := map[rowKey]tokens{}
	byCause := map[string][]item{}
	if x != nil {
		for _, it := range x.items {
			for k, d := range it.delta {
				explained[k] = addT(explained[k], d)
			}
			byCause[it.cause] = append(byCause[it.cause], it)
		}
	}
	var (
		rows, equalRows, explainedRows, badTokens, badCost, costRows, lcRows int
		ccCost, posCost, worst                                               float64
		worstKey                                                             rowKey
		totCC, totPos                                                        tokens
	)
	for _, k := range sorted {
		c, p := cc[k], ps[k]
		if c.tokens.zero() && p.tokens.zero() && (!c.HasCost || c.Cost == 0) {
			continue // a model with no tokens that day (e.g. only empty lines)
		}
		rows++
		totCC.add(c.tokens)
		totPos.add(p.tokens)
		d := p.tokens.sub(c.tokens)
		switch {
		case d.zero():
			equalRows++
		case x != nil && d == explained[k]:
			explainedRows++
			fmt.Fprintf(w, "explained  %s %-32s pos-ccusage %s\n", k.Day, k.Model, d)
		default:
			badTokens++
			fmt.Fprintf(w, "DIFFERS    %s %-32s pos %s | ccusage %s | explained %s\n", k.Day, k.Model, p.tokens, c.tokens, explained[k])
		}
		if d.zero() && c.HasCost {
			costRows++
			ccCost += c.Cost
			if p.HasCost {
				posCost += p.Cost
			}
			rel := relDiff(p.Cost, c.Cost)
			if !p.HasCost {
				rel = math.Inf(1)
			}
			switch {
			case rel <= tol:
			case x != nil && len(x.longContext[k]) > 0:
				lcRows++
				fmt.Fprintf(w, "explained  %s %-32s cost pos $%.6f ccusage $%.6f (%.3f%%): %d requests above 200k prompt tokens, e.g. %s\n",
					k.Day, k.Model, p.Cost, c.Cost, 100*rel, len(x.longContext[k]), x.longContext[k][0])
				continue
			default:
				badCost++
				fmt.Fprintf(w, "COST       %s %-32s pos $%.6f ccusage $%.6f (%.3f%%)\n", k.Day, k.Model, p.Cost, c.Cost, 100*rel)
			}
			if rel > worst {
				worst, worstKey = rel, k
			}
		}
	}
	if x != nil {
		causes := make([]string, 0, len(byCause))
		for c := range byCause {
			causes = append(causes, c)
		}
		slices.Sort(causes)
		for _, c := range causes {
			its := byCause[c]
			var d tokens
			for _, it := range its {
				for _, v := range it.delta {
					d.add(v)
				}
			}
			fmt.Fprintf(w, "cause: %s: %d messages, pos-ccusage %s\n", c, len(its), d)
			for i, it := range its {
				if i == maxLines {
					fmt.Fprintf(w, "  … %d more\n", len(its)-maxLines)
					break
				}
				fmt.Fprintf(w, "  %s\n", it.where)
			}
		}
		// Each model must reproduce its tool.
		modelCC, modelPos := 0, 0
		for _, k := range sorted {
			if cc[k].tokens != x.cc[k] {
				modelCC++
				fmt.Fprintf(w, "MODEL      ccusage's rules miss %s %s: ccusage %s, model %s\n", k.Day, k.Model, cc[k].tokens, x.cc[k])
			}
			if ps[k].tokens != x.pos[k] {
				modelPos++
				fmt.Fprintf(w, "MODEL      pos's rules miss %s %s: pos %s, model %s\n", k.Day, k.Model, ps[k].tokens, x.pos[k])
			}
		}
		fmt.Fprintf(w, "model      %d usage lines read; ccusage's rules reproduce ccusage on %d of %d rows, pos's rules reproduce pos on %d of %d rows\n",
			x.lines, rows-modelCC, rows, rows-modelPos, rows)
		if modelCC+modelPos > 0 {
			badTokens += modelCC + modelPos
		}
	}
	fmt.Fprintf(w, "tokens     %d day×model rows: %d equal, %d differ by explained lines, %d unexplained; totals pos %s | ccusage %s\n",
		rows, equalRows, explainedRows, badTokens, totPos, totCC)
	worstRow := "none"
	if worst > 0 {
		worstRow = fmt.Sprintf("%s %s %.4f%%", worstKey.Day, worstKey.Model, 100*worst)
	}
	fmt.Fprintf(w, "cost       %d rows with equal tokens: pos $%.4f, ccusage $%.4f (%.4f%%); largest row difference: %s; %d beyond %.2f%%, %d more explained by long-context pricing\n",
		costRows, posCost, ccCost, 100*relDiff(posCost, ccCost), worstRow, badCost, 100*tol, lcRows)
	if badTokens > 0 || badCost > 0 {
		fmt.Fprintln(w, "result     FAIL")
		return errFailed
	}
	fmt.Fprintln(w, "result     ok")
	return nil
}

func relDiff(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / math.Max(math.Abs(b), 1e-12)
}

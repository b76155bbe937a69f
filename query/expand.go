package query

// Query expansion: the offline default's semantic side.
//
// The default vectors (pos-hash) are lexical features, so a question in
// other words than the answer's finds little by either side. Expansion
// brings the lake's own words to the question:
//
//   - Pseudo-relevance feedback (RM3): the first pass's best units are read,
//     and the terms that weigh most in them (each unit by its score, each
//     term by its share of the unit's text) join the query with a weight
//     below the query's own terms; the lexical side is scored again and
//     fused with the vector side's list.
//   - Synonyms from WordNet (expand_wordnet.go), where the system has it:
//     the lemmas of the query words' synsets join the first pass with a
//     lower weight.
//
// Both are general mechanisms with few parameters (feedback units, terms,
// weights), chosen on half of the evaluation's paraphrase queries and
// checked on the other half (see the README's figures).

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/transform/embed/lexical"
)

// Feedback are the parameters of pseudo-relevance feedback; zero values
// are the defaults.
type Feedback struct {
	Units  int     // units of the first pass read (default feedbackUnits)
	Terms  int     // terms added (default feedbackTerms; negative: no feedback, synonyms only)
	Weight float64 // the weight of the best added term, the query's own weighing 1 (default feedbackWeight)
	// Synonyms is the weight of a WordNet synonym of a query word
	// (default synonymWeight; negative: no synonyms).
	Synonyms float64
	// Translations is the weight of an English translation of a query
	// word in another language (default translationWeight; negative:
	// none), and PerWord the terms each word's translation adds (default
	// translationsPerWord).
	Translations float64
	PerWord      int
	// Outward is the weight of a translation of the query's English words
	// into the lake's languages of another script (default outwardWeight;
	// negative: none), OutwardPerWord the terms each word adds (see
	// expand_outward.go).
	Outward        float64
	OutwardPerWord int
	// NoCap lets a translation out of English weigh its own IDF, not
	// at most its source word's (for the evaluation's comparison).
	NoCap bool
}

// Feedback defaults, chosen on the even half of the evaluation's
// paraphrase queries (query/eval -expand-grid).
const (
	feedbackUnits  = 5
	feedbackTerms  = 20
	feedbackWeight = 0.5
	synonymWeight  = 0.15
	// translationWeight is a query word's own: the words of another
	// language than the lake's match little, and their translations stand
	// for them.
	translationWeight = 1.0
)

func (f Feedback) withDefaults() Feedback {
	if f.Units <= 0 {
		f.Units = feedbackUnits
	}
	if f.Terms == 0 {
		f.Terms = feedbackTerms
	}
	if f.Weight <= 0 {
		f.Weight = feedbackWeight
	}
	if f.Synonyms == 0 {
		f.Synonyms = synonymWeight
	}
	if f.Translations == 0 {
		f.Translations = translationWeight
	}
	if f.PerWord == 0 {
		f.PerWord = translationsPerWord
	}
	return f.outwardDefaults()
}

// expands reports whether a search expands its query: a hybrid search
// (the default mode) without phrases or prefixes, which ask for exactly
// those words, unless turned off. The lexical mode stays BM25 over the
// query's own words, and the vector mode the query's own vector.
func expands(opt SearchOptions, lq *lexQuery) bool {
	return !opt.NoExpand && opt.Mode == SearchHybrid && len(lq.parsed.Phrases) == 0 && len(lq.parsed.Prefixes) == 0 && !lq.empty()
}

// withSynonyms returns lq with the WordNet synonyms of the query's
// English words and the English translations of its other words added at
// their weights (lq itself when there are none).
func withSynonyms(lq *lexQuery, q string, f Feedback) *lexQuery {
	extra := synonymExtra(lq, q, f)
	if len(extra) == 0 {
		return lq
	}
	return lq.with(extra)
}

// synonymExtra returns the translations and synonyms withSynonyms adds,
// each with its weight.
func synonymExtra(lq *lexQuery, q string, f Feedback) map[string]float64 {
	extra := map[string]float64{}
	if f.Translations > 0 {
		for _, t := range translationTerms(q, lq.parsed.Terms, f.PerWord) {
			extra[t] = f.Translations
		}
	}
	if f.Synonyms > 0 {
		for _, t := range synonymTerms(q, lq.parsed.Terms) {
			if _, ok := extra[t]; !ok {
				extra[t] = f.Synonyms
			}
		}
	}
	return extra
}

// with returns a copy of lq whose current version also has the terms of
// extra, each weighing its value (the query's own terms weigh 1). The
// terms are the current tokenizer's: a file indexed by an older version
// is searched with the query's own terms only.
func (q *lexQuery) with(extra map[string]float64) *lexQuery {
	out := &lexQuery{parsed: q.parsed, base: q.read}
	var weights []float64
	cur := len(q.versions) - 1
	for i, v := range q.versions {
		nv := *v
		nv.offset = out.n
		nv.terms = slices.Clone(v.terms)
		for t := range v.terms {
			weights = append(weights, q.weight(v.offset+t))
		}
		if i == cur {
			have := map[string]bool{}
			for _, t := range v.terms {
				have[t.Text] = true
			}
			for _, t := range slices.Sorted(maps.Keys(extra)) {
				if !have[t] {
					nv.terms = append(nv.terms, searchindex.Term{Text: t})
					weights = append(weights, extra[t])
				}
			}
		}
		out.versions = append(out.versions, &nv)
		out.n += len(nv.terms)
	}
	out.weights = weights
	out.caps = q.caps // the terms added come after, so the indices stay
	return out
}

// weight is the weight of term t (1 without weights).
func (q *lexQuery) weight(t int) float64 {
	if q.weights == nil || t >= len(q.weights) {
		return 1
	}
	return q.weights[t]
}

// feedbackTerms picks the expansion terms of RM3 from the texts of the
// first pass's best units and their scores: a term weighs the sum over the
// units of the unit's share of the scores times the term's share of the
// unit's terms. Terms already in the query, numbers and one-character
// terms are left out; the best weighs f.Weight, the others in proportion.
func feedbackTermsOf(texts []string, scores []float64, query []string, f Feedback) map[string]float64 {
	var total float64
	for _, s := range scores {
		total += s
	}
	if total <= 0 {
		return nil
	}
	in := map[string]bool{}
	for _, t := range query {
		in[t] = true
	}
	rm := map[string]float64{}
	for i, text := range texts {
		terms := lexical.Terms(text)
		if len(terms) == 0 {
			continue
		}
		tf := map[string]int{}
		for _, t := range terms {
			tf[t]++
		}
		w := scores[i] / total / float64(len(terms))
		for t, n := range tf {
			if !in[t] && expansionTerm(t) {
				rm[t] += w * float64(n)
			}
		}
	}
	type tw struct {
		t string
		w float64
	}
	var all []tw
	for t, w := range rm {
		all = append(all, tw{t, w})
	}
	slices.SortFunc(all, func(a, b tw) int { return cmp.Or(cmp.Compare(b.w, a.w), cmp.Compare(a.t, b.t)) })
	all = all[:min(len(all), f.Terms)]
	if len(all) == 0 || all[0].w <= 0 {
		return nil
	}
	out := map[string]float64{}
	for _, x := range all {
		out[x.t] = f.Weight * x.w / all[0].w
	}
	return out
}

// expansionTerm reports whether a term may be added to a query: one that
// has a letter and at least three characters (numbers, hashes and the
// like match by chance).
func expansionTerm(t string) bool {
	if utf8.RuneCountInString(t) < 3 || len(t) > 32 {
		return false
	}
	letters := 0
	for _, r := range t {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters*2 >= utf8.RuneCountInString(t)
}

// feedback runs the second pass of a search: the expansion terms from the
// texts of the first pass's best units, the lexical side scored again with
// them, and fused again with the vector side's candidates.
func (d *DB) feedback(ctx context.Context, opt SearchOptions, lq *lexQuery, files []string, depth int, keep map[int64]bool,
	versioned bool, vec []candidate, units []SearchHit, minSim float64) ([]SearchHit, error) {
	f := opt.Feedback.withDefaults()
	top := units[:min(len(units), f.Units)]
	if len(top) == 0 || f.Terms < 0 {
		return units, nil
	}
	texts, err := d.hitTexts(ctx, top)
	if err != nil {
		return nil, err
	}
	var ts []string
	var scores []float64
	for _, h := range top {
		if t, ok := texts[h.chunkKey]; ok {
			ts = append(ts, t)
			scores = append(scores, math.Max(h.Score, 1e-9))
		}
	}
	extra := feedbackTermsOf(ts, scores, lq.parsed.Terms, f)
	if len(extra) == 0 {
		return units, nil
	}
	lq2 := lq.with(extra)
	ls, err := d.lexicalScores(ctx, opt, files, lq2, depth, keep)
	if err != nil {
		return nil, err
	}
	cands, err := d.candidates(ctx, versioned, ls)
	if err != nil {
		return nil, err
	}
	return fuse(opt.Mode, vec, cands[0], minSim, opt.Fusion), nil
}

// chunkTexts reads the texts of the hits' chunks, from their files only.
func (d *DB) chunkTexts(ctx context.Context, hits []SearchHit) (map[int64]string, error) {
	var files []string
	var keys []any
	for _, h := range hits {
		keys = append(keys, h.chunkKey)
		if !slices.Contains(files, h.file) {
			files = append(files, h.file)
		}
	}
	q := `SELECT chunk_key, text FROM read_parquet(` + layout.LiteralPaths + `, union_by_name = true)
WHERE chunk_key IN (` + placeholders(len(keys)) + `)`
	rows, err := d.db.QueryContext(ctx, q, append([]any{files}, keys...)...)
	if err != nil {
		return nil, sqlErr(err)
	}
	out := map[int64]string{}
	if err := eachRow(rows, func() error {
		var k int64
		var text string
		if err := rows.Scan(&k, &text); err != nil {
			return err
		}
		out[k] = text
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

package query

// Translation of a question out of English, into the languages of a
// lake's sessions that are written in another script: an English
// question about a session held in Russian shares no word with it, and
// neither does a German one, whose English translations (expand_xling.go)
// are carried on. The translations of each English word (its first
// senses in Debian's dictionaries from English, internal/lexdb) join the
// first pass at Feedback.Outward; their terms are stemmed by the
// language's Snowball stemmer as the lake's texts are, so an inflected
// Russian word matches. Languages of the Latin script are left out: their
// words are also English words ("table", "plan", "service") that would
// match the English sessions by chance.

import (
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/pos-lake/pos/transform/embed/lexical"
)

// outwardLangs are the languages a question is translated into.
var outwardLangs = []string{"ru"}

// Outward defaults, chosen on the even half of the evaluation's queries
// for hybrid's recall@10 plus MRR over all of them (query/eval
// -tune-expansion): a translation weighs as much as the word it
// translates (its IDF bounded by the word's, capIDF), and each word adds
// the terms of its first translations.
const (
	outwardWeight  = 0.7
	outwardPerWord = 5
)

func (f Feedback) outwardDefaults() Feedback {
	if f.Outward == 0 {
		f.Outward = outwardWeight
	}
	if f.OutwardPerWord <= 0 {
		f.OutwardPerWord = outwardPerWord
	}
	return f
}

// withExpansion returns lq with the translations and synonyms of its
// words added at their weights (lq itself when there are none).
func withExpansion(lq *lexQuery, q string, f Feedback) *lexQuery {
	extra := synonymExtra(lq, q, f)
	out, by := outwardTerms(q, extra, f)
	for t, w := range out {
		if w > extra[t] {
			extra[t] = w
		}
	}
	if len(extra) == 0 {
		return lq
	}
	lq = lq.with(extra)
	if !f.NoCap {
		lq.capBy(by)
	}
	return lq
}

// outwardTerms returns the index terms of the translations, into
// outwardLangs, of the query's English words (an English question's own
// content words; another's English translations, given as their terms
// among extra at the translations' weight), each weighing f.Outward.
//
// by names each translation's source: the term of the English word it
// translates, whose IDF bounds its own (capIDF).
func outwardTerms(q string, extra map[string]float64, f Feedback) (out map[string]float64, by map[string]string) {
	if f.Outward <= 0 || f.OutwardPerWord <= 0 {
		return nil, nil
	}
	var words []string
	if lexical.Detect(q) == lexical.English {
		seen := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && r != '-' }) {
			if !seen[w] && len(w) >= 3 && isASCII(w) && !lexical.IsStopword(lexical.English, w) {
				seen[w] = true
				words = append(words, w)
			}
		}
	} else if f.Translations > 0 {
		for _, t := range slices.Sorted(maps.Keys(extra)) { // in order: each word's terms are those no word before took
			if extra[t] >= f.Translations && isASCII(t) {
				words = append(words, t)
			}
		}
	}
	if len(words) == 0 {
		return nil, nil
	}
	tr := translator()
	out, by = map[string]float64{}, map[string]string{}
	for _, lang := range outwardLangs {
		for _, w := range words {
			src := w
			if st := lexical.Terms(w); len(st) > 0 {
				src = st[0]
			}
			var ts []string
			for _, g := range tr.FromEnglish(lang, w, 2*f.OutwardPerWord) {
				for _, t := range lexical.Terms(g) {
					if len(ts) >= f.OutwardPerWord {
						break
					}
					if _, ok := out[t]; !ok && expansionTerm(t) && !slices.Contains(ts, t) {
						ts = append(ts, t)
					}
				}
			}
			for _, t := range ts {
				out[t], by[t] = f.Outward, src
			}
		}
	}
	return out, by
}

// capIDF bounds the IDF of each term of caps by that of its source term,
// both before weighing: a translation into a language few of the lake's
// texts use is rare there, and would otherwise outweigh the query's own
// word where the lake has that word too. It weighs as much as the word
// it translates, at most.
func capIDF(idf []float64, caps map[int]int) {
	if len(caps) == 0 {
		return
	}
	own := slices.Clone(idf) // a source's own IDF, whatever bounds it
	for t, src := range caps {
		if t < len(idf) && src < len(idf) {
			idf[t] = min(own[t], own[src])
		}
	}
}

// capBy has the current version's term of each term of by (a
// translation) bound by the term it names (its source), where both are
// among the query's terms.
func (q *lexQuery) capBy(by map[string]string) {
	if len(by) == 0 {
		return
	}
	v := q.versions[len(q.versions)-1]
	at := map[string]int{}
	for i, t := range v.terms {
		if !t.Prefix {
			at[t.Text] = v.offset + i
		}
	}
	caps := maps.Clone(q.caps)
	if caps == nil {
		caps = map[int]int{}
	}
	for t, src := range by {
		i, ok1 := at[t]
		j, ok2 := at[src]
		if ok1 && ok2 && i != j {
			caps[i] = j
		}
	}
	q.caps = caps
}

package query

import (
	"github.com/pos-lake/pos/load/searchindex"
)

// mergedSet is what a lexical pass does with one segment's merged term
// index (searchindex.Lexicon): the window's rows among those of the files the
// search reads from it, the postings of the query's terms in the window,
// and the rows' scores, in arrays indexed by the rows' ordinals in the
// segment. A second pass (the expansion's) adds its added terms' scores
// to the first's.
type mergedSet struct {
	lex   *searchindex.Lexicon
	set   searchindex.MergedFiles
	state []uint8 // by entry: entryOut, entryAll or entryRows
	file  []int32 // by entry: its file's index in the search's files
	all   bool    // every merged row of the segment is in the window
	st    windowStats
	hits  []termHits // of the pass being read
	acc   []float64  // by ordinal: the score (0: none)
}

const (
	entryOut  = iota // not a file of the search
	entryAll         // all its rows are in the window
	entryRows        // its rows are tested one by one
)

// termHits are a term's postings in the window: in place (all), or
// copied.
type termHits struct {
	term int32
	p    searchindex.Postings
	ords []uint32 // when copied
	tfs  []int32
	copy bool
}

func newMergedSet(m searchindex.MergedFiles, files int) *mergedSet {
	return &mergedSet{lex: m.Lex, set: m}
}

// window counts the window's rows of the set's files (BM25's N and mean
// length) and marks its entries: a file whose rows are all in the window
// and pass the filters counts its totals; the others row by row.
func (m *mergedSet) window(since, until int64, keep map[int64]bool) {
	l := m.lex
	m.state = make([]uint8, len(l.Entries))
	m.file = make([]int32, len(l.Entries))
	for j, e := range m.set.Entries {
		ent := l.Entries[e]
		m.file[e] = int32(m.set.Files[j])
		if keep == nil && ent.MinTS >= since && ent.MaxTS < until {
			m.state[e] = entryAll
			m.st.n += int64(ent.Rows)
			m.st.terms += ent.SumDL
			continue
		}
		m.state[e] = entryRows
		for o := ent.Base; o < ent.Base+ent.Rows; o++ {
			if ts := l.TS[o]; ts >= since && ts < until && (keep == nil || keep[l.Keys[o]]) {
				m.st.n++
				m.st.terms += int64(l.DL[o])
			}
		}
	}
	m.all = true
	for e, ent := range l.Entries {
		if ent.Version != 0 && ent.Rows > 0 && m.state[e] != entryAll {
			m.all = false
		}
	}
}

// read looks the query's terms from the from-th on up in the segment and
// keeps their postings in the window, counting their document
// frequencies in df.
func (m *mergedSet) read(q *lexQuery, from int, since, until int64, keep map[int64]bool, df []float64) error {
	l := m.lex
	m.hits = m.hits[:0]
	for _, version := range l.Versions() {
		lv := q.version(version)
		skip := min(max(from-lv.offset, 0), len(lv.terms))
		for ti, t := range lv.terms[skip:] {
			term := int32(lv.offset + skip + ti)
			err := l.Postings(version, t, func(p searchindex.Postings) error {
				h := termHits{term: term, p: p}
				if m.all {
					df[term] += float64(len(p.Ords))
					m.hits = append(m.hits, h)
					return nil
				}
				h.copy = true
				for i, o := range p.Ords {
					switch m.state[l.Ent[o]] {
					case entryOut:
						continue
					case entryRows:
						if ts := l.TS[o]; ts < since || ts >= until || keep != nil && !keep[l.Keys[o]] {
							continue
						}
					}
					h.ords, h.tfs = append(h.ords, o), append(h.tfs, p.TF(i))
				}
				df[term] += float64(len(h.ords))
				m.hits = append(m.hits, h)
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// score adds the pass's terms' BM25 scores to the rows'. A chunk's
// length normalization is the same for every term, and computed once per
// length (as lexicalScores does for each posting, so the scores are the
// same to the bit).
func (m *mergedSet) score(idf []float64, k1, b, avgdl float64) {
	l := m.lex
	if m.acc == nil && len(m.hits) > 0 {
		m.acc = make([]float64, l.Rows)
	}
	var norms [4096]float64
	for d := range norms {
		norms[d] = k1 * (1 - b + b*float64(d)/avgdl)
	}
	norm := func(d uint32) float64 {
		if d < uint32(len(norms)) {
			return norms[d]
		}
		return k1 * (1 - b + b*float64(d)/avgdl)
	}
	acc, dl := m.acc, l.DL
	for _, h := range m.hits {
		w := idf[h.term]
		if h.copy {
			for i, o := range h.ords {
				tf := float64(h.tfs[i])
				acc[o] += w * tf * (k1 + 1) / (tf + norm(dl[o]))
			}
			continue
		}
		for i, o := range h.p.Ords {
			tf := float64(h.p.TF(i))
			acc[o] += w * tf * (k1 + 1) / (tf + norm(dl[o]))
		}
	}
	m.hits = m.hits[:0]
}

// top offers the scored rows to top.
func (m *mergedSet) top(top *topScores, files []string, depth int) {
	l := m.lex
	for o, s := range m.acc {
		if s == 0 {
			continue
		}
		if len(*top) >= depth {
			if min := (*top)[0]; s < min.score || s == min.score && l.Keys[o] > min.key {
				continue
			}
		}
		top.offer(scored{key: l.Keys[o], file: files[m.file[l.Ent[o]]], score: s}, depth)
	}
}

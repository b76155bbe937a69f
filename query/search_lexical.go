package query

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/transform/embed/lexical"
)

// lexicalScores ranks the window's chunks (those in keep, when the search
// is narrowed) by BM25 (k1 and b of opt, or bm25K1 and bm25B) over the
// postings of the query's terms, with the document frequencies, the number
// of chunks and their mean length of the window; a chunk outside the
// window's times (in a partition of its first or last day) has no score.
// A query with phrases keeps only the chunks that have all the terms of
// each (Search then reads their text for the words' order).
//
// Each chunks file's sidecar gives both its rows (for N and the mean
// length) and its postings of the terms, in one small read
// (searchindex.ReadLexicalQuery), looked up with the terms of the version of the
// tokenizer the file was indexed with; an older build's file without them
// is counted by DuckDB and its Parquet postings read in Go
// (searchindex.ReadPostingsTerms, only the row groups of the terms). A term of
// each version counts as a term of its own: in a lake indexed by one
// version, as most are, BM25 is exact; in one indexed by two, a term's
// document frequency is that of its version's files.
//
// A query extended from one already scored (lexQuery.with: the second
// pass of an expanded search) reads the postings of its added terms only,
// and scores them with the first pass's postings and statistics.
func (d *DB) lexicalScores(ctx context.Context, opt SearchOptions, files []string, q *lexQuery, depth int, keep map[int64]bool) ([]scored, error) {
	type posting = lexPosting
	type result = lexFile
	since, until := msWindow(opt)
	windowed := !opt.Since.IsZero() || !opt.Until.IsZero()
	ix := d.searchIndex()
	base := q.base
	if base != nil && (!slices.Equal(base.files, files) || len(q.parsed.Phrases) > 0 || len(q.parsed.Prefixes) > 0 ||
		base.ix != ix || q.exactOnly() != base.merged) {
		base = nil
	}
	// The files a segment's merged term index holds are read from it, a
	// term once per segment; a query with prefixes or phrases reads each
	// file's postings.
	var sets []*mergedSet
	rest := make([]int, 0, len(files))
	if base != nil {
		sets, rest = base.sets, base.rest
	} else if ms, r := ix.Merged(files); q.exactOnly() && ix != nil {
		for _, m := range ms {
			sets = append(sets, newMergedSet(m, len(files)))
		}
		rest = r
	} else {
		for i := range files {
			rest = append(rest, i)
		}
	}
	per := make([]result, len(files))
	var restFiles []string
	for _, i := range rest {
		restFiles = append(restFiles, files[i])
	}
	err := eachFile(ctx, restFiles, func(j int, path string) error {
		r := &per[rest[j]]
		var lv *lexVersion
		from := 0 // the first of the version's terms read
		terms := func(version int) []searchindex.Term {
			lv = q.version(version)
			if base != nil {
				from = min(max(base.n-lv.offset, 0), len(lv.terms))
			}
			return lv.terms[from:]
		}
		add := func(t int, key int64, tf, dl int32) {
			if keep == nil || keep[key] {
				r.postings = append(r.postings, posting{key: key, tf: tf, dl: dl, term: int32(lv.offset + from + t)})
			}
		}
		v, err := ix.ReadLexicalQuery(path, terms, add)
		if err != nil {
			// No sidecar, or one without postings: the Parquet postings.
			r.uncount, r.postings = v == nil, r.postings[:0]
			if err := searchindex.ReadPostingsTerms(postingsFileOf(path), terms, add); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		if lv != nil && (lv.prefixes || len(lv.phrases) > 0) {
			// A prefix's terms add up to one term; a phrase wants all its
			// terms.
			slices.SortFunc(r.postings, func(a, b posting) int {
				return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.term, b.term))
			})
			out := r.postings[:0]
			for _, p := range r.postings {
				if n := len(out); n > 0 && out[n-1].key == p.key && out[n-1].term == p.term {
					out[n-1].tf += p.tf
					continue
				}
				out = append(out, p)
			}
			r.postings = out
			if len(lv.phrases) > 0 {
				r.postings = withPhrases(lv, r.postings, func(p posting) (int64, int) { return p.key, int(p.term) - lv.offset })
			}
		}
		if v == nil {
			return nil
		}
		var outside map[int64]bool
		for row := range v.Rows {
			if ts := v.TS[row]; ts < since || ts >= until {
				if outside == nil {
					outside = map[int64]bool{}
				}
				outside[v.Keys[row]] = true
				continue
			}
			if keep == nil || keep[v.Keys[row]] {
				r.st.n++
				r.st.terms += int64(v.DL[row])
			}
		}
		if outside != nil {
			r.postings = slices.DeleteFunc(r.postings, func(p posting) bool { return outside[p.key] })
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	df := make([]float64, q.n)
	for _, m := range sets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if base == nil {
			m.window(since, until, keep)
		}
		from := 0
		if base != nil {
			from = base.n
		}
		if err := m.read(q, from, since, until, keep, df); err != nil {
			return nil, err
		}
	}
	var st windowStats
	var uncounted []string
	for i, r := range per {
		st.n, st.terms = st.n+r.st.n, st.terms+r.st.terms
		if r.uncount {
			uncounted = append(uncounted, files[i])
		}
	}
	for _, m := range sets {
		st.n, st.terms = st.n+m.st.n, st.terms+m.st.terms
	}
	var in map[int64]bool // the uncounted files' chunks in the window
	if base != nil {
		st, in = base.st, base.in
		for i := range per {
			r := &per[i]
			if r.uncount && in != nil {
				r.postings = slices.DeleteFunc(r.postings, func(p posting) bool { return !in[p.key] })
			}
			r.postings = append(slices.Clip(base.per[i].postings), r.postings...)
		}
		copy(df, base.df)
	} else if len(uncounted) > 0 {
		more, err := d.countChunks(ctx, opt, uncounted)
		if err != nil {
			return nil, err
		}
		st.n, st.terms = st.n+more.n, st.terms+more.terms
		if windowed {
			// Those files' chunks in the window, from DuckDB.
			in, err = d.chunkKeys(ctx, opt, uncounted)
			if err != nil {
				return nil, err
			}
			for i := range per {
				if r := &per[i]; r.uncount {
					r.postings = slices.DeleteFunc(r.postings, func(p posting) bool { return !in[p.key] })
				}
			}
		}
	}
	for i, r := range per {
		if base != nil && i < len(base.per) {
			// The first pass's terms were counted then.
			for _, p := range r.postings[len(base.per[i].postings):] {
				df[p.term]++
			}
			continue
		}
		for _, p := range r.postings {
			df[p.term]++
		}
	}
	q.read = &lexRead{files: files, per: per, st: st, in: in, n: q.n, ix: ix, sets: sets, rest: rest, df: df, merged: q.exactOnly()}
	if st.n == 0 {
		return nil, nil
	}
	k1, b := bm25Params(opt)
	n, avgdl := float64(st.n), st.avgdl()
	idf := make([]float64, q.n)
	for t := range idf {
		idf[t] = math.Log(1 + (n-df[t]+0.5)/(df[t]+0.5))
	}
	capIDF(idf, q.caps)
	for t := range idf {
		idf[t] *= q.weight(t)
	}
	type acc struct {
		score float64
		file  int
	}
	scores := map[int64]*acc{}
	for i, r := range per {
		for _, p := range r.postings {
			tf := float64(p.tf)
			s := idf[p.term] * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(p.dl)/avgdl))
			if a := scores[p.key]; a != nil {
				a.score += s
			} else {
				scores[p.key] = &acc{score: s, file: i}
			}
		}
	}
	var top topScores
	for key, a := range scores {
		top.offer(scored{key: key, file: files[a.file], score: a.score}, depth)
	}
	for _, m := range sets {
		m.score(idf, k1, b, avgdl)
		m.top(&top, files, depth)
	}
	return top.sorted(), nil
}

// lexPosting is a chunk's posting of a query's term: its term frequency
// and the chunk's length.
type lexPosting struct {
	key    int64
	tf, dl int32
	term   int32
}

// lexFile is what a lexical pass read of a file: the postings of the
// query's terms in the window, and the window's statistics.
type lexFile struct {
	st       windowStats
	uncount  bool // no sidecar: DuckDB counts the file's chunks
	postings []lexPosting
}

// lexRead is what a lexical pass read for a query: each file's postings,
// the window's statistics and the uncounted files' chunks in the window
// (nil: all), for its first n terms.
type lexRead struct {
	files []string
	per   []lexFile
	st    windowStats
	in    map[int64]bool
	n     int
	df    []float64 // by term, over the window
	// The segments' merged term indexes it read (their scores add up the
	// pass's terms), and the files read one by one (indices in files).
	ix     *searchindex.Index
	sets   []*mergedSet
	rest   []int
	merged bool // the query's terms were exact
}

// bm25Params are the search's BM25 k1 and b: its options', or the
// defaults.
func bm25Params(opt SearchOptions) (k1, b float64) {
	k1, b = bm25K1, bm25B
	if opt.BM25K1 > 0 {
		k1 = opt.BM25K1
	}
	if opt.BM25B > 0 {
		b = min(opt.BM25B, 1)
	} else if opt.BM25B < 0 {
		b = 0
	}
	return k1, b
}

// lexQuery is a query's terms for each version of the tokenizer a lake's
// files may have been indexed with, numbered one after the other: the
// terms of version v are offset .. offset+len(terms)-1.
type lexQuery struct {
	parsed   lexical.Query // by the current tokenizer
	versions []*lexVersion // by version - 1
	n        int
	weights  []float64   // by term; nil: every term weighs 1 (see expand.go)
	caps     map[int]int // by term: the term whose IDF bounds its own (see expand_outward.go)
	read     *lexRead    // what lexicalScores read for the query
	base     *lexRead    // what it read for the query this one extends
}

// lexVersion is a query's terms for one version of the tokenizer.
type lexVersion struct {
	terms    []searchindex.Term
	offset   int
	prefixes bool
	phrases  [][]int // the terms (indices in terms) of each phrase
}

func newLexQuery(q string) *lexQuery {
	lq := &lexQuery{parsed: lexical.ParseQuery(q)}
	for _, v := range lexical.Versions {
		tok, _ := lexical.For(v)
		p := lq.parsed
		if v != lexical.Version {
			p = tok.ParseQuery(q)
		}
		lv := &lexVersion{offset: lq.n, terms: searchindex.Exact(p.Terms), prefixes: len(p.Prefixes) > 0}
		for _, pre := range p.Prefixes {
			lv.terms = append(lv.terms, searchindex.Term{Text: pre, Prefix: true})
		}
		for _, ph := range p.Phrases {
			var idx []int
			for _, t := range ph.Terms {
				idx = append(idx, slices.Index(p.Terms, t))
			}
			lv.phrases = append(lv.phrases, idx)
		}
		lq.versions = append(lq.versions, lv)
		lq.n += len(lv.terms)
	}
	return lq
}

// version returns the terms of a version; those of the current one for
// a version this build does not know (a newer build's file), which it
// cannot do better than.
func (q *lexQuery) version(v int) *lexVersion {
	if v >= 1 && v <= len(q.versions) {
		return q.versions[v-1]
	}
	return q.versions[len(q.versions)-1]
}

// exactOnly reports whether the query's terms are all exact (no prefix,
// no phrase), which the segments' merged term indexes look up.
func (q *lexQuery) exactOnly() bool {
	for _, v := range q.versions {
		if v.prefixes || len(v.phrases) > 0 {
			return false
		}
	}
	return true
}

// empty reports whether the query has no term to look up.
func (q *lexQuery) empty() bool { return q.parsed.Empty() }

// withPhrases keeps the postings (sorted by key) of the chunks that have
// every term of each phrase.
func withPhrases[P any](lv *lexVersion, ps []P, of func(P) (key int64, term int)) []P {
	out := ps[:0]
	for i := 0; i < len(ps); {
		key, _ := of(ps[i])
		j := i
		has := map[int]bool{}
		for ; j < len(ps); j++ {
			k, t := of(ps[j])
			if k != key {
				break
			}
			has[t] = true
		}
		ok := true
		for _, ph := range lv.phrases {
			for _, t := range ph {
				ok = ok && has[t]
			}
		}
		if ok {
			out = append(out, ps[i:j]...)
		}
		i = j
	}
	return out
}

// windowStats are the number of chunks of the window (and filters) and
// their total length in index terms: BM25's N and mean length.
type windowStats struct {
	n, terms int64
}

func (s windowStats) avgdl() float64 {
	if s.n == 0 || s.terms == 0 {
		return 1
	}
	return float64(s.terms) / float64(s.n)
}

// countChunks counts the chunks of files that pass the search's filters,
// and their length in index terms, with DuckDB.
func (d *DB) countChunks(ctx context.Context, opt SearchOptions, files []string) (windowStats, error) {
	var st windowStats
	src, list, err := catalog.FilesSource(d.lake, layout.TableChunks, files)
	if err != nil {
		return st, err
	}
	w := chunkFilter(opt)
	err = d.db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(token_count), 0)::BIGINT FROM `+src+w.sql(),
		append([]any{list}, w.args...)...).Scan(&st.n, &st.terms)
	return st, sqlErr(err)
}

// postingsFileOf is the postings file of a chunks file: named as it is.
func postingsFileOf(chunksFile string) string {
	sep := string(filepath.Separator)
	return strings.Replace(chunksFile, sep+layout.TableChunks+sep, sep+layout.TablePostings+sep, 1)
}

// eachFile calls fn with each file and its index, on as many goroutines as
// there are processors; the first error stops the rest.
func eachFile(ctx context.Context, files []string, fn func(i int, path string) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, f := range files {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(i, f) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// collectFiles calls read with each file as eachFile does and returns the
// values read emitted: the files in order, each file's in the order read
// emitted them.
func collectFiles[T any](ctx context.Context, files []string, read func(i int, path string, emit func(T)) error) ([]T, error) {
	per := make([][]T, len(files))
	err := eachFile(ctx, files, func(i int, path string) error {
		return read(i, path, func(v T) { per[i] = append(per[i], v) })
	})
	if err != nil {
		return nil, err
	}
	return slices.Concat(per...), nil
}

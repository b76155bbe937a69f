package query

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/pos-lake/pos/load"
)

// lexicalScores ranks the window's chunks (those in keep, when the search
// is narrowed) by BM25 (k1 1.2, b 0.75) over the postings of the query's
// terms, with the document frequencies, the number of chunks and their
// mean length of the window; a chunk outside the window's times (in a
// partition of its first or last day) has no score. Each chunks file's
// sidecar gives both its
// rows (for N and the mean length) and its postings of the terms, in one
// small read (load.ReadLexical); an older build's file without them is
// counted by DuckDB and its Parquet postings read in Go
// (load.ReadPostings, only the row groups of the terms).
func (d *DB) lexicalScores(ctx context.Context, opt SearchOptions, files, terms []string, depth int, keep map[int64]bool) ([]scored, error) {
	terms = slices.Compact(slices.Sorted(slices.Values(terms)))
	type posting struct {
		key    int64
		tf, dl int32
		term   int32
	}
	type result struct {
		st       windowStats
		uncount  bool // no sidecar: DuckDB counts the file's chunks
		postings []posting
	}
	since, until := msWindow(opt)
	windowed := !opt.Since.IsZero() || !opt.Until.IsZero()
	per := make([]result, len(files))
	err := eachFile(ctx, files, func(i int, path string) error {
		r := &per[i]
		add := func(t int, key int64, tf, dl int32) {
			if keep == nil || keep[key] {
				r.postings = append(r.postings, posting{key: key, tf: tf, dl: dl, term: int32(t)})
			}
		}
		v, err := load.ReadLexical(path, terms, add)
		if err != nil {
			// No sidecar, or one without postings: the Parquet postings.
			r.uncount, r.postings = v == nil, r.postings[:0]
			if err := load.ReadPostings(postingsFileOf(path), terms, add); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
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
	var st windowStats
	var uncounted []string
	for i, r := range per {
		st.n, st.terms = st.n+r.st.n, st.terms+r.st.terms
		if r.uncount {
			uncounted = append(uncounted, files[i])
		}
	}
	if len(uncounted) > 0 {
		more, err := d.countChunks(ctx, opt, uncounted)
		if err != nil {
			return nil, err
		}
		st.n, st.terms = st.n+more.n, st.terms+more.terms
		if windowed {
			// Those files' chunks in the window, from DuckDB.
			in, err := d.chunkKeys(ctx, opt, uncounted)
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
	if st.n == 0 {
		return nil, nil
	}
	df := make([]float64, len(terms))
	for _, r := range per {
		for _, p := range r.postings {
			df[p.term]++
		}
	}
	n, avgdl := float64(st.n), st.avgdl()
	idf := make([]float64, len(terms))
	for t := range terms {
		idf[t] = math.Log(1 + (n-df[t]+0.5)/(df[t]+0.5))
	}
	type acc struct {
		score float64
		file  int
	}
	scores := map[int64]*acc{}
	for i, r := range per {
		for _, p := range r.postings {
			tf := float64(p.tf)
			s := idf[p.term] * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(p.dl)/avgdl))
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
	return top.sorted(), nil
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
	src, list, err := load.FilesSource(d.lake, load.TableChunks, files)
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
	return strings.Replace(chunksFile, sep+load.TableChunks+sep, sep+load.TablePostings+sep, 1)
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

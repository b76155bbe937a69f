package query

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/pos-lake/pos/internal/fsglob"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/searchindex"
	"github.com/pos-lake/pos/load/searchrows"
	"github.com/pos-lake/pos/schema"
)

// The retrievers read as little as they can from every chunk of the window:
// the vector side its vector, the lexical side the postings of the query's
// terms. They hand on chunk keys and scores; the metadata of the candidates
// alone is read after (one query for both sides).

// chunkFilter is the WHERE clause of the search's filters over chunks.
func chunkFilter(opt SearchOptions) *where {
	w := &where{}
	w.eq("platform", opt.Platform)
	w.window("ts", opt.Since, opt.Until, true)
	w.contains("project", opt.Project)
	w.eq("session_id", opt.Session)
	w.eq("user", opt.User)
	w.eq("machine", opt.Machine)
	if len(opt.Types) > 0 {
		w.add("content_type IN ("+placeholders(len(opt.Types))+")", anys(opt.Types)...)
	}
	return w
}

// narrowed reports whether the search filters on more than platform and
// time, the filters the partitions answer.
func narrowed(opt SearchOptions) bool {
	return opt.Project != "" || opt.Session != "" || opt.User != "" || opt.Machine != "" || len(opt.Types) > 0
}

// latestVersion keeps the latest version of each chunk (see load's views).
const latestVersion = ` QUALIFY row_number() OVER (PARTITION BY id ORDER BY ingested_at DESC, content_hash) = 1`

// windowFiles lists the files of a table in the partitions the search's
// platform and window can match.
func (d *DB) windowFiles(table string, opt SearchOptions) ([]string, error) {
	return d.listing.PartitionFiles(d.lake, table, opt.Platform, opt.Since, opt.Until)
}

// vectorScores ranks the window's chunks by the inner product of their
// vectors and the query's: pos-embed stores unit vectors, so this is their
// cosine similarity. The vector sidecars are scanned in Go (see
// scanVectors); a chunks file without one is scored by DuckDB.
func (d *DB) vectorScores(ctx context.Context, opt SearchOptions, files []string, m layout.EmbeddingModel, q []float32, depth int,
	keep map[int64]bool, minSim float64) ([]scored, scanCounts, error) {
	out, missing, n, err := d.scanVectors(ctx, files, m.Model, q, opt, keep, depth, minSim)
	if err != nil || len(missing) == 0 {
		return out, n, err
	}
	more, err := d.duckVectorScores(ctx, opt, missing, m, q, depth, minSim)
	if err != nil {
		return nil, n, err
	}
	out = append(out, more...)
	slices.SortFunc(out, func(a, b scored) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.key, b.key)) })
	return out[:min(len(out), depth)], n, nil
}

// chunkKeys returns the keys of the window's chunks that pass the search's
// filters.
func (d *DB) chunkKeys(ctx context.Context, opt SearchOptions, files []string) (map[int64]bool, error) {
	src, list, err := catalog.FilesSource(d.lake, layout.TableChunks, files)
	if err != nil {
		return nil, err
	}
	w := chunkFilter(opt)
	rows, err := d.db.QueryContext(ctx, `SELECT chunk_key FROM `+src+w.sql(), append([]any{list}, w.args...)...)
	if err != nil {
		return nil, sqlErr(err)
	}
	keep := map[int64]bool{}
	if err := scanSet(rows, keep); err != nil {
		return nil, err
	}
	return keep, nil
}

// duckVectorScores scores chunks files from their Parquet vectors.
func (d *DB) duckVectorScores(ctx context.Context, opt SearchOptions, files []string, m layout.EmbeddingModel, q []float32, depth int, minSim float64) ([]scored, error) {
	src, list, err := catalog.FilesSource(d.lake, layout.TableChunks, files)
	if err != nil {
		return nil, err
	}
	w := chunkFilter(opt)
	w.add("model = ?", m.Model)
	w.add("dim = ?", m.Dim)
	arr := fmt.Sprintf("FLOAT[%d]", m.Dim)
	query := fmt.Sprintf(`SELECT * FROM (
  SELECT chunk_key, file_index, array_inner_product(CAST(embedding AS %s), CAST(? AS %s)) AS score
  FROM %s%s
) WHERE score >= ?
ORDER BY score DESC, chunk_key LIMIT ?`, arr, arr, src, w.sql())
	return d.scores(ctx, query, list, append(append([]any{q, list}, w.args...), minSim, depth)...)
}

// msWindow is the search's window in Unix milliseconds, [since, until).
func msWindow(opt SearchOptions) (since, until int64) {
	since, until = -1<<62, 1<<62
	if !opt.Since.IsZero() {
		since = opt.Since.UnixMilli()
	}
	if !opt.Until.IsZero() {
		until = opt.Until.UnixMilli()
	}
	return since, until
}

// partitionsOf lists every Parquet file in the directories of files.
func partitionsOf(files []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		dir := filepath.Dir(f)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		all, err := filepath.Glob(filepath.Join(fsglob.Quote(dir), "*.parquet"))
		if err != nil {
			return nil, err
		}
		out = append(out, all...)
	}
	return out, nil
}

// scores runs a query of chunk_key, file_index (into files) and score.
func (d *DB) scores(ctx context.Context, q string, files []string, args ...any) ([]scored, error) {
	rows, err := d.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, sqlErr(err)
	}
	var out []scored
	if err := eachRow(rows, func() error {
		var s scored
		var file int64
		var score sql.NullFloat64
		if err := rows.Scan(&s.key, &file, &score); err != nil {
			return err
		}
		if file >= 0 && file < int64(len(files)) {
			s.file = files[file]
		}
		s.score = score.Float64
		out = append(out, s)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// candidates reads the metadata of the scored chunks, from their files
// only; in a lake whose chunks have versions, it keeps those that are their
// chunk's latest version.
func (d *DB) candidates(ctx context.Context, versioned bool, lists ...[]scored) ([][]candidate, error) {
	out := make([][]candidate, len(lists))
	if !slices.ContainsFunc(lists, func(l []scored) bool { return len(l) > 0 }) {
		return out, nil
	}
	var meta map[int64]candidate
	var err error
	if versioned || !candidatesInGo {
		meta, err = d.latestCandidates(ctx, lists)
	} else {
		meta, err = candidateMeta(ctx, d.searchIndex(), lists)
	}
	if err != nil {
		return nil, err
	}
	for i, l := range lists {
		for _, s := range l {
			if c, ok := meta[s.key]; ok {
				c.score = s.score
				out[i] = append(out[i], c)
			}
		}
	}
	return out, nil
}

// candidatesInGo is false only in a test that holds candidateMeta to
// latestCandidates.
var candidatesInGo = true

// candidateMeta reads the candidates' metadata from their chunks files'
// sidecars, or in Go from the files (searchrows.ReadChunkMeta), each key in the
// file its retriever found it in.
func candidateMeta(ctx context.Context, ix *searchindex.Index, lists [][]scored) (map[int64]candidate, error) {
	var files []string
	var wanted []map[int64]bool
	index := map[string]int{}
	for _, l := range lists {
		for _, s := range l {
			i, ok := index[s.file]
			if !ok {
				i = len(files)
				index[s.file] = i
				files = append(files, s.file)
				wanted = append(wanted, map[int64]bool{})
			}
			wanted[i][s.key] = true
		}
	}
	cs, err := collectFiles(ctx, files, func(i int, path string, emit func(candidate)) error {
		return readChunkMeta(ix, path, wanted[i], func(m searchrows.ChunkMeta) {
			emit(candidate{chunkKey: m.Key, id: m.ID, parent: m.ParentID, ctype: m.ContentType,
				platform: m.Platform, session: m.SessionID, agentID: m.AgentID, ts: m.TS, file: path})
		})
	})
	if err != nil {
		return nil, err
	}
	meta := map[int64]candidate{}
	for _, c := range cs {
		meta[c.chunkKey] = c
	}
	return meta, nil
}

// latestCandidates reads the candidates' metadata with DuckDB, keeping a
// candidate only if it is its chunk's latest version (a lake whose chunks
// have versions).
func (d *DB) latestCandidates(ctx context.Context, lists [][]scored) (map[int64]candidate, error) {
	args, files := keysAndFiles(lists)
	src, list, err := catalog.FilesSource(d.lake, layout.TableChunks, files)
	if err != nil {
		return nil, err
	}
	const cols = `chunk_key, id, parent_id, content_type, platform, session_id, agent_id, ts, file_index`
	// The versions of a chunk are in its partition, not always in its file.
	all, err := partitionsOf(files)
	if err != nil {
		return nil, err
	}
	vsrc, vlist, err := catalog.FilesSource(d.lake, layout.TableChunks, all)
	if err != nil {
		return nil, err
	}
	query := `WITH c AS (SELECT ` + cols + ` FROM ` + src + ` WHERE chunk_key IN (` + placeholders(len(args)) + `))
SELECT c.* FROM c JOIN (
  SELECT chunk_key FROM ` + vsrc + ` WHERE id IN (SELECT id FROM c)` + latestVersion + `
) USING (chunk_key)`
	args = append(args, vlist)
	rows, err := d.db.QueryContext(ctx, query, append([]any{list}, args...)...)
	if err != nil {
		return nil, sqlErr(err)
	}
	meta := map[int64]candidate{}
	if err := eachRow(rows, func() error {
		var c candidate
		var ts sql.NullTime
		var parent, session, agentID sql.NullString
		var file int64
		if err := rows.Scan(&c.chunkKey, &c.id, &parent, &c.ctype, &c.platform, &session, &agentID, &ts, &file); err != nil {
			return err
		}
		if file >= 0 && file < int64(len(list)) {
			c.file = list[file]
		}
		c.parent, c.session, c.agentID, c.ts = parent.String, session.String, agentID.String, utc(ts)
		meta[c.chunkKey] = c
		return nil
	}); err != nil {
		return nil, err
	}
	return meta, nil
}

// unitKey is the unit a chunk belongs to: a prompt's chunks belong to the
// exchange the prompt opens, every other chunk to the record it is from.
func unitKey(c candidate) string {
	if c.ctype == schema.ContentUserPrompt {
		return schema.ExchangeID(c.platform, c.parent)
	}
	if c.parent == "" {
		return c.id
	}
	return c.parent
}

// fuse collapses each retriever's chunks to units (a unit ranks as its best
// chunk) and, in hybrid mode, fuses the two by a convex combination of
// their scores, each brought to [0, 1]:
//
//	score = w · bm25 / best bm25 of the query + (1 − w) · (cos − min) / (1 − min)
//
// where w is f.LexicalWeight and min the model's minimum similarity. The
// lexical side is scaled by its best score, as BM25 has no upper bound;
// the vector side on its own fixed scale, from the chance level up, so a
// vector list that is all weak matches adds little and a close match much.
// Reciprocal rank fusion weighs the two lists alike whatever their scores,
// which lets a unit found fairly high in both lists pass the one BM25 put
// well ahead. A model without a minimum similarity (pos-hash-v1,
// OpenAI-compatible ones), or a search without one, gives no chance level
// to scale from: its units are fused by weighted reciprocal rank,
// w'/(k + lexical rank) + (1 − w')/(k + vector rank), scaled so that first
// in both is 1 (w' is f.RankLexicalWeight, k f.RankK). The weights are
// chosen on the evaluation set (query/eval -tune).
func fuse(mode string, vec, lex []candidate, minSim float64, f Fusion) []SearchHit {
	f = f.orDefault()
	byUnit := map[string]*SearchHit{}
	var order []*SearchHit
	best := map[string]float64{} // the rank-fused score of the chunk shown
	collapse := func(cs []candidate, vectorSide bool) {
		rank := 0
		seen := map[string]bool{}
		for _, c := range cs {
			u := unitKey(c)
			if seen[u] {
				continue
			}
			seen[u] = true
			rank++
			h := byUnit[u]
			if h == nil {
				h = &SearchHit{unit: u}
				byUnit[u] = h
				order = append(order, h)
			}
			if vectorSide {
				h.VectorRank, h.VectorScore = rank, c.score
			} else {
				h.LexicalRank, h.LexicalScore = rank, c.score
			}
			// The chunk shown is the unit's best-ranked in either list.
			if s := 1 / float64(rrfK+rank); s > best[u] {
				best[u] = s
				h.setChunk(c)
			}
		}
	}
	collapse(vec, true)
	collapse(lex, false)
	var lexTop float64 // the best BM25 score, the lexical side's scale
	if len(lex) > 0 {
		lexTop = lex[0].score
	}
	for _, h := range order {
		switch mode {
		case SearchVector:
			h.Score = h.VectorScore
		case SearchLexical:
			h.Score = h.LexicalScore
		case SearchHybrid:
			var s float64
			if minSim <= 0 || minSim >= 1 {
				// No known chance level to scale the similarity from:
				// reciprocal ranks, scaled so that first in both is 1.
				if h.VectorRank > 0 {
					s += (1 - f.RankLexicalWeight) / (f.RankK + float64(h.VectorRank))
				}
				if h.LexicalRank > 0 {
					s += f.RankLexicalWeight / (f.RankK + float64(h.LexicalRank))
				}
				h.Score = s * (f.RankK + 1)
				break
			}
			if h.LexicalRank > 0 && lexTop > 0 {
				s += f.LexicalWeight * h.LexicalScore / lexTop
			}
			if h.VectorRank > 0 {
				s += (1 - f.LexicalWeight) * max(0, min(1, (h.VectorScore-minSim)/(1-minSim)))
			}
			h.Score = s
		}
	}
	out := make([]SearchHit, len(order))
	for i, h := range order {
		out[i] = *h
	}
	slices.SortStableFunc(out, func(a, b SearchHit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.bestRank(), b.bestRank()), cmp.Compare(a.unit, b.unit))
	})
	for i := range out {
		out[i].Rank = i + 1
	}
	return out
}

func (h *SearchHit) bestRank() int {
	r := 1 << 30
	if h.VectorRank > 0 {
		r = h.VectorRank
	}
	if h.LexicalRank > 0 && h.LexicalRank < r {
		r = h.LexicalRank
	}
	return r
}

func (h *SearchHit) setChunk(c candidate) {
	h.chunkKey, h.file = c.chunkKey, c.file
	h.ChunkID, h.ParentID, h.ContentType = c.id, c.parent, c.ctype
	h.Platform, h.SessionID, h.AgentID, h.TS = c.platform, c.session, c.agentID, c.ts
	// A tool chunk's parent is its exchange, or its message when it ran
	// outside one: resolveExchanges tells which.
	if c.ctype == schema.ContentExchange || c.ctype == schema.ContentUserPrompt {
		h.ExchangeID = h.unit
	}
}

// keysAndFiles returns the distinct chunk keys of the candidates of lists,
// in the order first met, as query arguments, and the distinct files they
// are in, in the same order.
func keysAndFiles(lists [][]scored) (keys []any, files []string) {
	seen := map[int64]bool{}
	for _, l := range lists {
		for _, s := range l {
			if !seen[s.key] {
				seen[s.key] = true
				keys = append(keys, s.key)
			}
			if !slices.Contains(files, s.file) {
				files = append(files, s.file)
			}
		}
	}
	return keys, files
}

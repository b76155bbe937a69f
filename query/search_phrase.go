package query

import (
	"context"
	"slices"

	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/transform/embed/lexical"
)

// withPhrases keeps, of each list of candidates, the chunks whose text has
// every phrase of the query, its words in order (lexical.Query.Match).
// The postings say which chunks have a phrase's words, not where: the
// order is checked on the candidates' text, read from their chunks files,
// so that the postings need no positions.
func (d *DB) withPhrases(ctx context.Context, q lexical.Query, lists ...[]scored) ([]scored, []scored, error) {
	keys, files := keysAndFiles(lists)
	has := map[int64]bool{}
	if len(keys) > 0 {
		query := `SELECT chunk_key, text FROM read_parquet(` + layout.LiteralPaths + `, hive_partitioning = true, union_by_name = true)
WHERE chunk_key IN (` + placeholders(len(keys)) + `)`
		rows, err := d.db.QueryContext(ctx, query, append([]any{files}, keys...)...)
		if err != nil {
			return nil, nil, sqlErr(err)
		}
		for rows.Next() {
			var key int64
			var text string
			if err := rows.Scan(&key, &text); err != nil {
				rows.Close()
				return nil, nil, sqlErr(err)
			}
			if q.Match(text) {
				has[key] = true
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, sqlErr(err)
		}
	}
	out := make([][]scored, 2)
	for i, l := range lists[:min(2, len(lists))] {
		out[i] = slices.DeleteFunc(slices.Clone(l), func(s scored) bool { return !has[s.key] })
	}
	return out[0], out[1], nil
}

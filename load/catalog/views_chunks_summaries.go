package catalog

import (
	"fmt"
	"path/filepath"

	"github.com/pos-lake/pos/load/layout"
)

// chunkViews defines the views over chunks and their postings:
//
//	chunks      the latest version of each chunk, with vector: its
//	            embedding as FLOAT[dim] for array_cosine_similarity (the
//	            lake's latest model's dimension; NULL for other chunks)
//	chunk_rows  every version, with the file it is in (filename); search
//	            scores these and keeps the latest version after
//	postings    the lexical index: term, chunk_key, tf, dl
//	session_rows every version of every session rollup, as loaded: search
//	            reads the titles of a few sessions from it without the
//	            sessions view's recount of all messages
func chunkViews(lake string, src map[string]string, versioned map[string]bool) []string {
	ms, _ := layout.Embeddings(lake)
	vector := ""
	if len(ms) > 0 {
		d := ms[len(ms)-1].Dim
		vector = fmt.Sprintf(", CASE WHEN len(embedding) = %d THEN CAST(embedding AS FLOAT[%d]) END AS vector", d, d)
	}
	q := "SELECT *" + vector + " FROM " + src[layout.TableChunks]
	if versioned[layout.TableChunks] {
		q += latest
	}
	return []string{
		"CREATE OR REPLACE VIEW chunks AS " + q,
		"CREATE OR REPLACE VIEW chunk_rows AS SELECT *, filename FROM " + src[layout.TableChunks],
		"CREATE OR REPLACE VIEW postings AS SELECT * FROM " + src[layout.TablePostings],
		"CREATE OR REPLACE VIEW session_rows AS SELECT * FROM " + src[layout.TableSessions],
	}
}

// FilesSource returns a read_parquet call over a list of a table's files,
// bound as its one parameter, with the views' options: hive partitioning,
// and, when the table's files were written with other schemas (an older
// build's), union by name with a zero-row file of this build's schema,
// which FilesSource prepends to the list it returns.
func FilesSource(lake, table string, files []string) (string, []string, error) {
	if fps := layout.ReadSchemas(lake)[table]; len(fps) == 1 && fps[0] == layout.SchemaFingerprint(table) {
		return "read_parquet(" + layout.LiteralPaths + ", " + hiveOpts + ")", files, nil
	}
	f, err := schemaFile(lake, table, true)
	if err != nil {
		return "", nil, err
	}
	return "read_parquet(" + layout.LiteralPaths + ", union_by_name = true, " + hiveOpts + ")", append([]string{f}, files...), nil
}

// summaryViews defines the summaries view: the newest row of each id, with
// the partition columns platform and date.
func summaryViews(src map[string]string) []string {
	return []string{"CREATE OR REPLACE VIEW summaries AS SELECT * FROM " + src[layout.TableSummaries] + latest}
}

// SummariesViewSQL returns the statement that (re)defines the summaries
// view of a lake. A reader that wrote the table's first file runs it again:
// a view defined over an empty table reads only its zero-row schema file.
func SummariesViewSQL(lake string) (string, error) {
	lake, err := filepath.Abs(lake)
	if err != nil {
		return "", err
	}
	src, err := source(lakeSQL{abs: lake}, layout.TableSummaries, layout.ReadSchemas(lake))
	if err != nil {
		return "", err
	}
	return summaryViews(map[string]string{layout.TableSummaries: src})[0], nil
}

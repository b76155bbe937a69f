package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// lakeDigest names every file of the lake with its content's hash.
func lakeDigest(t *testing.T, lake string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(lake, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(lake, p)
		if strings.HasPrefix(rel, "rollup"+string(filepath.Separator)) {
			return nil // pos-query's own session cache
		}
		b, _ := os.ReadFile(p)
		h := sha256.Sum256(b)
		lines = append(lines, rel+" "+hex.EncodeToString(h[:8]))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// pos-query sql never changes the lake, nor writes a file anywhere: a
// statement that is not a query is refused before any statement runs, in a
// script too.
func TestSQLNeverWrites(t *testing.T) {
	before := lakeDigest(t, lake)
	part, err := filepath.Glob(filepath.Join(lake, "indexed", "messages", "platform=*", "date=*"))
	if err != nil || len(part) == 0 {
		t.Fatalf("no messages partition: %v", err)
	}
	out := t.TempDir()
	refused := regexp.MustCompile(`^pos-query: the lake is read-only here: only queries run here \(SELECT, DESCRIBE`)
	for _, q := range []string{
		"COPY (SELECT * FROM messages) TO '" + filepath.Join(part[0], "part-zz.parquet") + "' (FORMAT parquet)",
		"COPY messages TO '" + filepath.Join(out, "x.csv") + "'",
		"EXPORT DATABASE '" + filepath.Join(lake, "export") + "'",
		"ATTACH '" + filepath.Join(lake, "pos.duckdb") + "' AS cat",
		"ATTACH '" + filepath.Join(out, "new.duckdb") + "' AS n",
		"CREATE TABLE t AS SELECT 1",
		"SET threads = 1",
		"INSTALL fts",
		"LOAD fts",
		"PRAGMA enable_profiling",
		"EXPLAIN ANALYZE COPY (SELECT 1) TO '" + filepath.Join(out, "e.csv") + "'",
		"SELECT 1; COPY (SELECT 1) TO '" + filepath.Join(out, "y.csv") + "'",
		"CALL pragma_version()",
		"DROP VIEW messages",
	} {
		code, stdout, stderr := run("", "sql", "--lake", lake, q)
		if code != 1 || stdout != "" || !refused.MatchString(stderr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", q, code, stdout, stderr)
		}
	}
	if got := lakeDigest(t, lake); got != before {
		t.Errorf("the lake changed:\nbefore:\n%s\nafter:\n%s", before, got)
	}
	if ents, _ := os.ReadDir(out); len(ents) > 0 {
		t.Errorf("files written: %v", ents)
	}
	// Queries of every kind still run.
	for _, q := range []string{"SELECT count(*) AS n FROM messages", "DESCRIBE messages", "SHOW TABLES", "SUMMARIZE SELECT 1 AS x",
		"FROM sessions SELECT session_id LIMIT 1", "WITH x AS (SELECT 1 AS a) SELECT * FROM x", "VALUES (1)", "SELECT 1; SELECT 2 AS two"} {
		if code, stdout, stderr := run("", "sql", "--lake", lake, "--format", "csv", q); code != 0 || stdout == "" {
			t.Errorf("%s: exit %d, stderr %q", q, code, stderr)
		}
	}
}

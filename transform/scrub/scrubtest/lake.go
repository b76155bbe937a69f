package scrubtest

import (
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// LakeScan is what ScanLake read.
type LakeScan struct {
	Files    []string // every file below the lake
	Parquets []string // those of them that are Parquet
	Rows     int      // rows of the Parquet files
}

// ScanLake is how the tests that plant secrets look for them in a lake:
// it calls file with the bytes of every file below lake, then row with
// every row of every Parquet file, all its columns as one text, as DuckDB
// (db) reads it: Parquet pages are compressed, so the bytes alone prove
// little. A lake without Parquet fails the test.
func ScanLake(t testing.TB, db *sql.DB, lake string, file func(path string, b []byte), row func(path, text string)) LakeScan {
	t.Helper()
	var s LakeScan
	err := filepath.WalkDir(lake, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		s.Files = append(s.Files, p)
		if strings.HasSuffix(p, ".parquet") {
			s.Parquets = append(s.Parquets, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		file(p, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Parquets) == 0 {
		t.Fatalf("no Parquet in the lake: %v", s.Files)
	}
	for _, p := range s.Parquets {
		// read_parquet takes no parameters in a FROM clause: the path is
		// a literal.
		q := `SELECT CAST(t AS VARCHAR) FROM read_parquet('` + strings.ReplaceAll(p, "'", "''") + `') AS t`
		s.Rows += EachText(t, db, q, func(text string) { row(p, text) })
	}
	return s
}

// EachText calls fn with the first column of every row q returns, as text
// (NULL as ""), and returns how many rows there were.
func EachText(t testing.TB, db *sql.DB, q string, fn func(string)) int {
	t.Helper()
	rs, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	n := 0
	for rs.Next() {
		var s sql.NullString
		if err := rs.Scan(&s); err != nil {
			t.Fatal(err)
		}
		fn(s.String)
		n++
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

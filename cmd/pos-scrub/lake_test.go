package main

import (
	"bytes"
	"context"
	"database/sql"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/transform/scrub/scrubtest"
)

// TestLakeHoldsNoPlantedSecret runs the labelled secret set through the real
// binaries, pos-scrub | pos-load, and looks for every planted secret — as
// is, JSON-escaped once and twice, in base64 — in every byte of every file of
// the lake, and in every column of every table as DuckDB reads it (Parquet
// pages are compressed, so the raw bytes alone prove little).
func TestLakeHoldsNoPlantedSecret(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pos-load (DuckDB)")
	}
	set, err := scrubtest.Plant(filepath.Join("..", "..", "transform", "scrub", "testdata", "secrets", "templates.ndjson"), 20260211)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "../pos-scrub", "../pos-load")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var in bytes.Buffer
	for _, inst := range set {
		in.Write(inst.Line)
		in.WriteByte('\n')
	}
	planted := filepath.Join(dir, "planted.ndjson")
	if err := os.WriteFile(planted, in.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	lake := filepath.Join(dir, "lake")
	cmd := exec.Command("bash", "-o", "pipefail", "-c", `pos-scrub --key lake-test-key-of-32-bytes-or-more < "$1" | pos-load -q --lake "$2"`, "sh", planted, lake)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "POS_LAKE=", "XDG_DATA_HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pipeline: %v\n%s", err, stderr.String())
	}
	t.Logf("%d planted instances of %d types\n%s", len(set), len(scrubtest.Types()), stderr.String())

	// Every form of every planted secret.
	forms := map[string]string{} // form -> type
	for _, inst := range set {
		for _, s := range inst.Secrets {
			for _, f := range scrubtest.Forms(s) {
				forms[f] = inst.Type
			}
		}
	}
	// Index the forms by their first eight bytes: one map lookup per byte
	// of text instead of one search per form.
	const k = 8
	byPrefix := map[string][]string{}
	for f := range forms {
		if len(f) < k {
			t.Fatalf("planted secret form %q is too short for the index", f)
		}
		byPrefix[f[:k]] = append(byPrefix[f[:k]], f)
	}
	reported := map[string]bool{}
	found := func(where string, b []byte) {
		for i := 0; i+k <= len(b); i++ {
			for _, f := range byPrefix[string(b[i:i+k])] {
				if bytes.HasPrefix(b[i:], []byte(f)) && !reported[f] {
					reported[f] = true
					t.Errorf("%s holds a planted %s secret", where, forms[f])
				}
			}
		}
	}

	// 1. The bytes of every file.
	var files, parquets []string
	filepath.WalkDir(lake, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files = append(files, p)
		if strings.HasSuffix(p, ".parquet") {
			parquets = append(parquets, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		found(p, b)
		return nil
	})
	if len(parquets) == 0 {
		t.Fatalf("no Parquet in the lake: %v", files)
	}

	// 2. Every row of every Parquet file, every column as text.
	db, err := load.OpenDB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows := 0
	for _, p := range parquets {
		rows += scanText(t, db, `SELECT CAST(t AS VARCHAR) FROM read_parquet(`+quote(p)+`) AS t`, func(s string) { found(p, []byte(s)) })
	}
	// 3. The views users query, as DuckDB defines them.
	if err := load.DefineViews(context.Background(), db, lake); err != nil {
		t.Fatal(err)
	}
	redacted := 0
	for _, v := range []string{"raw", "messages", "exchanges", "sessions", "documents"} {
		scanText(t, db, `SELECT CAST(v AS VARCHAR) FROM `+v+` AS v`, func(s string) {
			found("view "+v, []byte(s))
			redacted += strings.Count(s, "[REDACTED:")
		})
	}
	if rows < len(set)/2 || redacted < len(set) {
		t.Errorf("the lake holds %d rows and %d markers for %d planted records: the check proves little", rows, redacted, len(set))
	}
	t.Logf("%d files, %d Parquet files, %d rows, %d markers in the views", len(files), len(parquets), rows, redacted)
}

func scanText(t *testing.T, db *sql.DB, q string, fn func(string)) int {
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

// quote makes a SQL string literal of a path this test made (read_parquet
// takes no parameters in a FROM clause).
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/load/catalog"
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

	// 1. The bytes of every file, and 2. every row of every Parquet file,
	// every column as text.
	db, err := catalog.OpenDB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	scan := scrubtest.ScanLake(t, db, lake, found, func(p, text string) { found(p, []byte(text)) })
	// 3. The views users query, as DuckDB defines them.
	if err := catalog.DefineViews(context.Background(), db, lake); err != nil {
		t.Fatal(err)
	}
	redacted := 0
	for _, v := range []string{"raw", "messages", "exchanges", "sessions", "documents"} {
		scrubtest.EachText(t, db, `SELECT CAST(v AS VARCHAR) FROM `+v+` AS v`, func(s string) {
			found("view "+v, []byte(s))
			redacted += strings.Count(s, "[REDACTED:")
		})
	}
	if scan.Rows < len(set)/2 || redacted < len(set) {
		t.Errorf("the lake holds %d rows and %d markers for %d planted records: the check proves little", scan.Rows, redacted, len(set))
	}
	t.Logf("%d files, %d Parquet files, %d rows, %d markers in the views", len(scan.Files), len(scan.Parquets), scan.Rows, redacted)
}

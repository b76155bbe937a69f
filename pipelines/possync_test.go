package pipelines_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/internal/loadtest"
)

// The tables compared between two lakes, and the column that says when a
// run wrote a row (the one difference two runs may have).
var syncTables = []string{"raw", "messages", "exchanges", "sessions", "documents", "decisions", "file_refs", "chunks"}

// A lake that pos-sync built in several incremental steps, while the
// files grew (each step cutting them at a byte, mid-line too), holds what
// the five-stage pipeline writes in the same steps, every row of every
// table alike but the time it was loaded; and what it writes reading the
// final files once.
func TestPosSyncStepsEqualOneRun(t *testing.T) {
	t.Run("corpus", func(t *testing.T) {
		dir := corpus.Platform(t, claudecode.Name)
		syncStepsEqualOneRun(t, dir, 4)
	})
	t.Run("generated", func(t *testing.T) {
		dir := corpus.Platform(t, claudecode.Name)
		tmp := t.TempDir()
		gen := filepath.Join(tmp, "gen")
		if out, err := exec.Command("go", "build", "-o", gen, "./bench/gen").CombinedOutput(); err != nil {
			t.Fatalf("building the generator: %v\n%s", err, out)
		}
		home := filepath.Join(tmp, "home")
		if out, err := exec.Command(gen, "--src", dir, "--out", home, "--size", "6MB", "--seed", "3", "--platforms", "claude_code").CombinedOutput(); err != nil {
			t.Fatalf("generating a home: %v\n%s", err, out)
		}
		syncStepsEqualOneRun(t, filepath.Join(home, ".claude"), 3)
	})
}

func syncStepsEqualOneRun(t *testing.T, src string, steps int) {
	tmp := t.TempDir()
	root := filepath.Join(tmp, "claude")
	inc, piped, full := filepath.Join(tmp, "inc"), filepath.Join(tmp, "piped"), filepath.Join(tmp, "full")
	xdg := "XDG_DATA_HOME=" + filepath.Join(tmp, "data") // one scrub key for every lake
	chain := "pos-extract -p claude_code --root %q %s -q | pos-normalize -q | pos-scrub -q | pos-embed -q --lake %q | pos-load -q --require-scrubbed --lake %q"
	files := sourceFiles(t, src)
	for step := 1; step <= steps; step++ {
		for _, f := range files {
			grow(t, src, root, f, step, steps)
		}
		_, errs, code := sh(t, fmt.Sprintf("pos-sync -p claude_code --root %q --lake %q", root, inc), xdg)
		if code != 0 && code != 3 {
			t.Fatalf("pos-sync, step %d: exit %d\n%s", step, code, errs)
		}
		if step == 1 && !strings.Contains(errs, "pos-sync: load:") {
			t.Fatalf("pos-sync printed no summary:\n%s", errs)
		}
		_, errs, code = sh(t, fmt.Sprintf(chain, root, "--lake "+piped, piped, piped), xdg)
		if code != 0 && code != 3 {
			t.Fatalf("the pipeline, step %d: exit %d\n%s", step, code, errs)
		}
	}
	_, errs, code := sh(t, fmt.Sprintf(chain, root, "--full", full, full), xdg)
	if code != 0 && code != 3 {
		t.Fatalf("the pipeline: exit %d\n%s", code, errs)
	}
	// A last sync finds nothing new.
	_, errs, _ = sh(t, fmt.Sprintf("pos-sync -p claude_code --root %q --lake %q", root, inc), xdg)
	if !strings.Contains(errs, "no new rows") {
		t.Errorf("a sync with nothing new wrote rows:\n%s", errs)
	}
	got := loadtest.Views(t, inc)
	t.Run("pipeline in steps", func(t *testing.T) { compareLakes(t, got, loadtest.Views(t, piped), nil) })
	// Against one run, what incremental reading cannot know yet is left
	// out, in the pipeline as in pos-sync (the comparison above holds them
	// to the same rows): a subagent's type, when the parent's line naming
	// it comes after the subagent's lines were loaded, is not written back
	// to them (agent_type, and the content_hash over it, of messages and
	// exchanges); and the chunks pos-embed made of an exchange still open
	// at a sync stay beside those of the exchange complete.
	t.Run("one run", func(t *testing.T) {
		compareLakes(t, got, loadtest.Views(t, full), map[string][]string{
			"messages":  {"agent_type", "content_hash"},
			"exchanges": {"content_hash"},
			"chunks":    nil,
		})
	})
}

// sourceFiles lists the files under dir, relative to it.
func sourceFiles(t *testing.T, dir string) []string {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// grow writes the part of src/rel that step of steps has: a transcript
// grows by appending, cut at a byte (mid-line too), and is whole at the
// last step; any other file is written whole at the first.
func grow(t *testing.T, src, dst, rel string, step, steps int) {
	b, err := os.ReadFile(filepath.Join(src, rel))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dst, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(rel, ".jsonl") {
		if step == 1 {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	cut := func(s int) int { return len(b) * s / steps }
	from, to := cut(step-1), cut(step)
	if step == 1 {
		from = 0
	}
	if to <= from {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b[from:to]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// compareLakes fails for each table whose rows differ between two lakes,
// every column compared but ingested_at, and shows a few rows of each
// side that the other lacks.
//
// without names the columns left out of a table's comparison; a table it
// holds with no columns is not compared.
func compareLakes(t *testing.T, got, want *sql.DB, without map[string][]string) {
	t.Helper()
	for _, tb := range syncTables {
		cols, ok := without[tb]
		if ok && cols == nil {
			continue
		}
		g, w := rowHashes(t, got, tb, cols), rowHashes(t, want, tb, cols)
		if len(w) == 0 && tb != "decisions" {
			t.Errorf("%s: no rows in the lake of one run", tb)
		}
		onlyGot, onlyWant := diffMultiset(g, w), diffMultiset(w, g)
		if len(onlyGot)+len(onlyWant) == 0 {
			continue
		}
		t.Errorf("%s: %d rows, want %d; %d only in the incremental lake, %d only in the one-run lake", tb, len(g), len(w), len(onlyGot), len(onlyWant))
		gotRows, wantRows := rowsByID(t, got, tb, cols, onlyGot), rowsByID(t, want, tb, cols, onlyWant)
		shown := 0
		for id, gr := range gotRows {
			wr, ok := wantRows[id]
			if !ok {
				if shown++; shown <= 3 {
					t.Logf("%s: only in the incremental lake: %.600s", tb, gr["_json"])
				}
				continue
			}
			var cols []string
			for k, v := range gr {
				if k != "_json" && fmt.Sprint(v) != fmt.Sprint(wr[k]) {
					cols = append(cols, fmt.Sprintf("%s: %.200v | %.200v", k, v, wr[k]))
				}
			}
			slices.Sort(cols)
			if shown++; shown <= 6 {
				t.Logf("%s %s differs in %s", tb, id, strings.Join(cols, "; "))
			}
		}
		for id, wr := range wantRows {
			if _, ok := gotRows[id]; !ok {
				if shown++; shown <= 9 {
					t.Logf("%s: only in the one-run lake: %.600s", tb, wr["_json"])
				}
			}
		}
	}
}

// rowsByID reads the rows of tb whose hashes are hs, by id, each a map of
// its columns (and "_json", the row as JSON).
func rowsByID(t *testing.T, db *sql.DB, tb string, without, hs []string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, h := range hs[:min(len(hs), 200)] {
		js := loadtest.One(t, db, fmt.Sprintf("SELECT to_json(r)::VARCHAR FROM (%s) r WHERE hash(r)::VARCHAR = ? LIMIT 1", rowQuery(tb, without)), h)
		var m map[string]any
		if err := json.Unmarshal([]byte(js), &m); err != nil {
			t.Fatal(err)
		}
		m["_json"] = js
		out[fmt.Sprint(m["id"])] = m
	}
	return out
}

// rowQuery selects a table's rows without what says when they were
// read: ingested_at, and source_mtime, the file's mtime when a run read
// the line, which a file that grew between runs changed.
func rowQuery(tb string, without []string) string {
	cols := append([]string{"ingested_at"}, without...)
	if tb == "raw" {
		cols = append(cols, "source_mtime")
	}
	return fmt.Sprintf("SELECT * EXCLUDE (%s) FROM %s", strings.Join(cols, ", "), tb)
}

func rowHashes(t *testing.T, db *sql.DB, tb string, without []string) []string {
	t.Helper()
	rows, err := db.Query(fmt.Sprintf("SELECT hash(r)::VARCHAR FROM (%s) r", rowQuery(tb, without)))
	if err != nil {
		t.Fatalf("%s: %v", tb, err)
	}
	defer rows.Close()
	var hs []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(hs)
	return hs
}

// diffMultiset returns the elements of a (sorted) not matched in b (sorted).
func diffMultiset(a, b []string) []string {
	var out []string
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			j++
			continue
		}
		out = append(out, x)
	}
	return out
}

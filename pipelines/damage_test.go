package pipelines_test

import (
	"context"
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/testbin"

	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/testdata/damage"
)

// stageRun is one run of the whole pipeline over a home.
type stageRun struct {
	code   int
	stderr map[string]string // per stage
}

// pipeline runs pos-extract | pos-normalize | pos-scrub | pos-embed |
// pos-load over home into lake, each stage's stderr to its own file, within
// a time limit: a stage that hangs fails the test.
func pipeline(t *testing.T, home, lake string, extractArgs ...string) stageRun {
	t.Helper()
	dir := t.TempDir()
	stages := []string{"pos-extract --lake " + lake + " " + strings.Join(extractArgs, " "), "pos-normalize", "pos-scrub", "pos-embed --lake " + lake, "pos-load --lake " + lake}
	var parts []string
	for i, s := range stages {
		parts = append(parts, fmt.Sprintf("%s 2>%s/%d.err", s, dir, i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", strings.Join(parts, " | "))
	cmd.Env = append(os.Environ(), "PATH="+binDir+":"+os.Getenv("PATH"), "HOME="+home, "POS_LAKE=", "XDG_DATA_HOME="+t.TempDir(),
		"CLAUDE_CONFIG_DIR=", "CODEX_HOME=", "GEMINI_DIR=", "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the pipeline did not end within 10 minutes (a hang): %v", err)
	}
	run := stageRun{code: testbin.ExitCode(t, err), stderr: map[string]string{}}
	for i, s := range stages {
		b, _ := os.ReadFile(fmt.Sprintf("%s/%d.err", dir, i))
		run.stderr[strings.Fields(s)[0]] = string(b)
	}
	return run
}

// panicRE finds what a Go program that panicked or crashed prints.
var panicRE = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[|runtime: )`)

// A damaged home (every damage of a real disk beside valid sessions of
// Claude Code, Codex, Gemini CLI and Cline; see testdata/damage) goes
// through the real pipeline: nothing panics or hangs, every valid line is
// a raw row holding it, every damaged line is named path:line (or
// path:key) and kept as far as it is JSON, DuckDB reads the whole lake,
// the half-written last line of a live session is taken whole by the next
// run once it is complete, and --strict exits non-zero.
func TestDamagedHome(t *testing.T) { damagedHome(t, damage.Options{Seed: 30}) }

// The same without the directory entries that are no history files (a
// link loop, a directory, a FIFO named like one), whose handling is
// pos-extract's walk: the lines alone.
func TestDamagedLines(t *testing.T) { damagedHome(t, damage.Options{Seed: 31, NoEntries: true}) }

func damagedHome(t *testing.T, opt damage.Options) {
	tmp := t.TempDir()
	home, lake := filepath.Join(tmp, "home"), filepath.Join(tmp, "lake")
	opt.Corpus = corpus.Path() // the damaged home makes up lines of the same shapes where it is absent
	h, err := damage.Write(home, opt)
	if err != nil {
		t.Fatal(err)
	}

	byExpect := map[damage.Expect]int{}
	for _, l := range h.Lines {
		byExpect[l.Expect]++
	}
	t.Logf("%d lines: %v", len(h.Lines), byExpect)
	run := pipeline(t, home, lake)
	checkStages(t, run)
	ex := run.stderr["pos-extract"]
	if strings.Contains(ex, "further bad records") {
		t.Fatalf("pos-extract stopped naming bad records:\n%s", ex)
	}
	for _, l := range h.Lines {
		named := strings.Contains(ex, l.Where()+": ")
		switch {
		case l.Expect == damage.Valid && named:
			t.Errorf("valid line named: %s\n%s", l.Where(), grepLines(ex, l.Where()+": "))
		case l.Expect != damage.Valid && !named:
			t.Errorf("%s (%s, %s) is not named on stderr", l.Where(), l.What, l.Expect)
		}
	}
	if strings.Contains(ex, h.Live.Where()+": ") {
		t.Errorf("the line being written is named: %s", grepLines(ex, h.Live.Where()))
	}

	db := loadtest.Views(t, lake)
	readAll(t, db, "SELECT * FROM raw")
	readAll(t, db, "SELECT * FROM messages")
	rows := rawRows(t, db)
	checkRows(t, h.Lines, rows)
	if _, ok := rows[rowKey{h.Live.Path, h.Live.Num, ""}]; ok {
		t.Errorf("the half-written line is in the lake after the first run")
	}
	if n := count(t, db, "SELECT count(*) FROM messages"); n == 0 {
		t.Error("no messages")
	}

	// The agent finishes its line; the next run (incremental) takes it
	// whole, and names none of the lines it named before.
	if err := h.Complete(); err != nil {
		t.Fatal(err)
	}
	run2 := pipeline(t, home, lake)
	checkStages(t, run2)
	db2 := loadtest.Views(t, lake)
	readAll(t, db2, "SELECT * FROM raw")
	rows2 := rawRows(t, db2)
	live := h.Live
	checkRows(t, append(h.Lines, live), rows2)
	for _, l := range h.Damaged() {
		if l.Expect != damage.Entry && strings.Contains(run2.stderr["pos-extract"], l.Where()+": ") {
			t.Errorf("the incremental run names %s again", l.Where())
		}
	}

	// --strict: the first bad record ends the run, exit 3.
	_, errs, code := sh(t, "pos-extract --full --strict -q > /dev/null", "HOME="+home, "CLAUDE_CONFIG_DIR=", "CODEX_HOME=")
	if code != 3 || panicRE.MatchString(errs) {
		t.Errorf("pos-extract --strict: exit %d\n%s", code, errs)
	}
}

// checkStages fails on a panic or crash in any stage, and on an exit other
// than 0 or 3 (bad input skipped).
func checkStages(t *testing.T, run stageRun) {
	t.Helper()
	for stage, errs := range run.stderr {
		if panicRE.MatchString(errs) {
			t.Fatalf("%s crashed:\n%s", stage, errs)
		}
	}
	if run.code != 0 && run.code != 3 {
		t.Fatalf("pipeline exit %d:\n%v", run.code, run.stderr)
	}
	for _, stage := range []string{"pos-normalize", "pos-scrub", "pos-embed", "pos-load"} {
		// What pos-extract handed on, every later stage takes.
		if regexp.MustCompile(`[1-9]\d* skipped`).MatchString(run.stderr[stage]) {
			t.Errorf("%s skipped records pos-extract emitted:\n%s", stage, run.stderr[stage])
		}
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// readAll reads every row and column of a query: DuckDB parses every JSON
// value it returns.
func readAll(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

type rowKey struct {
	path string
	line int64
	key  string
}

type rawRow struct {
	n               int // rows at this place
	md5, textMD5    string
	altered         string
	valid, isString bool
}

// rawRows reads the raw layer by source position.
func rawRows(t *testing.T, db *sql.DB) map[rowKey]*rawRow {
	t.Helper()
	rows, err := db.Query(`SELECT source_path, coalesce(source_line, 0), coalesce(source_key, ''), md5(raw::VARCHAR),
		coalesce(CASE WHEN json_type(raw) = 'VARCHAR' THEN md5(raw->>'$') END, ''), coalesce(source_altered, ''),
		json_valid(raw::VARCHAR), json_type(raw) = 'VARCHAR' FROM raw`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[rowKey]*rawRow{}
	for rows.Next() {
		var k rowKey
		var r rawRow
		if err := rows.Scan(&k.path, &k.line, &k.key, &r.md5, &r.textMD5, &r.altered, &r.valid, &r.isString); err != nil {
			t.Fatal(err)
		}
		if k.key != "" {
			k.line = 0 // an element of a JSON file
		}
		if old, ok := out[k]; ok {
			old.n++
			continue
		}
		r.n = 1
		out[k] = &r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sum(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// checkRows checks the raw layer line by line against what the home's
// generator says each line must become.
func checkRows(t *testing.T, lines []damage.Line, rows map[rowKey]*rawRow) {
	t.Helper()
	perFile := map[string]int{}
	for _, l := range lines {
		if l.Expect == damage.Entry {
			continue
		}
		k := rowKey{l.Path, l.Num, l.Key}
		if l.Key != "" {
			k.line = 0
		}
		r, ok := rows[k]
		if l.Expect == damage.Skipped {
			if ok {
				t.Errorf("%s (%s) is in the raw layer", l.Where(), l.What)
			}
			continue
		}
		if !ok {
			t.Errorf("%s (%s, %s) is not in the raw layer", l.Where(), cmpOr(l.What, "valid"), l.Expect)
			continue
		}
		perFile[l.Path]++
		switch {
		case r.n != 1:
			t.Errorf("%s: %d raw rows", l.Where(), r.n)
		case !r.valid:
			t.Errorf("%s: raw is not valid JSON", l.Where())
		case l.Expect == damage.AsText:
			if !r.isString || r.textMD5 != sum(l.Raw) || !strings.Contains(r.altered, "text") {
				t.Errorf("%s (%s): not kept as a JSON string of its text (altered %q)", l.Where(), l.What, r.altered)
			}
		case l.Expect == damage.Repaired:
			if !strings.Contains(r.altered, l.Altered) {
				t.Errorf("%s (%s): source_altered %q, want %q", l.Where(), l.What, r.altered, l.Altered)
			}
		default:
			if r.md5 != sum(l.Raw) || r.altered != "" {
				t.Errorf("%s (%s, %s): raw differs from the line (altered %q)", l.Where(), cmpOr(l.What, "valid"), l.Expect, r.altered)
			}
		}
	}
	// Nothing else is in the raw layer for these files.
	got := map[string]int{}
	for k, r := range rows {
		if _, want := perFile[k.path]; want {
			got[k.path] += r.n
		}
	}
	for p, n := range perFile {
		if got[p] != n {
			t.Errorf("%s: %d raw rows, want %d", p, got[p], n)
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// A record one stage takes, every later stage takes: records nested 5,000
// and 9,998 levels deep (from another producer, or an older pos-extract:
// deeper than sonic reads, within encoding/json's and pos-scrub's 10,000)
// go through pos-normalize, pos-scrub, pos-embed and pos-load with nothing
// skipped; the secret inside one is redacted, and DuckDB reads the lake.
func TestDeepRecordsEveryStage(t *testing.T) {
	tmp := t.TempDir()
	secret := "ghp_" + "Zq3ZpX0oR9sV1tW2uX3yZ4aB5cD6eF7gH8iJ"
	nest := func(depth int, inner string) string {
		return strings.Repeat(`{"a":[`, depth/2) + inner + strings.Repeat("]}", depth/2)
	}
	lines := []string{
		`{"schema":"pos/1","kind":"raw","id":"d1","platform":"test","session_id":"s","ts":"2026-01-02T03:04:05Z","source":{"path":"/h/a.jsonl","line":1,"offset":0},"raw":` +
			nest(5000, `"export GITHUB_TOKEN=`+secret+`"`) + `}`,
		`{"schema":"pos/1","kind":"raw","id":"d2","platform":"test","session_id":"s","ts":"2026-01-02T03:04:06Z","source":{"path":"/h/a.jsonl","line":2,"offset":9},"raw":` +
			nest(9998, "1") + `}`,
		`{"schema":"pos/1","kind":"message","id":"m1","platform":"test","session_id":"s","ts":"2026-01-02T03:04:07Z","role":"assistant","content_type":"tool_use",` +
			`"tools":[{"name":"Bash","input":` + nest(6000, `"ls"`) + `}],"source":{"path":"/h/a.jsonl","line":3,"offset":19}}`,
	}
	in := filepath.Join(tmp, "in.ndjson")
	os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	lake := filepath.Join(tmp, "lake")
	_, errs, code := sh(t, fmt.Sprintf("pos-normalize < %s | pos-scrub | pos-embed --lake %q | pos-load --lake %q", in, lake, lake))
	if code != 0 || regexp.MustCompile(`[1-9]\d* (bad lines )?skipped`).MatchString(errs) || panicRE.MatchString(errs) {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	db := loadtest.Views(t, lake)
	readAll(t, db, "SELECT * FROM raw")
	readAll(t, db, "SELECT * FROM messages")
	if n := count(t, db, "SELECT count(*) FROM raw WHERE json_valid(raw::VARCHAR)"); n != 2 {
		t.Fatalf("%d raw rows", n)
	}
	if n := count(t, db, "SELECT count(*) FROM raw WHERE contains(raw::VARCHAR, ?)", secret); n != 0 {
		t.Fatal("the secret nested 5,000 levels deep reached the lake")
	}
	if n := count(t, db, "SELECT count(*) FROM messages WHERE json_valid(tools[1].input)"); n != 1 {
		t.Fatalf("%d messages", n)
	}
}

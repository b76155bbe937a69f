// Package pipelines_test runs the real pos binaries, chained as a user
// chains them, over the fixtures and the real corpus, and checks the lake
// with DuckDB.
package pipelines_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/internal/testbin"
	"github.com/pos-lake/pos/load/catalog"
)

var (
	binDir      string
	builtByMake bool
)

func TestMain(m *testing.M) {
	testbin.Main(m, "pos-bin-", &binDir, func(dir string) *exec.Cmd {
		// As people build them: make build, with its flags. Without make,
		// go build (and TestBuildLinks skips).
		if _, err := exec.LookPath("make"); err != nil {
			fmt.Fprintln(os.Stderr, "pipelines: no make; building with go build")
			return exec.Command("go", "build", "-o", dir+"/", "../cmd/...")
		}
		builtByMake = true
		return exec.Command("make", "-s", "-C", "..", "build", "BIN="+dir)
	})
}

// sh runs a bash pipeline with pipefail and the binaries first on PATH. It
// returns stdout, stderr and the exit code.
func sh(t *testing.T, script string, env ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command("bash", "-o", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), append([]string{"PATH=" + binDir + ":" + os.Getenv("PATH"), "POS_LAKE=", "XDG_DATA_HOME=" + t.TempDir()}, env...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	code := testbin.ExitCode(t, cmd.Run())
	return out.String(), errb.String(), code
}

func mustSh(t *testing.T, script string, env ...string) string {
	t.Helper()
	out, errs, code := sh(t, script, env...)
	if code != 0 {
		t.Fatalf("%s\nexit %d\n%s", script, code, errs)
	}
	return out
}

func count(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func tableCounts(t *testing.T, db *sql.DB) string {
	var parts []string
	for _, tb := range []string{"raw", "messages", "exchanges", "sessions", "documents"} {
		parts = append(parts, fmt.Sprintf("%s=%d", tb, count(t, db, "SELECT count(*) FROM "+tb)))
	}
	return strings.Join(parts, " ")
}

// The corpus, end to end: every line of every file is loaded, nothing is
// skipped, and the per-file counts of raw lines, messages and exchanges are
// those computed independently from the files.
func TestCorpusLake(t *testing.T) {
	dir := corpus.Platform(t, claudecode.Name)
	lake := filepath.Join(t.TempDir(), "lake")
	_, errs, code := sh(t, fmt.Sprintf("pos-extract --platform claude_code --root %q --full | pos-normalize | pos-load --lake %q", dir, lake))
	if code != 0 || strings.Contains(errs, "invalid") {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, ", 0 skipped,") {
		t.Fatalf("summary does not say nothing was skipped:\n%s", errs)
	}
	db := loadtest.Views(t, lake)

	// Independent route: DuckDB reads each JSONL file itself.
	type fileCounts struct{ lines, messages, exchanges int64 }
	want := map[string]fileCounts{
		// Exchanges are one per real prompt of a thread (or one per subagent
		// transcript that starts after its prompt); reviewed by hand.
		"dkimuson/sample-project/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl":                 {29, 21, 1},
		"dkimuson/sample-project/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl":                 {53, 45, 3},
		"gabriel/sub-agents/agent-4a328c96.jsonl":                                            {238, 145, 1},
		"gabriel/sub-agents/agent-c42525e1.jsonl":                                            {1, 1, 1},
		"gabriel/sub-agents/agent-f1bdb977.jsonl":                                            {176, 127, 1},
		"spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl":                                 {1863, 347, 4},
		"spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-acompact-fffbd0.jsonl": {4, 4, 1},
		"spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl":                                 {1512, 294, 2},
		"spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl":         {144, 46, 1},
		"spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl":                                 {2385, 467, 3},
		"spotter/short.jsonl":      {15, 7, 1},
		"spotter/tool_heavy.jsonl": {39, 20, 4},
	}
	files := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		files++
		rel, _ := filepath.Rel(dir, path)
		// Lines and messages straight from the file: every line; user,
		// summary and compaction/command system lines, plus one message per
		// assistant (message.id, requestId), plus one per prompt the
		// running turn took in from the input queue (a remove line: in
		// these 2.1.39 files each took a typed prompt no other line holds,
		// checked by hand).
		var lines, msgs int64
		err = db.QueryRow(`SELECT count(*),
			count(*) FILTER (WHERE type IN ('user', 'summary') OR (type = 'system' AND subtype IN ('compact_boundary', 'local_command')))
			+ count(DISTINCT (message->>'$.id', requestId)) FILTER (WHERE type = 'assistant')
			+ count(*) FILTER (WHERE type = 'queue-operation' AND operation = 'remove')
			FROM read_json(?, format = 'newline_delimited', columns = {type: 'VARCHAR', subtype: 'VARCHAR', message: 'JSON', requestId: 'VARCHAR', operation: 'VARCHAR'})`, path).Scan(&lines, &msgs)
		if err != nil {
			t.Fatal(err)
		}
		gotRaw := count(t, db, "SELECT count(*) FROM raw WHERE source_path = ?", path)
		gotMsgs := count(t, db, "SELECT count(*) FROM messages WHERE source_path = ?", path)
		gotEx := count(t, db, "SELECT count(*) FROM exchanges e JOIN messages m ON m.id = e.prompt_id WHERE m.source_path = ?", path)
		if gotRaw != lines || gotMsgs != msgs {
			t.Errorf("%s: lake has %d raw, %d messages; the file has %d lines, %d messages", rel, gotRaw, gotMsgs, lines, msgs)
		}
		if w, ok := want[rel]; ok && (w.lines != lines || w.messages != msgs || w.exchanges != gotEx) {
			t.Errorf("%s: got lines %d messages %d exchanges %d, want %+v", rel, lines, msgs, gotEx, w)
		}
		return nil
	})
	if files != 27 {
		t.Fatalf("%d corpus files", files)
	}
	if got := tableCounts(t, db); got != "raw=6926 messages=1811 exchanges=38 sessions=8 documents=19" {
		t.Fatalf("table counts: %s", got)
	}
	// Partition pruning: a date filter reads only that date's files.
	var plan string
	rows, err := db.Query("EXPLAIN ANALYZE SELECT count(*) FROM messages WHERE platform = 'claude_code' AND date = DATE '2026-02-11'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k, v string
		rows.Scan(&k, &v)
		plan += v
	}
	if !strings.Contains(plan, "Total Files Read: 1") {
		t.Fatalf("no partition pruning:\n%s", plan)
	}
	// Tokens: pos-query stats --by day,model equals DuckDB's own reading of
	// the transcripts, deduplicated by message.id + requestId (the last line
	// of each message carries its final usage).
	out := mustSh(t, fmt.Sprintf("pos-query stats --lake %q --by day,model --format csv", lake))
	var indep []string
	rows, err = db.Query(`WITH l AS (
		SELECT "timestamp" AS ts, requestId AS rid, message->>'$.id' AS mid, message->>'$.model' AS model,
		  CAST(message->'$.usage'->>'input_tokens' AS BIGINT) AS i, CAST(message->'$.usage'->>'output_tokens' AS BIGINT) AS o,
		  CAST(message->'$.usage'->>'cache_creation_input_tokens' AS BIGINT) AS cc, CAST(message->'$.usage'->>'cache_read_input_tokens' AS BIGINT) AS cr
		FROM read_json(?, format = 'newline_delimited', columns = {type: 'VARCHAR', "timestamp": 'VARCHAR', requestId: 'VARCHAR', message: 'JSON'})
		WHERE type = 'assistant'),
	  m AS (SELECT min(ts) AS ts, arg_max(model, o) AS model, arg_max(i, o) AS i, max(o) AS o, arg_max(cc, o) AS cc, arg_max(cr, o) AS cr FROM l GROUP BY mid, rid)
	  SELECT strftime(CAST(ts AS TIMESTAMPTZ), '%Y-%m-%d') || ',' || model || ',' || count(*) || ',' || count(*) || ',' || sum(i) || ',' || sum(o) || ',' || sum(cc) || ',' || sum(cr)
	  FROM m WHERE model <> '<synthetic>' GROUP BY strftime(CAST(ts AS TIMESTAMPTZ), '%Y-%m-%d'), model ORDER BY 1`, filepath.Join(dir, "**", "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		rows.Scan(&line)
		indep = append(indep, line)
	}
	// pos-query's csv: day,model,messages,sessions,input,output,cache_creation,cache_read,
	// then the 1-hour cache writes and the costs; the independent route has
	// no session count: compare the rest of the first eight.
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Split(l, ",")[:8]
		f[3] = f[2]
		got = append(got, strings.Join(f, ","))
	}
	if strings.Join(got, "\n") != strings.Join(indep, "\n") || len(got) < 5 {
		t.Fatalf("pos-query stats --by day,model:\n%s\nthe transcripts:\n%s", strings.Join(got, "\n"), strings.Join(indep, "\n"))
	}

	// The catalog file opens in DuckDB with the same views.
	cat, err := catalog.OpenDB(filepath.Join(lake, catalog.CatalogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if got := tableCounts(t, cat); got != "raw=6926 messages=1811 exchanges=38 sessions=8 documents=19" {
		t.Fatalf("pos.duckdb views: %s", got)
	}
	// Lake files are private.
	filepath.WalkDir(lake, func(path string, d fs.DirEntry, err error) error {
		fi, _ := d.Info()
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s is readable by others: %v", path, perm)
		}
		return nil
	})
}

// Loading the same input twice adds no rows.
func TestLoadTwice(t *testing.T) {
	tmp := t.TempDir()
	lake := filepath.Join(tmp, "lake")
	mustSh(t, fmt.Sprintf("pos-extract --root ../testdata/claude/home/.claude --full -q | pos-normalize -q > %s/n.ndjson || [ $? = 3 ]", tmp))
	mustSh(t, fmt.Sprintf("pos-load --lake %q -q < %s/n.ndjson", lake, tmp))
	first := tableCounts(t, loadtest.Views(t, lake))
	_, errs, _ := sh(t, fmt.Sprintf("pos-load --lake %q < %s/n.ndjson", lake, tmp))
	if !strings.Contains(errs, "no new rows") {
		t.Fatalf("second load wrote rows:\n%s", errs)
	}
	if second := tableCounts(t, loadtest.Views(t, lake)); second != first {
		t.Fatalf("counts changed: %s -> %s", first, second)
	}
	// Without pos-normalize too: pos-load splits the raw records itself.
	lake2 := filepath.Join(tmp, "lake2")
	out, errs, code := sh(t, fmt.Sprintf("pos-extract --root ../testdata/claude/home/.claude --full -q | pos-load --lake %q", lake2))
	if code != 3 || !strings.Contains(errs, "22222222-2222-4222-8222-222222222222.jsonl:5: invalid JSON") || out != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	if n := count(t, loadtest.Views(t, lake2), "SELECT count(*) FROM raw"); n != 34 {
		t.Fatalf("raw rows %d", n)
	}
}

// Killing pos-load midway leaves only complete files where readers look,
// and running the load again completes the lake.
func TestKillLoad(t *testing.T) {
	dir := corpus.Platform(t, claudecode.Name)
	tmp := t.TempDir()
	mustSh(t, fmt.Sprintf("pos-extract --root %q --full -q | pos-normalize -q > %s/n.ndjson", dir, tmp))
	clean := filepath.Join(tmp, "clean")
	mustSh(t, fmt.Sprintf("pos-load --lake %s -q < %s/n.ndjson", clean, tmp))
	want := tableCounts(t, loadtest.Views(t, clean))

	lake := filepath.Join(tmp, "lake")
	in, _ := os.ReadFile(filepath.Join(tmp, "n.ndjson"))
	cmd := exec.Command(filepath.Join(binDir, "pos-load"), "--lake", lake, "--file-rows", "100", "-q")
	w, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Feed half the input, wait for some files to be in place, then kill.
	w.Write(in[:len(in)/2])
	deadline := time.Now().Add(30 * time.Second)
	for {
		raw, _ := filepath.Glob(filepath.Join(lake, "raw", "*", "*", "*.parquet"))
		indexed, _ := filepath.Glob(filepath.Join(lake, "indexed", "*", "*", "*", "*.parquet"))
		if len(raw)+len(indexed) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("pos-load wrote no file")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	var tmps, parts int
	filepath.WalkDir(lake, func(path string, d fs.DirEntry, err error) error {
		switch {
		case strings.HasSuffix(path, ".parquet.tmp"):
			tmps++
		case strings.HasSuffix(path, ".parquet") && !strings.Contains(path, "_schema"):
			parts++
		}
		return nil
	})
	if parts == 0 {
		t.Fatal("no complete file before the kill")
	}
	// Every visible file is complete: DuckDB reads them all.
	db := loadtest.Views(t, lake)
	partial := tableCounts(t, db)
	t.Logf("after kill: %d files in place, %d temporary; %s", parts, tmps, partial)
	if partial == want {
		t.Fatal("the kill came after the load finished")
	}
	mustSh(t, fmt.Sprintf("pos-load --lake %s -q < %s/n.ndjson", lake, tmp))
	if got := tableCounts(t, loadtest.Views(t, lake)); got != want {
		t.Fatalf("after re-run: %s, want %s", got, want)
	}
	left, _ := filepath.Glob(filepath.Join(lake, "raw", "*", "*", "*.tmp"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// An incremental sync after lines are appended gives the lake a full load
// of the final files gives.
func TestIncrementalSync(t *testing.T) {
	dir := corpus.Platform(t, claudecode.Name)
	tmp := t.TempDir()
	src := filepath.Join(dir, "spotter", "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(tmp, "home", ".claude", "projects", "p")
	os.MkdirAll(home, 0o755)
	dst := filepath.Join(home, filepath.Base(src))
	lines := bytes.SplitAfter(b, []byte("\n"))
	lake := filepath.Join(tmp, "lake")
	syncCmd := fmt.Sprintf("pos-extract --root %q --lake %q | pos-normalize | pos-load --lake %q", filepath.Join(tmp, "home", ".claude"), lake, lake)
	// Write the file in three steps, the second ending in a half line.
	cut1, cut2 := len(lines)/3, 2*len(lines)/3
	os.WriteFile(dst, bytes.Join(lines[:cut1], nil), 0o644)
	mustSh(t, syncCmd)
	half := lines[cut2][:len(lines[cut2])/2]
	os.WriteFile(dst, append(bytes.Join(lines[:cut2], nil), half...), 0o644)
	mustSh(t, syncCmd)
	os.WriteFile(dst, b, 0o644)
	_, errs, code := sh(t, syncCmd)
	if code != 0 {
		t.Fatal(errs)
	}
	// The last sync read only the rest of the file (from the open exchange),
	// and what the earlier syncs delivered was context, not written again.
	if strings.Contains(errs, fmt.Sprintf("%d lines", len(lines)-1)) {
		t.Fatalf("the last sync read the whole file again:\n%s", errs)
	}
	if m := regexp.MustCompile(`(\d+) context lines of earlier runs`).FindStringSubmatch(errs); m == nil || m[1] == "0" {
		t.Fatalf("the open exchange was not read as context:\n%s", errs)
	}
	full := filepath.Join(tmp, "full")
	// The same file read whole (dst: its subagents' transcripts are not
	// copied beside it, so both read the subagent lines copied into
	// agent_progress lines).
	mustSh(t, fmt.Sprintf("pos-extract --root %q --full | pos-normalize | pos-load --lake %q", dst, full))
	want, got := loadtest.Views(t, full), loadtest.Views(t, lake)
	if a, b := tableCounts(t, got), tableCounts(t, want); a != b {
		t.Fatalf("incremental %s, full %s", a, b)
	}
	q := `SELECT string_agg(exchange_number || ':' || message_count || ':' || output_tokens, ',' ORDER BY exchange_number) FROM exchanges WHERE NOT sidechain`
	var a, c string
	got.QueryRow(q).Scan(&a)
	want.QueryRow(q).Scan(&c)
	if a != c {
		t.Fatalf("exchanges differ:\n incremental %s\n full        %s", a, c)
	}
	q = `SELECT message_count || ' ' || user_count || ' ' || input_tokens || ' ' || output_tokens || ' ' || cache_read_tokens || ' ' || title FROM sessions`
	got.QueryRow(q).Scan(&a)
	want.QueryRow(q).Scan(&c)
	if a != c {
		t.Fatalf("sessions differ:\n incremental %s\n full        %s", a, c)
	}
}

// Bad input: a one-line diagnostic naming file and line, exit 3, the rest
// loaded; --strict stops at the first bad line.
func TestBadInputAndStrict(t *testing.T) {
	out, errs, code := sh(t, "pos-extract --root ../testdata/claude/home/.claude --full > /dev/null")
	if code != 3 || !strings.Contains(errs, "pos-extract: ") || !strings.Contains(errs, "22222222-2222-4222-8222-222222222222.jsonl:5: invalid JSON: unexpected end of JSON input\n") || out != "" {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	_, errs, code = sh(t, "pos-extract --root ../testdata/claude/home/.claude --full --strict | wc -l")
	if code != 3 || strings.Count(errs, "invalid JSON") != 1 {
		t.Fatalf("strict: exit %d\n%s", code, errs)
	}
	_, errs, code = sh(t, `printf '{"kind":"message","id":"x"}\nnot json\n' | pos-normalize > /dev/null`)
	if code != 3 || !strings.Contains(errs, "pos-normalize: -:2: ") {
		t.Fatalf("normalize: exit %d\n%s", code, errs)
	}
	_, errs, code = sh(t, "pos-extract --platform nope")
	if code != 2 || !strings.Contains(errs, `unknown platform "nope"`) {
		t.Fatalf("usage: exit %d\n%s", code, errs)
	}
}

// A closed downstream pipe ends a filter quietly.
func TestClosedPipe(t *testing.T) {
	dir := corpus.Platform(t, claudecode.Name)
	out, errs, _ := sh(t, fmt.Sprintf(`pos-extract --root %q --full | head -c 100 > /dev/null; echo "${PIPESTATUS[0]}"`, dir))
	if strings.TrimSpace(out) != "141" || strings.Contains(errs, "broken pipe") || strings.Contains(errs, "panic") {
		t.Fatalf("exit %q, stderr:\n%s", out, errs)
	}
	out, errs, _ = sh(t, fmt.Sprintf(`pos-extract --root %q --full -q | pos-normalize | head -c 100 > /dev/null; echo "${PIPESTATUS[1]}"`, dir))
	if strings.TrimSpace(out) != "141" || strings.Contains(errs, "broken pipe") {
		t.Fatalf("normalize exit %q, stderr:\n%s", out, errs)
	}
}

// The 20 MB line: the chain carries a record of any size.
func TestHugeLine(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, ".claude", "projects", "p")
	os.MkdirAll(dir, 0o755)
	big := strings.Repeat("0123456789abcdef\\n", 20<<20/18)
	line := `{"type":"user","uuid":"u1","sessionId":"s1","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"` + big + `"}}` + "\n"
	os.WriteFile(filepath.Join(dir, "s1.jsonl"), []byte(line), 0o644)
	lake := filepath.Join(tmp, "lake")
	mustSh(t, fmt.Sprintf("pos-extract --root %q --full -q | pos-normalize -q | pos-load --lake %q -q", filepath.Join(tmp, ".claude"), lake))
	if n := count(t, loadtest.Views(t, lake), "SELECT max(length(text)) FROM messages"); n < 18<<20 {
		t.Fatalf("text of %d bytes", n)
	}
}

// Every binary documents its exit codes in --help, on stdout, exit 0.
func TestHelp(t *testing.T) {
	for _, b := range []string{"pos-extract", "pos-normalize", "pos-load"} {
		out, errs, code := sh(t, b+" --help")
		if code != 0 || !strings.Contains(out, "EXIT CODES") || !strings.Contains(out, "141") || errs != "" {
			t.Errorf("%s --help: exit %d, stdout %d bytes, stderr %q", b, code, len(out), errs)
		}
		_, errs, code = sh(t, b+" --no-such-flag")
		if code != 2 || !strings.Contains(errs, b+": ") || !strings.Contains(errs, "hint: see") {
			t.Errorf("%s bad flag: exit %d, stderr %q", b, code, errs)
		}
	}
}

// The capability matrix in the README is the one the adapters declare.
func TestReadmeMatrix(t *testing.T) {
	want := mustSh(t, "pos-extract --capabilities --format markdown")
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "<!-- capabilities:begin -->\n")
	j := strings.Index(s, "<!-- capabilities:end -->")
	if i < 0 || j < i {
		t.Fatal("README.md has no capabilities block")
	}
	if got := s[i+len("<!-- capabilities:begin -->\n") : j]; got != want {
		t.Fatalf("README.md's capability matrix is stale: run make docs\n got:\n%s\nwant:\n%s", got, want)
	}
}

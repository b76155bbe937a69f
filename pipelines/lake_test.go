package pipelines_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	codex "github.com/pos-lake/pos/extract/codex/about"
	gemini "github.com/pos-lake/pos/extract/gemini/about"
	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load/catalog"
)

// extractFixtures writes the stream of the named platforms' fixture homes
// (by default Claude Code's and Codex's, some of whose lines are damaged on
// purpose: exit 3) to a file.
func extractFixtures(t *testing.T, dir string, names ...string) string {
	t.Helper()
	if len(names) == 0 {
		names = []string{claudecode.Name, codex.Name}
	}
	out := filepath.Join(dir, "extracted.ndjson")
	var script strings.Builder
	fmt.Fprintf(&script, ": > %q", out)
	for _, p := range names {
		fmt.Fprintf(&script, "; { pos-extract -q --full -p %s --root %q >> %q || [ $? = 3 ]; }", p, fixtureRoot(t, p), out)
	}
	mustSh(t, script.String())
	return out
}

// fixtureRoot is where a platform's history lies in its fixture home,
// ../testdata/F/home/.F, F being the first of the platform's name and
// aliases (Claude Code's is "claude") that has one.
func fixtureRoot(t *testing.T, name string) string {
	t.Helper()
	p, ok := platforms.Lookup(name)
	if !ok {
		t.Fatalf("no platform %q", name)
	}
	for _, f := range append([]string{p.Name}, p.Aliases...) {
		root := filepath.Join("..", "testdata", f, "home", "."+f)
		if fi, err := os.Stat(root); err == nil && fi.IsDir() {
			return root
		}
	}
	t.Fatalf("no fixture home holds %s's history", name)
	return ""
}

// catalogAnswers reads every view of pos.duckdb, opened by its path as the
// duckdb CLI opens it, as "view: rows digest" lines.
func catalogAnswers(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("duckdb", path+"?access_mode=read_only&autoinstall_known_extensions=false&autoload_known_extensions=false")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return viewDigests(t, db, filepath.Dir(path))
}

// viewDigests reads every view as "view: rows digest" lines. chunk_rows
// names each row's file: those must be in the lake at lake, and are left
// out of the digest.
func viewDigests(t *testing.T, db *sql.DB, lake string) string {
	t.Helper()
	var b strings.Builder
	for _, v := range catalog.Views {
		var got string
		from := v
		if v == "chunk_rows" {
			from = "(SELECT * EXCLUDE (filename) FROM chunk_rows)"
			abs, _ := filepath.Abs(lake)
			var outside int64
			if err := db.QueryRow("SELECT count(*) FROM chunk_rows WHERE NOT starts_with(filename, ?)", abs+string(filepath.Separator)).Scan(&outside); err != nil || outside > 0 {
				t.Errorf("%s: chunk_rows: %d rows read from files outside the lake (%v)", lake, outside, err)
			}
		}
		q := `SELECT count(*)::VARCHAR || ' ' || coalesce(md5(string_agg(t::VARCHAR, '|' ORDER BY t::VARCHAR)), '') FROM ` + from + ` AS t`
		if err := db.QueryRow(q).Scan(&got); err != nil {
			t.Fatalf("%s: %s: %v", lake, v, err)
		}
		fmt.Fprintf(&b, "%s: %s\n", v, got)
	}
	return b.String()
}

// A lake is relocatable: copied with cp -a to a path holding glob
// characters, the original deleted, it answers pos-query and a plain
// DuckDB opening its pos.duckdb exactly as before. A lake beside it whose
// name the unescaped path would match as a pattern is never read.
func TestMovedLakeAnswersAlike(t *testing.T) {
	dir := t.TempDir()
	stream := extractFixtures(t, dir)
	orig := filepath.Join(dir, "orig", "lake")
	build := func(stream, lake string) {
		mustSh(t, fmt.Sprintf("pos-normalize -q < %q | pos-scrub -q --key moved-lake-key-of-32-bytes-or-more | pos-embed -q --lake %q | pos-load -q --require-scrubbed --lake %q", stream, lake, lake))
	}
	build(stream, orig)
	// The decoy: "moved a1Zb" matches the pattern "moved a[1]*b"; it
	// holds another lake (Gemini's fixture).
	decoyDir := t.TempDir()
	build(extractFixtures(t, decoyDir, gemini.Name), filepath.Join(dir, "moved a1Zb", "lake2"))

	session := strings.TrimSpace(mustSh(t, fmt.Sprintf("pos-query sql --lake %q --format csv 'SELECT session_id FROM sessions ORDER BY last_ts DESC, session_id LIMIT 1' | tail -1", orig)))
	commands := [][]string{
		{"sessions", "--format", "json", "--limit", "0"},
		{"recent", "--format", "json", "-n", "5"},
		{"recent", "--format", "json", "--session", session, "--tools"},
		{"stats", "--format", "json", "--by", "day,model"},
		{"search", "--format", "json", "retry fetcher"},
		{"search", "--format", "json", "--mode", "lexical", "config"},
		{"context", "--format", "json", session},
		{"timeline", "--format", "json"},
		{"decisions", "--format", "json"},
		{"sql", "--format", "json", "SELECT platform, count(*) AS n, min(id) AS first FROM messages GROUP BY ALL ORDER BY ALL"},
		{"sql", "--format", "json", "SELECT count(*) AS n FROM raw"},
	}
	answers := func(lake string) []string {
		var out []string
		for _, c := range commands {
			args := append([]string{c[0], "--lake", lake}, c[1:]...)
			quoted := make([]string, len(args))
			for i, a := range args {
				quoted[i] = fmt.Sprintf("%q", a)
			}
			stdout, errs, code := sh(t, "pos-query "+strings.Join(quoted, " "))
			if code != 0 {
				t.Fatalf("pos-query %s on %s: exit %d\n%s", strings.Join(c, " "), lake, code, errs)
			}
			if strings.Contains(errs, "warning") {
				t.Errorf("pos-query %s on %s warns:\n%s", c[0], lake, errs)
			}
			out = append(out, stdout)
		}
		return out
	}
	before := answers(orig)
	catBefore := catalogAnswers(t, filepath.Join(orig, catalog.CatalogFile))
	if !strings.Contains(catBefore, "messages: ") || strings.Contains(catBefore, "messages: 0 ") {
		t.Fatalf("the catalog reads no messages:\n%s", catBefore)
	}

	moved := filepath.Join(dir, "moved a[1]*b", "lake2")
	os.MkdirAll(filepath.Dir(moved), 0o700)
	mustSh(t, fmt.Sprintf("cp -a %q %q && rm -rf %q", orig, moved, filepath.Dir(orig)))
	after := answers(moved)
	for i, c := range commands {
		if before[i] != after[i] {
			t.Errorf("pos-query %s answers otherwise after the move:\nbefore: %.600s\nafter:  %.600s", strings.Join(c, " "), before[i], after[i])
		}
	}
	// Plain DuckDB over the moved pos.duckdb, opened by a relative path
	// from another directory as well.
	if got := catalogAnswers(t, filepath.Join(moved, catalog.CatalogFile)); got != catBefore {
		t.Errorf("pos.duckdb answers otherwise after the move:\nbefore:\n%s\nafter:\n%s", catBefore, got)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(filepath.Dir(moved)); err != nil {
		t.Fatal(err)
	}
	got := catalogAnswers(t, filepath.Join("lake2", catalog.CatalogFile))
	os.Chdir(wd)
	if got != catBefore {
		t.Errorf("pos.duckdb opened by a relative path answers otherwise:\n%s", got)
	}
	// A load into the moved lake keeps it readable where it is.
	mustSh(t, fmt.Sprintf("pos-normalize -q < %q | pos-scrub -q --key moved-lake-key-of-32-bytes-or-more | pos-load -q --lake %q", stream, moved))
	if got := catalogAnswers(t, filepath.Join(moved, catalog.CatalogFile)); got != catBefore {
		t.Errorf("a reload changed what pos.duckdb answers:\n%s", got)
	}
}

// pos.duckdb attached from another database cannot find its directory by
// itself: the pos_lake variable says where the lake is.
func TestCatalogAttachedWithLakeVariable(t *testing.T) {
	dir := t.TempDir()
	stream := extractFixtures(t, dir, claudecode.Name)
	orig := filepath.Join(dir, "orig")
	mustSh(t, fmt.Sprintf("pos-normalize -q < %q | pos-scrub -q --key lake-test-key-of-32-bytes-or-more | pos-load -q --lake %q", stream, orig))
	want := catalogAnswers(t, filepath.Join(orig, catalog.CatalogFile))
	moved := filepath.Join(dir, "moved")
	mustSh(t, fmt.Sprintf("mv %q %q", orig, moved))
	db, err := sql.Open("duckdb", "?autoinstall_known_extensions=false&autoload_known_extensions=false")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(fmt.Sprintf("ATTACH '%s' AS lake (READ_ONLY)", filepath.Join(moved, catalog.CatalogFile))); err != nil {
		t.Fatal(err)
	}
	var n int64
	err = db.QueryRow("SELECT count(*) FROM lake.messages").Scan(&n)
	if err == nil || !strings.Contains(err.Error(), orig) {
		t.Fatalf("attached without pos_lake: %v (want the error to name the lake's old path %s)", err, orig)
	}
	if _, err := db.Exec(fmt.Sprintf("SET VARIABLE %s = '%s'", catalog.LakeVariable, moved)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("USE lake"); err != nil {
		t.Fatal(err)
	}
	if got := viewDigests(t, db, moved); got != want {
		t.Errorf("attached with pos_lake:\n%s\nwant:\n%s", got, want)
	}
}

type scrubStatusRow struct {
	Table string `json:"table"`
	Scrub string `json:"scrub"`
	Rows  *int64 `json:"rows"`
}

func scrubStatus(t *testing.T, lake string) map[string]bool {
	t.Helper()
	out := mustSh(t, fmt.Sprintf("pos-query status --lake %q --format json 2>/dev/null", lake))
	var rows []scrubStatusRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("pos-query status: %v\n%s", err, out)
	}
	marks := map[string]bool{}
	for _, r := range rows {
		marks[r.Scrub] = true
		marks[r.Table+":"+r.Scrub] = true
	}
	return marks
}

// Records say whether pos-scrub saw them, through pos-embed too; the lake
// counts its rows by mark; pos-query warns of rows loaded without
// pos-scrub, and of a lake an older pos loaded, each with its remedy; and
// pos-load --require-scrubbed refuses records pos-scrub did not see,
// committing nothing.
func TestScrubMarks(t *testing.T) {
	dir := t.TempDir()
	stream := extractFixtures(t, dir)
	lake := func(name string) string { return filepath.Join(dir, name) }
	hasData := func(l string) bool {
		found := false
		filepath.WalkDir(l, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".parquet") && !strings.Contains(p, "_schema") {
				found = true
			}
			return nil
		})
		return found
	}

	// Refused: the load stops at the first record, nothing is committed.
	_, errs, code := sh(t, fmt.Sprintf("pos-normalize -q < %q | pos-embed -q --lake %q | pos-load --require-scrubbed --lake %q", stream, lake("refused"), lake("refused")))
	var loadLines []string
	for _, l := range strings.Split(strings.TrimSpace(errs), "\n") {
		if strings.HasPrefix(l, "pos-load:") {
			loadLines = append(loadLines, l)
		}
	}
	if code != 3 || len(loadLines) != 1 || !regexp.MustCompile(`^pos-load: -:record 1 \(\w+ [^)]*\): not scrubbed \(no pos-scrub mark\): --require-scrubbed refuses it; put pos-scrub before pos-load`).MatchString(loadLines[0]) {
		t.Fatalf("unscrubbed records under --require-scrubbed: exit %d\n%s", code, errs)
	}
	if hasData(lake("refused")) {
		t.Error("a refused load left data in the lake")
	}
	if _, err := os.Stat(filepath.Join(lake("refused"), "_state", "watermarks.json")); err == nil {
		t.Error("a refused load committed watermarks")
	}

	// Scrubbed, through pos-embed: every row of every table says so, and
	// no warning.
	mustSh(t, fmt.Sprintf("pos-normalize -q < %q | pos-scrub -q --key lake-test-key-of-32-bytes-or-more | pos-embed -q --lake %q | pos-load -q --require-scrubbed --lake %q", stream, lake("scrubbed"), lake("scrubbed")))
	m := scrubStatus(t, lake("scrubbed"))
	for _, want := range []string{"raw:secrets", "messages:secrets", "exchanges:secrets", "sessions:secrets", "chunks:secrets"} {
		if !m[want] {
			t.Errorf("scrubbed lake: no %s in pos-query status: %v", want, m)
		}
	}
	if len(m) != 1+countKeys(m, ":") || !m["secrets"] {
		t.Errorf("scrubbed lake: marks %v", m)
	}
	_, errs, _ = sh(t, fmt.Sprintf("pos-query sessions --lake %q", lake("scrubbed")))
	if strings.Contains(errs, "warning") {
		t.Errorf("a scrubbed lake warns: %s", errs)
	}
	db := loadtest.Views(t, lake("scrubbed"))
	if n := count(t, db, "SELECT count(*) FROM messages WHERE extra->>'scrub' IS DISTINCT FROM 'secrets'"); n != 0 {
		t.Errorf("%d messages without the mark in their extra column", n)
	}

	// The old pipe, without pos-scrub: loaded, counted, warned of.
	mustSh(t, fmt.Sprintf("pos-normalize -q < %q | pos-embed -q --lake %q | pos-load -q --lake %q", stream, lake("plain"), lake("plain")))
	if m := scrubStatus(t, lake("plain")); !m["raw:none"] || !m["messages:none"] || m["secrets"] {
		t.Errorf("unscrubbed lake: %v", m)
	}
	_, errs, code = sh(t, fmt.Sprintf("pos-query sessions --lake %q", lake("plain")))
	if code != 0 || !regexp.MustCompile(`(?m)^pos-query: warning: the lake at \S+ holds rows loaded without pos-scrub \(.*raw \d+.*\): any secret in them is stored in clear\npos-query: hint: rebuild it scrubbed: mv \S+ \S+ && pos-extract --lake \S+ \| pos-normalize \| pos-scrub \| pos-embed --lake \S+ \| pos-load --lake \S+ --require-scrubbed`).MatchString(errs) {
		t.Errorf("unscrubbed lake: exit %d, stderr:\n%s", code, errs)
	}

	// --pii and --off say so.
	mustSh(t, fmt.Sprintf("pos-normalize -q < %q | pos-scrub -q --pii --key lake-test-key-of-32-bytes-or-more | pos-load -q --lake %q", stream, lake("pii")))
	if m := scrubStatus(t, lake("pii")); !m["raw:pii"] || m["secrets"] || m["none"] {
		t.Errorf("--pii lake: %v", m)
	}
	mustSh(t, fmt.Sprintf("pos-normalize -q < %q | pos-scrub -q --off | pos-load -q --lake %q", stream, lake("off")))
	if m := scrubStatus(t, lake("off")); !m["raw:off"] || m["secrets"] || m["none"] {
		t.Errorf("--off lake: %v", m)
	}
	if _, errs, _ = sh(t, fmt.Sprintf("pos-query sessions --lake %q", lake("off"))); strings.Contains(errs, "warning") {
		t.Errorf("scrubbing turned off on purpose is warned of as a missing pos-scrub: %s", errs)
	}

	// A lake an older pos loaded records no marks: the warning says what
	// is not known and both remedies; declaring it scrubbed ends it.
	mustSh(t, fmt.Sprintf("cp -a %q %q && rm %q", lake("scrubbed"), lake("old"), filepath.Join(lake("old"), "_state", "scrub.json")))
	_, errs, _ = sh(t, fmt.Sprintf("pos-query recent --lake %q", lake("old")))
	if !regexp.MustCompile(`(?m)^pos-query: warning: the lake at \S+ was loaded by an older pos that did not record whether pos-scrub ran \(.*messages.*\)`).MatchString(errs) ||
		!strings.Contains(errs, "--declare-scrubbed < /dev/null; else rebuild it scrubbed") {
		t.Errorf("old lake: %s", errs)
	}
	mustSh(t, fmt.Sprintf("pos-load -q --lake %q --declare-scrubbed < /dev/null", lake("old")))
	if _, errs, _ = sh(t, fmt.Sprintf("pos-query recent --lake %q", lake("old"))); strings.Contains(errs, "warning") {
		t.Errorf("declared scrubbed, still warned: %s", errs)
	}
	if m := scrubStatus(t, lake("old")); !m["messages:declared"] {
		t.Errorf("declared lake: %v", m)
	}
	// New rows of the old pipe after that are warned of again.
	mustSh(t, fmt.Sprintf("pos-normalize -q < %q | pos-load -q --lake %q", extractFixtures(t, t.TempDir(), gemini.Name), lake("old")))
	if _, errs, _ = sh(t, fmt.Sprintf("pos-query recent --lake %q", lake("old"))); !strings.Contains(errs, "holds rows loaded without pos-scrub") {
		t.Errorf("unscrubbed rows added to a declared lake: %s", errs)
	}
}

func countKeys(m map[string]bool, sub string) int {
	n := 0
	for k := range m {
		if strings.Contains(k, sub) {
			n++
		}
	}
	return n
}

// A writer killed between writing a temporary file in the lake and
// renaming it leaves the file behind; the next pos-load removes it — those
// of this build (named with their writer's pid, which is gone) and an
// older build's (an hour old) — and keeps a live writer's.
func TestStaleTempsRemovedByNextRun(t *testing.T) {
	dir := t.TempDir()
	stream := extractFixtures(t, dir, claudecode.Name)
	lake := filepath.Join(dir, "lake")
	mustSh(t, fmt.Sprintf("pos-normalize -q < %q | pos-scrub -q --key lake-test-key-of-32-bytes-or-more | pos-load -q --lake %q", stream, lake))
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	dead := sleep.Process.Pid
	sleep.Process.Kill()
	sleep.Wait()
	stale := []string{
		filepath.Join(lake, "_state", fmt.Sprintf(".catalog.hash.pid%d-812.tmp", dead)),
		filepath.Join(lake, "_state", ".catalog.hash.3141592.tmp"),
		filepath.Join(lake, "_state", ".watermarks.json.2718281.tmp"),
		filepath.Join(lake, "rollup", ".usage-1795798560810711387.parquet.tmp"),
	}
	live := filepath.Join(lake, "_state", fmt.Sprintf(".catalog.hash.pid%d-1.tmp", os.Getpid()))
	old := time.Now().Add(-3 * time.Hour)
	for _, p := range append(stale, live) {
		if err := os.WriteFile(p, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
		if p != stale[0] && p != live {
			os.Chtimes(p, old, old)
		}
	}
	mustSh(t, fmt.Sprintf("pos-load -q --lake %q < /dev/null", lake))
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("left after the next run: %s", p)
		}
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live writer's temporary file was removed: %v", err)
	}
}

package pipelines_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"
	"github.com/zricethezav/gitleaks/v8/sources"
	_ "modernc.org/sqlite" // Cursor's state.vscdb of the generated home

	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/load/catalog"
	"github.com/pos-lake/pos/transform/scrub/scrubtest"
)

// TestScrubDifferential holds pos-scrub to at least what gitleaks finds.
// gitleaks v8.30.1, with its default configuration and the CLI's default
// decoding depth, scans the native files of the corpus and of a generated
// home in which every credential kind of scrubtest.Kinds (published
// formats, checksums included) is written in every context (.env, shell,
// JSON, YAML, TOML, Python, JavaScript, Go, headers, URLs, command lines,
// prose) and in every place of a session (prompts, thinking, answers, tool
// inputs and outputs, file writes, compaction summaries) of every platform
// in its own format. The real binaries then run the whole pipeline over
// both into a lake, and no file of the lake — read as bytes, and its
// Parquet read through DuckDB — may hold a secret gitleaks found, nor any
// run of 20 characters of a generated credential's random part. The
// ordinary strings that look like secrets (commit SHAs, UUIDs, lockfile
// hashes, go.sum lines, image data, test vectors) must be kept.
func TestScrubDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole pipeline over the corpus")
	}
	base := t.TempDir()
	home := filepath.Join(base, "home")
	seed := uint64(20260301)
	if v := os.Getenv("SCRUB_SEED"); v != "" {
		fmt.Sscan(v, &seed) // another draw of the same set
	}
	h, err := scrubtest.WriteHome(home, seed, writeCursorDB)
	if err != nil {
		t.Fatal(err)
	}
	corpusDir := corpus.Path()
	haveCorpus := true
	if _, err := os.Stat(corpusDir); err != nil {
		t.Log("../shared/corpus is absent: the generated home alone")
		haveCorpus = false
	}

	// 1. What gitleaks finds in the native files.
	findings := gitleaksDir(t, home)
	t.Logf("gitleaks: %d findings in the generated home", len(findings))
	if haveCorpus {
		cf := gitleaksDir(t, corpusDir)
		t.Logf("gitleaks: %d findings in the corpus", len(cf))
		findings = append(findings, cf...)
	}

	// 2. The pipeline, as a user runs it, into one lake.
	lake := filepath.Join(base, "lake")
	pipe := fmt.Sprintf("pos-normalize | pos-scrub -q | pos-embed --provider hash | pos-load -q --lake %q", lake)
	env := []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_CONFIG_HOME=", "CODEX_HOME=", "GEMINI_CLI_HOME=", "CLINE_DIR=", "CLINE_DATA_DIR=", "POS_PUSH_DIR="}
	runs := []string{
		fmt.Sprintf("pos-extract --full -q --lake %q", lake),
		fmt.Sprintf("pos-extract --full -q --lake %q --platform aider --root %q", lake, h.AiderRoot),
	}
	if haveCorpus {
		for _, p := range platforms.All() {
			if dir, ok := corpus.Folder(corpusDir, p); ok {
				runs = append(runs, fmt.Sprintf("pos-extract --full -q --lake %q --platform %s --root %q", lake, p.Name, dir))
			}
		}
	}
	for _, r := range runs {
		if _, errs, code := sh(t, r+" | "+pipe, env...); code != 0 {
			t.Fatalf("%s | …: exit %d\n%s", r, code, errs)
		}
	}

	// 3. The needles: gitleaks' secrets, and every 20-character run of the
	// generated credentials' random parts.
	needles := map[string]string{} // needle -> what it is
	cfg, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	// gitleaks applies a rule to a whole file (100 kB at a time) once its
	// keyword is anywhere in it; pos-scrub reads records one by one, and
	// applies the rules whose matches need not hold their keyword
	// (sourcegraph-access-token takes any 40 hex digits) to every record
	// that holds the keyword. Such a secret must be gone from every row
	// that holds the keyword; it may stay beside rows that do not (a
	// commit SHA in a file that names Sourcegraph elsewhere).
	elsewhere := map[string][]string{} // secret -> the rule's keywords
	elsewhereRules := map[string]int{}
	for _, f := range findings {
		if kw := cfg.Config.Rules[f.RuleID].Keywords; keywordOutside(kw, f.Match) {
			elsewhere[f.Secret] = kw
			elsewhereRules[f.RuleID]++
			continue
		}
		for _, s := range secretForms(f.Secret) {
			if len(s) >= 6 {
				needles[s] = "gitleaks " + f.RuleID + " in " + f.File
			}
		}
	}
	nGitleaks := len(needles)
	t.Logf("%d secrets that gitleaks finds through a keyword outside their match: checked in the rows that hold the keyword %v", len(elsewhere), elsewhereRules)
	byRun := map[string][]int{} // run -> planted instances
	for i, p := range h.Planted {
		for _, part := range p.Cred.Random {
			for _, run := range scrubtest.Runs(part) {
				byRun[run] = append(byRun[run], i)
				needles[run] = "generated " + p.Kind
			}
		}
	}
	found := map[string]string{} // needle -> where
	m := newMatcher(needles)
	db, err := catalog.OpenDB("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var lakeText bytes.Buffer // what DuckDB reads: for the look-alikes
	scan := scrubtest.ScanLake(t, db, lake, func(p string, b []byte) {
		m.scan(b, func(n string) { found[n] = p })
	}, func(p, s string) {
		m.scan([]byte(s), func(n string) { found[n] = p + " (through DuckDB)" })
		if len(elsewhere) > 0 {
			low := strings.ToLower(s)
			for secret, kws := range elsewhere {
				if strings.Contains(s, secret) && slices.ContainsFunc(kws, func(k string) bool { return strings.Contains(low, strings.ToLower(k)) }) {
					t.Errorf("a secret gitleaks finds is in a row that holds its rule's keyword: %s", p)
				}
			}
		}
		lakeText.WriteString(s)
		lakeText.WriteByte('\n')
	})
	t.Logf("lake: %d files, %d Parquet files, %d rows, %d markers; %d needles (%d from gitleaks)", len(scan.Files), len(scan.Parquets), scan.Rows,
		bytes.Count(lakeText.Bytes(), []byte("[REDACTED:")), len(needles), nGitleaks)

	// 4. Nothing survives; recall by kind, platform and place.
	var leaks []string
	missed := map[int]bool{}
	for n, where := range found {
		if ids, ok := byRun[n]; ok {
			for _, i := range ids {
				missed[i] = true
			}
			continue
		}
		leaks = append(leaks, fmt.Sprintf("%s: %s", needles[n], where))
	}
	slices.Sort(leaks)
	for _, l := range leaks {
		t.Errorf("a secret gitleaks finds is in the lake: %s", l)
	}
	type tally struct{ n, found int }
	by := map[string]*tally{}
	count := func(k string, ok bool) {
		if by[k] == nil {
			by[k] = &tally{}
		}
		by[k].n++
		if ok {
			by[k].found++
		}
	}
	kinds := map[string]bool{}
	for i, p := range h.Planted {
		kinds[p.Kind] = true
		ok := !missed[i]
		count("platform "+p.Platform, ok)
		count("place "+p.Place, ok)
		count("context "+p.Context, ok)
		if !ok {
			count("kind "+p.Kind, ok)
			t.Errorf("generated %s (%s, %s/%s) survives in the lake: %q", p.Kind, p.Context, p.Platform, p.Place, p.Text)
		}
	}
	var b strings.Builder
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range by {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "  %-34s %5d %5d %7.2f%%\n", k, by[k].n, by[k].found, 100*float64(by[k].found)/float64(by[k].n))
	}
	recall := float64(len(h.Planted)-len(missed)) / float64(len(h.Planted))
	t.Logf("recall over the generated set: %.2f%% (%d of %d credentials of %d kinds)\n%s", 100*recall, len(h.Planted)-len(missed), len(h.Planted), len(kinds), b.String())
	if len(kinds) < 60 {
		t.Errorf("%d credential kinds, want at least 60", len(kinds))
	}

	// 5. Look-alikes are kept (unless gitleaks itself calls one a secret).
	flagged := map[string]bool{}
	for _, f := range findings {
		flagged[f.Secret] = true
	}
	fp := 0
	for _, l := range h.LookAlikes {
		if flagged[l] {
			t.Logf("gitleaks calls the look-alike %.20s… a secret", l)
			continue
		}
		if !bytes.Contains(lakeText.Bytes(), []byte(l)) {
			fp++
			t.Errorf("look-alike %.24s… was redacted", l)
		}
	}
	t.Logf("false positives among %d look-alikes: %d", len(h.LookAlikes), fp)
}

// gitleaksDir runs gitleaks' detector over a directory as `gitleaks dir`
// does with its defaults: the default configuration, files read in
// gitleaks' own fragments, decoding up to depth 5.
func gitleaksDir(t *testing.T, dir string) []report.Finding {
	t.Helper()
	logging.Logger = zerolog.Nop() // it logs findings, secrets included
	d, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		t.Fatal(err)
	}
	d.MaxDecodeDepth = 5
	fs, err := d.DetectSource(context.Background(), &sources.Files{Config: &d.Config, Path: dir, Sema: d.Sema})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// keywordOutside reports whether a match holds none of its rule's
// keywords: gitleaks found it because a keyword is elsewhere in the file.
func keywordOutside(keywords []string, match string) bool {
	low := strings.ToLower(match)
	for _, k := range keywords {
		if strings.Contains(low, strings.ToLower(k)) {
			return false
		}
	}
	return len(keywords) > 0
}

// secretForms are the forms of a secret found in a native file that must
// not be in the lake: as found (it may hold JSON escapes: the raw layer
// keeps the native JSON), and decoded.
func secretForms(s string) []string {
	out := []string{s}
	if strings.Contains(s, `\`) {
		r := strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\n`, "\n", `\t`, "\t", `\r`, "\r", `\/`, "/")
		for i := 0; i < 2; i++ {
			s = r.Replace(s)
			out = append(out, s)
		}
	}
	return out
}

func writeCursorDB(path string, rows [][2]string) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{`CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`,
		`CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)`} {
		if _, err := db.Exec(q); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if _, err := db.Exec(`INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)`, r[0], r[1]); err != nil {
			return err
		}
	}
	return nil
}

// matcher finds needles in text: one map lookup per byte, by the needles'
// first six bytes.
type matcher struct {
	byPrefix map[string][]string
}

const prefixLen = 6

func newMatcher(needles map[string]string) *matcher {
	m := &matcher{byPrefix: map[string][]string{}}
	for n := range needles {
		m.byPrefix[n[:prefixLen]] = append(m.byPrefix[n[:prefixLen]], n)
	}
	return m
}

func (m *matcher) scan(b []byte, hit func(string)) {
	for i := 0; i+prefixLen <= len(b); i++ {
		for _, n := range m.byPrefix[string(b[i:i+prefixLen])] {
			if bytes.HasPrefix(b[i:], []byte(n)) {
				hit(n)
			}
		}
	}
}

package pipelines_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	aider "github.com/pos-lake/pos/extract/aider/about"
	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	cline "github.com/pos-lake/pos/extract/cline/about"
	codex "github.com/pos-lake/pos/extract/codex/about"
	gemini "github.com/pos-lake/pos/extract/gemini/about"
	"github.com/pos-lake/pos/extract/platforms"
	push "github.com/pos-lake/pos/extract/push/about"
	"github.com/pos-lake/pos/internal/loadtest"
)

// The main job, as the README runs it: on a machine with no agent history
// sync.sh says where it looked and offers the demo, exiting 0.
func TestSyncNoHistory(t *testing.T) {
	home := t.TempDir()
	lake := filepath.Join(t.TempDir(), "lake")
	out, errs, code := sh(t, "./sync.sh", "POS_BIN="+binDir, "HOME="+home, "POS_LAKE="+lake, "XDG_CONFIG_HOME=", "CLAUDE_CONFIG_DIR=", "CODEX_HOME=", "GEMINI_DIR=")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"no agent history found", filepath.Join(home, ".claude"), filepath.Join(home, ".codex"), "make demo"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if out != "" {
		t.Errorf("stdout should be empty, got:\n%s", out)
	}
}

// The demo loads every platform's bundled history, reports the broken
// lines it holds, and prints the report; the lake then holds sessions of
// each platform the demo has a history for.
func TestSyncDemo(t *testing.T) {
	lake := filepath.Join(t.TempDir(), "lake")
	out, errs, code := sh(t, "./sync.sh --demo", "POS_BIN="+binDir, "POS_LAKE="+lake)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"Lake: " + lake, "Recent sessions:", "Tokens by day and model:", "claude-opus-4-6", "Next: "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	// Each broken fixture line is named by path and line.
	if !strings.Contains(errs, "22222222-2222-4222-8222-222222222222.jsonl:5: invalid JSON") {
		t.Errorf("stderr does not name the broken Claude line:\n%s", errs)
	}
	db := loadtest.Views(t, lake)
	// Every platform sync.sh --demo has a bundled history for (Cursor's is
	// a SQLite database, which testdata does not hold).
	want := []string{claudecode.Name, cline.Name, codex.Name, gemini.Name, aider.Name, push.Name}
	slices.Sort(want)
	var got []string
	rows, err := db.Query("SELECT DISTINCT platform FROM sessions ORDER BY platform")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if !slices.Equal(got, want) {
		t.Errorf("sessions of platforms %v, want %v", got, want)
	}
	if n := count(t, db, "SELECT count(*) FROM chunks"); n == 0 {
		t.Error("the demo lake has no chunks: pos-embed did not run")
	}
	// A second run finds nothing new and adds no rows.
	before := tableCounts(t, db)
	if _, errs, code := sh(t, "./sync.sh --demo", "POS_BIN="+binDir, "POS_LAKE="+lake); code != 0 {
		t.Fatalf("second run: exit %d\n%s", code, errs)
	}
	if after := tableCounts(t, loadtest.Views(t, lake)); after != before {
		t.Errorf("second demo run changed the lake: %s, then %s", before, after)
	}
}

// pos-extract --platform all on a machine with none of the tools: exit 0,
// nothing on stdout, one line per platform saying where it looked, then
// the run summary.
func TestExtractNothingInstalled(t *testing.T) {
	home := t.TempDir()
	out, errs, code := sh(t, "pos-extract --platform all", "HOME="+home, "XDG_CONFIG_HOME=", "CLAUDE_CONFIG_DIR=", "CODEX_HOME=", "GEMINI_DIR=", "POS_LAKE="+filepath.Join(home, "lake"))
	if code != 0 || out != "" {
		t.Fatalf("exit %d, stdout %q\n%s", code, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	// One line per registered platform, by name.
	names := slices.Sorted(slices.Values(platforms.Names()))
	if len(lines) != len(names)+1 {
		t.Fatalf("%d stderr lines, want one per platform and the summary:\n%s", len(lines), errs)
	}
	for i, p := range names {
		if !strings.HasPrefix(lines[i], "pos-extract: "+p+": ") || strings.Count(lines[i], home) > 4 {
			t.Errorf("line %d is not a short note for %s: %q", i+1, p, lines[i])
		}
	}
	if !strings.Contains(lines[len(lines)-1], "0 files read") {
		t.Errorf("last line is not the summary: %q", lines[len(lines)-1])
	}
}

// A lake embedded with an older hash model stays on it: a later sync
// with no --model embeds with the lake's model (saying so) instead of
// stopping at pos-load's refusal to mix models.
func TestEmbedFollowsLakeHashModel(t *testing.T) {
	lake := filepath.Join(t.TempDir(), "lake")
	home := filepath.Join("..", "testdata", "claude", "home", ".claude")
	first := `pos-extract -q -p claude_code --root ` + home + ` | pos-normalize -q | pos-embed -q --model pos-hash-v1 | pos-load -q`
	if _, errs, code := sh(t, first, "POS_LAKE="+lake); code != 0 && code != 3 {
		t.Fatalf("first load: exit %d\n%s", code, errs)
	}
	// Everything again (--full), as a sync after an upgrade would bring
	// new lines.
	again := `pos-extract -q --full -p claude_code --root ` + home + ` | pos-normalize -q | pos-embed | pos-load -q`
	_, errs, code := sh(t, again, "POS_LAKE="+lake)
	if code != 0 && code != 3 {
		t.Fatalf("sync with the default model: exit %d\n%s", code, errs)
	}
	if !strings.Contains(errs, "the lake's vectors are pos-hash-v1 (384-d): embedding with it") || !strings.Contains(errs, "model pos-hash-v1 (384-d)") {
		t.Errorf("pos-embed did not follow the lake's model:\n%s", errs)
	}
	db := loadtest.Views(t, lake)
	if n := count(t, db, "SELECT count(*) FROM chunks WHERE model <> 'pos-hash-v1'"); n != 0 {
		t.Errorf("%d chunks of another model in the lake", n)
	}
}

// TestEmptyLakeEnv: POS_LAKE set but empty names no lake: every binary
// takes the default lake, none writes into the working directory.
func TestEmptyLakeEnv(t *testing.T) {
	tmp := t.TempDir()
	work, data := filepath.Join(tmp, "work"), filepath.Join(tmp, "data")
	proj := filepath.Join(tmp, "home", ".claude", "projects", "p")
	os.MkdirAll(work, 0o755)
	os.MkdirAll(proj, 0o755)
	line := `{"type":"user","sessionId":"66666666-6666-4666-8666-666666666666","uuid":"a6000000-0000-4000-8000-000000000001","timestamp":"2026-03-04T09:00:00.000Z","cwd":"/p","message":{"role":"user","content":"hello there"}}` + "\n"
	os.WriteFile(filepath.Join(proj, "66666666-6666-4666-8666-666666666666.jsonl"), []byte(line), 0o644)
	mustSh(t, fmt.Sprintf("cd %q && pos-extract -q --root %q | pos-normalize -q | pos-embed -q | pos-load -q && pos-query sessions --format csv | grep -q 'hello there'",
		work, filepath.Join(tmp, "home", ".claude")), "POS_LAKE=", "XDG_DATA_HOME="+data)
	if ents, _ := os.ReadDir(work); len(ents) != 0 {
		t.Fatalf("the working directory got %s", ents[0].Name())
	}
	for _, p := range []string{"pos.duckdb", "_cache/embeddings", "_state/watermarks.json"} {
		if _, err := os.Stat(filepath.Join(data, "pos", "lake", p)); err != nil {
			t.Fatalf("the default lake: %v", err)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pos-lake/pos/query"
)

// The fixture is one Claude Code session compacted at line 11: before the
// boundary the user asks for load/cache.go and tests, the assistant edits
// load/cache.go, writes load/cache_test.go, reads load/loader.go and
// states two decisions; after it (not in the pack) come docs/CACHE.md and
// config/pos.toml. The summary names five files and three decisions.
const fixtureSession = "33333333-3333-4333-8333-333333333333"

func TestItems(t *testing.T) {
	comps, err := FindCompactions(filepath.Join("testdata", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	if len(comps) != 1 || comps[0].SessionID != fixtureSession || comps[0].Line != 11 {
		t.Fatalf("compactions %+v", comps)
	}
	files, decisions := Items(comps[0].Summary)
	wantFiles := []string{"load/cache.go", "load/cache_test.go", "load/loader.go", "config/pos.toml", "docs/CACHE.md"}
	if !reflect.DeepEqual(files, wantFiles) {
		t.Errorf("files %q, want %q (the transcript pointer after the summary is not one)", files, wantFiles)
	}
	wantDecisions := []string{
		"Chose an LRU cache instead of a plain map because memory must stay bounded.",
		"Evict on insert, not on a timer, so the loader stays single-threaded.",
		"Keep the cache size configurable through config/pos.toml.",
	}
	if !reflect.DeepEqual(decisions, wantDecisions) {
		t.Errorf("decisions %q, want %q", decisions, wantDecisions)
	}
	// Names that are not files, and decision verbs outside decision headings.
	files, decisions = Items("Summary:\n1. Errors:\n   - Called Enum.take/2 and Sandbox.mode in v2.1.39; see lib/a.ex, a.ex and /proc/sys/kernel/random/uuid.\n" +
		"   - Fixed by switching to the table rewrite pattern for migrations.\n   - Ran the tests.\n")
	if want := []string{"lib/a.ex", "/proc/sys/kernel/random/uuid"}; !reflect.DeepEqual(files, want) {
		t.Errorf("files %q, want %q", files, want)
	}
	if want := []string{"Fixed by switching to the table rewrite pattern for migrations."}; !reflect.DeepEqual(decisions, want) {
		t.Errorf("decisions %q, want %q", decisions, want)
	}
}

func TestFindDecisionsThreshold(t *testing.T) {
	d := "Chose an LRU cache instead of a plain map because memory must stay bounded." // 9 content words
	got := FindDecisions([]string{d}, []string{
		"Let's use an LRU cache instead of a plain map because memory must stay bounded.", // 8 of 9
		"A cache for the loader.", // 1 of 9
	})
	if !got[0].Found || got[0].Score != 8.0/9 {
		t.Errorf("reworded decision: %+v", got[0])
	}
	got = FindDecisions([]string{d}, []string{"The LRU cache keeps memory bounded.", "a plain map"}) // 4 of 9 at best: items are not pooled
	if got[0].Found || got[0].Score != 4.0/9 {
		t.Errorf("decision spread over items: %+v", got[0])
	}
}

// TestFixture runs the whole check on the fixture: truncation, the real
// pipeline, the smart pack, the comparison.
func TestFixture(t *testing.T) {
	rep, err := Run(context.Background(), filepath.Join("testdata", "claude"), query.DefaultContextTokens)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sessions) != 1 {
		t.Fatalf("%d sessions", len(rep.Sessions))
	}
	s := rep.Sessions[0]
	found := func(items []Item) (out []string) {
		for _, it := range items {
			if it.Found {
				out = append(out, it.Text)
			}
		}
		return out
	}
	// The pack holds what came before the boundary: the prompts name
	// load/cache.go, the files changed and read add load/cache_test.go and
	// load/loader.go, the decisions and replies state two of the three
	// decisions. What came after the boundary (docs/CACHE.md,
	// config/pos.toml, the configurable size) must never be in it.
	if got, want := found(s.Files), []string{"load/cache.go", "load/cache_test.go", "load/loader.go"}; !reflect.DeepEqual(got, want) {
		t.Errorf("files found %q, want %q", got, want)
	}
	if got, want := found(s.Decisions), []string{
		"Chose an LRU cache instead of a plain map because memory must stay bounded.",
		"Evict on insert, not on a timer, so the loader stays single-threaded.",
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("decisions found %q, want %q", got, want)
	}
	if s.Platform != "claude_code" || s.PackTokens <= 0 || s.PackTokens > query.DefaultContextTokens {
		t.Errorf("platform %q, pack tokens %d", s.Platform, s.PackTokens)
	}
	var out bytes.Buffer
	rep.Print(&out, true)
	// Columns are aligned: compare with runs of spaces made one. The
	// files not in the transcript before the boundary are unreachable (?).
	flat := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []string{"33333333 claude_code 11 3/5 60.0% 2/3 66.7% 0/0 - 0/0 -", "all (1)", "reachable 3/3 100.0% 2/2 100.0%",
		"file + load/cache.go", "file -? docs/CACHE.md"} {
		if !strings.Contains(flat, want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestBadBoundaryLine(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "claude", "projects", "-home-dev-proj", fixtureSession+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	lines[10] = `{"type":"system","subtype":"compact_boundary",` + "\n" // line 11 cut short
	path := filepath.Join(dir, fixtureSession+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = FindCompactions(dir)
	if err == nil || !strings.Contains(err.Error(), path+":11:") {
		t.Fatalf("error %v, want one naming %s:11", err, path)
	}
}

// TestParse reads the pending tasks and errors of a summary from the
// sections Claude Code writes them in, and decisions with the frozen
// patterns: a fix the detector finds today ("fixed … by") is a decision
// of the summary only under a decision heading or by decisionRE.
func TestParse(t *testing.T) {
	s := Parse("Summary:\n4. Errors and fixes:\n   - **Stale build artifacts**: mix compile --force cleared the ordering issue.\n" +
		"5. Current Work:\n   The guard clause still fails to compile in transcript_components.ex here.\n" +
		"7. Pending Tasks:\n   - Add tests for the close review session event\n   - Run credo\n" +
		"Still need to:\n- Update the SessionLive template to pass the new attrs\n")
	if want := []string{"Stale build artifacts: mix compile --force cleared the ordering issue."}; !reflect.DeepEqual(s.Errors, want) {
		t.Errorf("errors %q, want %q", s.Errors, want)
	}
	if want := []string{"Add tests for the close review session event", "Update the SessionLive template to pass the new attrs"}; !reflect.DeepEqual(s.Pending, want) {
		t.Errorf("pending %q, want %q (Run credo is a label)", s.Pending, want)
	}
	if want := []string{"Stale build artifacts: mix compile --force cleared the ordering issue."}; !reflect.DeepEqual(s.Decisions, want) {
		t.Errorf("decisions %q, want %q", s.Decisions, want)
	}
	// Outside a decision heading, a sentence the detector now takes is
	// not a decision of the summary unless the frozen rule says so.
	u := "The redirect loop was worked around with a guard clause in auth."
	if s := Parse("Summary:\n3. Current Work:\n" + u + "\n"); len(s.Decisions) != 0 {
		t.Errorf("decisions %q: the summary's rule moved with the detector", s.Decisions)
	}
}

func TestHeldOut(t *testing.T) {
	// The split is fixed: the corpus's summaries fall the same way on
	// every run, and both halves are used.
	for id, want := range map[string]bool{
		"258c7280-ae70-4798-800f-63464d01a85d": true,
		"4d5611e5-241a-462a-8d15-5122611a9569": false,
		"ae4a77f8-aedd-4bc1-888f-c94edc91af04": false,
	} {
		if HeldOut(id) != want {
			t.Errorf("HeldOut(%s) = %v", id, !want)
		}
	}
}

func TestMarkReachable(t *testing.T) {
	// A unit is reachable when its words stand together in one stretch of
	// the transcript, not when they are scattered over all of it; what the
	// pack carries is reachable by definition.
	unit := "Fixed the parser crash by guarding the empty header."
	scattered := []string{"parser", "crash", "guarding", "empty header"}
	var windows []string
	for _, w := range scattered {
		windows = append(windows, w+" "+strings.Repeat("filler ", 5))
	}
	whole := strings.Join(windows, "\n")
	items := []Item{{Text: unit}}
	markReachable(nil, items, nil, nil, whole, windows)
	if items[0].Reachable {
		t.Error("scattered words made the unit reachable")
	}
	items = []Item{{Text: unit, Found: true}}
	markReachable(nil, items, nil, nil, whole, windows)
	if !items[0].Reachable {
		t.Error("a unit the pack carries is unreachable")
	}
	windows = append(windows, "The parser crash is fixed: guarding the empty header now.")
	items = []Item{{Text: unit}}
	markReachable(nil, items, nil, nil, whole, windows)
	if !items[0].Reachable {
		t.Error("a unit one window holds is unreachable")
	}
}

// TestFindUnitsWordForms: a summary states in its own grammar what the
// session said. The same words inflected otherwise (renamed, renaming;
// functions, function), a function named with its arity (name/1) and a
// compound written apart (table-rewrite, "table rewrite") are the same
// words; a pack item that does not state the unit is still not credited,
// even when it shares the unit's names.
func TestFindUnitsWordForms(t *testing.T) {
	units := []string{
		"Undefined function load_session_data/1: The old load_transcript/1 needed to be renamed to load_session_data/1.",
		"Rewrote the migrations with the table-rewrite pattern because SQLite lacks ALTER COLUMN.",
	}
	carried := []string{
		"undefined functions: load_session_data is called but load_transcript still exists; renaming load_transcript to load_session_data as needed",
		"I need to rewrite these migration files with a table rewrite, since SQLite cannot ALTER a column; the same patterns as before.",
	}
	for i, got := range FindUnits(units, carried) {
		if !got.Found {
			t.Errorf("unit %q reworded only by its grammar not found (score %.2f)", units[i], got.Score)
		}
	}
	// The same names, other statements: not credited.
	other := []string{
		"Read load_session_data/1 and load_transcript/1 in session_live.ex; the tests pass.",
		"Listed the migrations of the project: priv/repo/migrations holds six files.",
	}
	for i, got := range FindUnits(units, other) {
		if got.Found {
			t.Errorf("unit %q credited to an item that does not state it (score %.2f)", units[i], got.Score)
		}
	}
}

// TestControl counts each session's units against the other sessions'
// packs: a unit another pack states is credited there, one it does not
// state is not, and a session's own pack never counts.
func TestControl(t *testing.T) {
	a := SessionResult{
		Decisions: []Item{{Text: "Chose an LRU cache instead of a plain map because memory must stay bounded.", Found: true}},
		Pending:   []Item{{Text: "Add the eviction tests for the loader cache", Found: true}},
		packTexts: []string{"Chose an LRU cache instead of a plain map because memory must stay bounded.", "Add the eviction tests for the loader cache"},
	}
	b := SessionResult{
		Decisions: []Item{{Text: "Switched the migrations to the table rewrite pattern for SQLite."}},
		packTexts: []string{"Going with an LRU cache instead of a map: memory must stay bounded.", "Ran the loader tests."},
	}
	c := control([]SessionResult{a, b})
	if c.Decisions.Found != 1 || c.Decisions.Named != 2 {
		t.Errorf("decisions %+v, want a's credited to b's pack and b's not to a's", c.Decisions)
	}
	if c.Pending.Found != 0 || c.Pending.Named != 1 {
		t.Errorf("pending %+v, want none credited", c.Pending)
	}
}

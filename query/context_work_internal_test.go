package query

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/excerpt"
)

func TestErrorText(t *testing.T) {
	// A failed command: the lines that report the failure, and a
	// diagnostic's place with the line before it, in output order.
	credo := "Checking 88 source files ...\n  Refactoring opportunities\n┃ [F] → Function is too complex (cyclomatic complexity is 13, max is 9).\n" +
		"┃       lib/web/hooks_controller.ex:144:7 #(Web.HooksController.tool_call)\nPlease report incorrect results\nPre-commit validation failed"
	got := errorText(credo, true)
	want := "┃ [F] → Function is too complex (cyclomatic complexity is 13, max is 9).\n┃       lib/web/hooks_controller.ex:144:7 #(Web.HooksController.tool_call)\nPre-commit validation failed"
	if got != want {
		t.Errorf("credo:\n got %q\nwant %q", got, want)
	}
	// A passing run that names failures only to say there are none.
	if got := errorText("Finished in 1.5 seconds\n14 doctests, 65 tests, 0 failures", false); got != "" {
		t.Errorf("passing run: %q", got)
	}
	// A failed call whose output names no failure: its first lines.
	if got := errorText("Exit code 128\nThe current branch has no upstream branch.\nsecond\nthird", true); got != "The current branch has no upstream branch.\nsecond" {
		t.Errorf("failed call: %q", got)
	}
	// A long line is cut, never inside a redaction marker.
	marker := "[REDACTED:aws-access-token:0a1b2c3d]"
	long := "error: " + strings.Repeat("x", errorLineMax-20) + marker + " more"
	if got := errorText(long, true); strings.Contains(got, "[REDACTED:") && !strings.Contains(got, marker) {
		t.Errorf("marker cut: %q", got)
	}
}

func TestEditDiff(t *testing.T) {
	got := editDiff("  defp ok(ids) when length(ids) > 0 do\n    :ok\n  end", "  defp ok([_ | _] = ids) do\n    :ok\n  end")
	want := "    - defp ok(ids) when length(ids) > 0 do\n    + defp ok([_ | _] = ids) do"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if editDiff("", "") != "" {
		t.Error("no edit")
	}
	// The names an edit took out and brought in, wherever they are in it:
	// a function renamed, a helper extracted (prose words and a redaction
	// marker's are no names).
	old := "  def load_transcript(id) do\n    a\n    b\n    c\n    TranscriptRenderer.render(x)\n  end"
	new := "  def load_session_data(id) do\n    a\n    b\n    c\n    build_rows(x) # Rows for the [REDACTED:github-pat:0a1b2c3d] view\n  end\n  defp build_rows(x), do: x"
	got = editDiff(old, new)
	for _, w := range []string{"    names out: load_transcript, TranscriptRenderer.render\n", "    names in: load_session_data, build_rows"} {
		if !strings.Contains(got, w) {
			t.Errorf("edit names: %q lacks %q", got, w)
		}
	}
	if _, names, _ := strings.Cut(got, "names out:"); strings.Contains(names, "REDACTED") || strings.Contains(names, "github") || strings.Contains(names, "Rows") {
		t.Errorf("edit names took a word of prose or a marker: %q", got)
	}
}

func TestDecisionsText(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	found := []foundDecision{
		{ts: t0, text: "Let's use an LRU cache.", conf: 0.9},
		{ts: t0.Add(time.Minute), text: "The issue is that the loader  races.", conf: 0.7},
		{ts: t0.Add(2 * time.Minute), text: "let's use an LRU cache.", conf: 0.95}, // the first again
		{ts: t0.Add(3 * time.Minute), text: "We'll use a ring buffer for the log.", conf: 0.6},
	}
	all := decisionsText(found, 1000)
	want := "- (0.70) The issue is that the loader races.\n- (0.95) Let's use an LRU cache.\n- (0.60) We'll use a ring buffer for the log.\n"
	if all != want {
		t.Errorf("all:\n got %q\nwant %q", all, want)
	}
	// The sentence after a decision says what was done about it.
	withAfter := []foundDecision{{ts: t0, text: "The issue is that the loader races.", after: "Fixed by  taking the lock first.", conf: 0.7}}
	if got, want := decisionsText(withAfter, 1000), "- (0.70) The issue is that the loader races.\n  then: Fixed by taking the lock first.\n"; got != want {
		t.Errorf("with what followed:\n got %q\nwant %q", got, want)
	}
	// Too little room for all: the most certain are kept, in time order.
	room := EstimateTokens(decisionLine(foundDecision{text: "Let's use an LRU cache.", conf: 0.95})) +
		EstimateTokens(decisionLine(foundDecision{text: "The issue is that the loader races.", conf: 0.7}))
	if got, want := decisionsText(found, room), "- (0.70) The issue is that the loader races.\n- (0.95) Let's use an LRU cache.\n"; got != want {
		t.Errorf("ranked:\n got %q\nwant %q", got, want)
	}
}

func TestErrorsItem(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	steps := []step{
		{ts: t0, kind: "tool", tool: "Bash", call: "Bash `mix test`"},
		{ts: t0.Add(time.Second), kind: "error", tool: "Bash", call: "Bash `mix test`", text: "** (RuntimeError) no :secret_key_base configuration found"},
		{ts: t0.Add(2 * time.Second), kind: "said", text: "The test needs the endpoint configured. Let me check the config. More."},
		{ts: t0.Add(3 * time.Second), kind: "error", tool: "Bash", call: "Bash `mix test`", text: "5 tests, 4 failures"},
		{ts: t0.Add(4 * time.Second), kind: "error", tool: "Bash", call: "Bash `mix test`", text: "5 tests, 4 failures"},
		{ts: t0.Add(5 * time.Second), kind: "thought", text: "The sandbox is per process."},
	}
	items := errorsItems(steps, 1000)
	if len(items) != 1 {
		t.Fatalf("items %+v", items)
	}
	it := items[0]
	want := "- Bash `mix test`\n  ✗ ** (RuntimeError) no :secret_key_base configuration found\n  then: The test needs the endpoint configured. Let me check the config. More.\n" +
		"- Bash `mix test`\n  ✗ 5 tests, 4 failures\n  then: The sandbox is per process.\n"
	if it.Text != want || it.Kind != "errors" || it.Priority != 4 {
		t.Errorf("got %+v\nwant text %q", it, want)
	}
	// Room for one: the newest; the older follows at the lowest priority.
	items = errorsItems(steps, 30)
	if len(items) != 2 || !strings.Contains(items[0].Text, "4 failures") || strings.Contains(items[0].Text, "secret_key_base") || items[0].Priority != 4 {
		t.Fatalf("newest first: %+v", items)
	}
	if !strings.Contains(items[1].Text, "secret_key_base") || items[1].Priority != overflowPriority {
		t.Errorf("the older after: %+v", items[1])
	}
}

func TestErrorTextSuccessfulCommand(t *testing.T) {
	// A command that exited 0 but printed a project's own prose (an issue
	// tracker's task) names no failure.
	task := "○ proj-4te.2 · Propagate trace headers\n- If ids cannot be generated, return empty string (do not fail script).\n- Tracing setup failure must degrade gracefully."
	if got := errorText(task, false); got != "" {
		t.Errorf("task text read as an error: %q", got)
	}
	// A passing run whose log names an error struct failed nowhere.
	log := "15:18:53.812 [warning] Malformed JSON: %Jason.DecodeError{position: 0}\n...\n14 doctests, 297 tests, 0 failures"
	if got := errorText(log, false); got != "" {
		t.Errorf("passing run read as an error: %q", got)
	}
	// A failing run piped through tail exits 0: its failures count.
	if got := errorText("....F..\nFinished in 1.9 seconds\n14 doctests, 297 tests, 11 failures", false); got != "14 doctests, 297 tests, 11 failures" {
		t.Errorf("failing run: %q", got)
	}
	// A type checker's place comes with the message after it, before the
	// tool's own counts and bare words.
	dialyzer := "Pre-commit validation failed\nTotal errors: 2, Skipped: 0\ndone in 0m11.96s\nlib/web/trace.ex:58:13:pattern_match\nThe pattern can never match the type.\n\nPattern:\n{:ok, _trace_id}\n:error"
	got := errorText(dialyzer, true)
	if !strings.Contains(got, "lib/web/trace.ex:58:13:pattern_match\nThe pattern can never match the type.") {
		t.Errorf("dialyzer: %q", got)
	}
}

func TestCommandMessage(t *testing.T) {
	commit := "git add -A && git commit -m \"$(cat <<'EOF'\nfeat: retry the fetcher\n\n- Use exponential backoff, not a fixed sleep\n\nCo-Authored-By: Agent <[REDACTED:email:0a1b2c3d]>\nEOF\n)\""
	if got, want := commandMessage(commit), "feat: retry the fetcher\n\n- Use exponential backoff, not a fixed sleep"; got != want {
		t.Errorf("heredoc commit:\n got %q\nwant %q", got, want)
	}
	if got := commandHead(commit); got != "git commit" {
		t.Errorf("head %q", got)
	}
	closeTask := `bd close proj-4te.3 --reason="Implemented controller tracing; the \"false positive\" is acknowledged"`
	if got, want := commandMessage(closeTask), `Implemented controller tracing; the "false positive" is acknowledged`; got != want {
		t.Errorf("closed task: %q", got)
	}
	if got := commandHead(closeTask); got != "bd close proj-4te.3" {
		t.Errorf("head %q", got)
	}
	for _, c := range []string{"git commit -m 'wip'", "mix test --seed 0", "gh pr create --title x"} {
		if got := commandMessage(c); got != "" {
			t.Errorf("%s: %q", c, got)
		}
	}
	// A long message is cut, never inside a redaction marker.
	long := "git commit -m \"" + strings.Repeat("word ", recordMax/5) + "[REDACTED:github-pat:0a1b2c3d] end\""
	if got := commandMessage(long); strings.Contains(got, "[REDACTED") && !strings.Contains(got, "[REDACTED:github-pat:0a1b2c3d]") || len(got) > recordMax+len(excerpt.Ellipsis) {
		t.Errorf("cut: %q", got)
	}
}

func TestRecordsItem(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	steps := []step{
		{ts: t0, kind: "record", call: "git commit", text: "feat: retry the fetcher\n\n- backoff"},
		{ts: t0.Add(time.Minute), kind: "record", call: "git commit --no-verify", text: "feat: retry the fetcher\n\n- backoff, capped"},
		{ts: t0.Add(2 * time.Minute), kind: "record", call: "bd close p-1", text: "Done, tests pass."},
	}
	it, ok := recordsItem(steps, 1000)
	want := "- git commit --no-verify: feat: retry the fetcher\n  \n  - backoff, capped\n- bd close p-1: Done, tests pass.\n"
	if !ok || it.Text != want || it.Kind != "records" || it.Priority != 4 {
		t.Errorf("got %+v\nwant %q", it, want)
	}
}

func TestErrorsItemFix(t *testing.T) {
	// Each error with what was said of it on the way to the edit that
	// followed, and that edit: the fix.
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	steps := []step{
		{ts: at(0), kind: "tool", tool: "Bash", call: "Bash `mix test`", shell: true},
		{ts: at(1), kind: "error", tool: "Bash", call: "Bash `mix test`", text: "** (FunctionClauseError) no function clause matching in Web.Trace.with_span/3"},
		{ts: at(2), kind: "said", text: "The do block is passed as a keyword list, not a function."},
		{ts: at(3), kind: "tool", tool: "Read", call: "Read lib/web/trace.ex"},
		{ts: at(4), kind: "said", text: "Let me rewrite with_span as a macro."},
		{ts: at(5), kind: "tool", tool: "Edit", edit: true, call: "Edit lib/web/trace.ex\n    - def with_span(name, fun) do\n    + defmacro with_span(name, do: block) do"},
		{ts: at(6), kind: "tool", tool: "Bash", call: "Bash `mix test`", shell: true},
		{ts: at(7), kind: "error", tool: "Bash", call: "Bash `mix credo`", text: "┃ [R] Prefer using an implicit try"},
		{ts: at(8), kind: "said", text: "Credo wants an implicit try."},
		{ts: at(9), kind: "tool", tool: "Bash", call: "Bash `mix credo`", shell: true},
		{ts: at(10), kind: "said", text: "Unrelated words."},
		{ts: at(11), kind: "tool", tool: "Edit", edit: true, call: "Edit lib/other.ex"},
	}
	items := errorsItems(steps, 1000)
	if len(items) != 1 {
		t.Fatalf("items %+v", items)
	}
	want := "- Bash `mix test`\n  ✗ ** (FunctionClauseError) no function clause matching in Web.Trace.with_span/3\n" +
		"  then: The do block is passed as a keyword list, not a function.\n  then: Let me rewrite with_span as a macro.\n" +
		"  fix: Edit lib/web/trace.ex\n      - def with_span(name, fun) do\n      + defmacro with_span(name, do: block) do\n" +
		"- Bash `mix credo`\n  ✗ ┃ [R] Prefer using an implicit try\n  then: Credo wants an implicit try.\n"
	if items[0].Text != want {
		t.Errorf("got\n%s\nwant\n%s", items[0].Text, want)
	}
}

func TestEditDiffCodeFirst(t *testing.T) {
	// The lines of code an edit changed come before its doc lines.
	old := "  @doc \"\"\"\n  Run fun within a span and return its result to the caller.\n  \"\"\"\n  def with_span(name, fun) do"
	new := "  @doc \"\"\"\n  Run the block within a span and return its result to the caller.\n  \"\"\"\n  defmacro with_span(name, do: block) do"
	got := editDiff(old, new)
	if !strings.HasPrefix(got, "    - def with_span(name, fun) do\n    + defmacro with_span(name, do: block) do") {
		t.Errorf("got %q", got)
	}
}

func TestDecisionsTextsOverflow(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	found := []foundDecision{
		{ts: t0, text: "Let's use an LRU cache.", conf: 0.9},
		{ts: t0.Add(time.Minute), text: "The issue is that the loader races.", conf: 0.7},
		{ts: t0.Add(2 * time.Minute), text: "We'll use a ring buffer for the log.", conf: 0.6},
	}
	room := EstimateTokens(decisionLine(found[0]))
	text, more := decisionsTexts(found, room)
	if text != "- (0.90) Let's use an LRU cache.\n" {
		t.Errorf("share: %q", text)
	}
	if len(more) != 1 || more[0] != "- (0.70) The issue is that the loader races.\n- (0.60) We'll use a ring buffer for the log.\n" {
		t.Errorf("overflow: %q", more)
	}
}

// TestTrackerHead checks which commands print an issue tracker's tasks,
// on the trackers agents use, and that other commands do not count.
func TestTrackerHead(t *testing.T) {
	for cmd, want := range map[string]string{
		"bd ready": "bd ready",
		"bd sync --from-main 2>&1 && bd ready 2>&1": "bd ready",
		"bd show spotter-gqc.5 2>&1; echo ===":      "bd show spotter-gqc.5",
		"gh issue list --state open":                "gh issue list --state",
		"cd web && glab mr view 12":                 "glab mr view 12",
		"task next":                                 "task next",
		"git commit -m 'show the list'":             "",
		"go test ./...":                             "",
		"echo bd":                                   "",
	} {
		if got := trackerHead(cmd); got != want {
			t.Errorf("trackerHead(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// TestTasksItem checks that the pack carries the tracker's last lists
// before single tasks, each command's latest output once, within the
// limit, in time order.
func TestTasksItem(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 1, 1, 10, m, 0, 0, time.UTC) }
	long := strings.Repeat("detail line of a task\n", 200)
	steps := []step{
		{ts: at(1), kind: "tasks", call: "bd ready", text: "1. [P1] proj-1.2: Trace channel lifecycle (old)"},
		{ts: at(2), kind: "tasks", call: "bd show proj-1.1", text: "proj-1.1 · Add dependencies [OPEN]\n" + long},
		{ts: at(3), kind: "said", text: "Starting on proj-1.1."},
		{ts: at(4), kind: "tasks", call: "bd ready", text: "1. [P1] proj-1.2: Trace channel lifecycle\n2. [P2] proj-1.3: Add regression tests"},
	}
	items := tasksItems(steps, 300)
	if len(items) == 0 {
		t.Fatal("no item")
	}
	it := items[0]
	if it.Priority != 4 || it.Kind != "tasks" || !it.TS.Equal(at(4)) {
		t.Errorf("item %+v", it)
	}
	if strings.Contains(it.Text, "(old)") || !strings.Contains(it.Text, "proj-1.3: Add regression tests") {
		t.Errorf("the latest list only:\n%s", it.Text)
	}
	if i, j := strings.Index(it.Text, "bd show proj-1.1"), strings.Index(it.Text, "bd ready"); i < 0 || j < i {
		t.Errorf("single task first in time order, cut:\n%s", it.Text)
	}
	if EstimateTokens(it.Text) > 300 {
		t.Errorf("%d tokens over the limit", EstimateTokens(it.Text))
	}
	if items := tasksItems(steps[2:3], 300); len(items) > 0 {
		t.Error("an item without tracker output")
	}
}

// TestEditDiffWrittenFile checks that a file written whole shows its
// comment and doc lines, where its reasons are, beside its first code.
func TestEditDiffWrittenFile(t *testing.T) {
	content := "defmodule Repo.Migrations.AddSource do\n  @moduledoc \"\"\"\n  SQLite cannot alter column nullability, so we recreate the table.\n  \"\"\"\n  use Ecto.Migration\n\n  def up do\n    # copy the rows back from the old table\n    execute(\"ALTER TABLE a RENAME TO a_old\")\n  end\nend\n"
	d := editDiff("", content)
	for _, want := range []string{"+ SQLite cannot alter column nullability, so we recreate the table.", "+ # copy the rows back from the old table", "+ defmodule Repo.Migrations.AddSource do"} {
		if !strings.Contains(d, want) {
			t.Errorf("missing %q in\n%s", want, d)
		}
	}
}

// TestCutTaskKeepsRelations checks that a task shown at length keeps, when
// cut, the relations a tracker lists after its description (the children
// of an epic, what a task blocks): the work still open around it.
func TestCutTaskKeepsRelations(t *testing.T) {
	show := "○ proj-4 [EPIC] · Tracing end to end   [● P1 · OPEN]\nDESCRIPTION\n" + strings.Repeat("A long paragraph of the goal.\n", 60) +
		"\nCHILDREN\n  ↳ ○ proj-4.5: Trace LiveView interactions ● P1\n  ↳ ○ proj-4.6: Add regression tests and runbook ● P1\n" +
		"DEPENDS ON\n  → ✓ proj-3: Bootstrap ● P1\nOwner: someone"
	// The output as the session's steps keep it: the relations kept.
	if kept := trackerText(show); !strings.Contains(kept, "proj-4.6: Add regression tests and runbook") || !strings.Contains(kept, "proj-3: Bootstrap") {
		t.Errorf("tracker text lost the relations:\n%s", kept)
	}
	got := cutTask(trackerText(show), trackerShowMax)
	if body, _, _ := strings.Cut(got, "\nCHILDREN"); len(body) > trackerShowMax {
		t.Errorf("description of %d bytes, over %d", len(body), trackerShowMax)
	}
	for _, want := range []string{"proj-4 [EPIC] · Tracing end to end", "CHILDREN", "proj-4.5: Trace LiveView interactions", "proj-4.6: Add regression tests and runbook", "DEPENDS ON", "proj-3: Bootstrap"} {
		if !strings.Contains(got, want) {
			t.Errorf("cut show lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Owner: someone") {
		t.Errorf("a line after the relations counted as one:\n%s", got)
	}
	// Without relations, a cut is the head, as before.
	plain := strings.Repeat("word ", 400)
	if got := cutTask(plain, 100); got != cut(plain, 100) {
		t.Errorf("plain cut %q", got)
	}
}

// TestTasksItemClosedLast checks that the shows of tasks the session
// closed afterwards give way to those of tasks still open.
func TestTasksItemClosedLast(t *testing.T) {
	at := func(m int) time.Time { return time.Date(2026, 1, 1, 10, m, 0, 0, time.UTC) }
	body := strings.Repeat("detail line of a task\n", 30)
	steps := []step{
		{ts: at(1), kind: "tasks", call: "bd show proj-4", text: "proj-4 [EPIC] · Tracing\n" + body},
		{ts: at(2), kind: "tasks", call: "bd show proj-4.1", text: "proj-4.1 · Add dependencies\n" + body},
		{ts: at(3), kind: "tool", shell: true, call: "Bash: Close task `bd close proj-4.1 --reason=\"done\"`"},
		{ts: at(4), kind: "tasks", call: "bd show proj-4.2", text: "proj-4.2 · Propagate headers\n" + body},
		{ts: at(5), kind: "tool", shell: true, call: "Bash `bd update proj-4.2 --status closed && git push`"},
	}
	one := EstimateTokens(fmt.Sprintf("- `bd show proj-4`:\n    %s\n", strings.ReplaceAll(cutTask(steps[0].text, trackerShowMax), "\n", "\n    ")))
	items := tasksItems(steps, one+10)
	if len(items) != 3 {
		t.Fatalf("%d items, want the epic's and one per closed task left over", len(items))
	}
	if it := items[0]; it.Priority != 4 || !strings.Contains(it.Text, "bd show proj-4`") || strings.Contains(it.Text, "proj-4.1 ·") || strings.Contains(it.Text, "proj-4.2 ·") {
		t.Errorf("the open epic should come before the closed tasks:\n%s", it.Text)
	}
	for i, want := range []string{"proj-4.2 ·", "proj-4.1 ·"} {
		if it := items[i+1]; it.Priority != overflowPriority || !strings.Contains(it.Text, want) {
			t.Errorf("the closed tasks follow at the lowest priority, the newest first: %+v", it)
		}
	}
	if got := closedTasks("Bash `bd close a-1 a-2 --reason x; gh issue close 12`"); !reflect.DeepEqual(got, []string{"a-1", "a-2", "12"}) {
		t.Errorf("closedTasks = %q", got)
	}
}

package query

import (
	"strings"
	"testing"
	"time"
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
	it, ok := errorsItem(steps, 1000)
	if !ok {
		t.Fatal("no item")
	}
	want := "- Bash `mix test`\n  ✗ ** (RuntimeError) no :secret_key_base configuration found\n  then: The test needs the endpoint configured. Let me check the config. More.\n" +
		"- Bash `mix test`\n  ✗ 5 tests, 4 failures\n  then: The sandbox is per process.\n"
	if it.Text != want || it.Kind != "errors" || it.Priority != 4 {
		t.Errorf("got %+v\nwant text %q", it, want)
	}
	// Room for one: the newest.
	if it, _ := errorsItem(steps, 30); !strings.Contains(it.Text, "4 failures") || strings.Contains(it.Text, "secret_key_base") {
		t.Errorf("newest first: %q", it.Text)
	}
}

package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/testrec"

	claudecode "github.com/pos-lake/pos/extract/claudecode/about"
	codex "github.com/pos-lake/pos/extract/codex/about"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/schema"
)

// noise is n lines of a build log that went well.
func noise(n, from int) []string {
	var out []string
	for i := from; i < from+n; i++ {
		out = append(out, fmt.Sprintf("compiled package p%d in %d ms, cache %x", i, i%1013, uint32(i)*2654435761))
	}
	return out
}

func TestSelectOutputKeepsErrorWindow(t *testing.T) {
	lines := noise(3000, 0)
	lines = append(lines, "pkg/store/store.go:41:2: undefined: openLedger", "note: see the declaration above")
	lines = append(lines, noise(3000, 3000)...)
	out := strings.Join(lines, "\n")
	got := selectOutput(out, true, errorBudget)
	if len(got) > errorBudget+2*len(gap)+8 {
		t.Errorf("selected %d bytes, budget %d", len(got), errorBudget)
	}
	for _, want := range []string{
		lines[0],    // the head
		lines[2998], // two lines before the error
		"pkg/store/store.go:41:2: undefined: openLedger", "note: see the declaration above",
		lines[3002],         // two lines after the error
		lines[len(lines)-1], // the tail
		"\n" + gap + "\n",   // lines left out
	} {
		if !strings.Contains(got, want) {
			t.Errorf("selection lacks %q", want)
		}
	}
	for _, far := range []string{lines[2996], lines[3004]} {
		if strings.Contains(got, far+"\n") {
			t.Errorf("selection keeps a line far from the error: %q", far)
		}
	}
	// The same output, not failed: its head and tail only.
	ok := selectOutput(out, false, outputBudget)
	if strings.Contains(ok, "openLedger") || !strings.HasPrefix(ok, lines[0]) || !strings.HasSuffix(ok, lines[len(lines)-1]+"\n"+gap) && !strings.HasSuffix(ok, lines[len(lines)-1]) {
		t.Errorf("a successful output's selection is not its head and tail:\n%s", ok)
	}
	if len(ok) > outputBudget+8 {
		t.Errorf("selected %d bytes, budget %d", len(ok), outputBudget)
	}
	// Short outputs are kept whole.
	if s := "Exit code 1\nboom"; selectOutput(s, true, errorBudget) != s {
		t.Errorf("a short output was cut: %q", selectOutput(s, true, errorBudget))
	}
}

// TestSelectOutputMarkers: cutting long lines never splits a redaction
// marker.
func TestSelectOutputMarkers(t *testing.T) {
	marker := "[REDACTED:github-pat:0123abcd]"
	for pad := maxLine - len(marker) - 4; pad <= maxLine+4; pad++ {
		line := strings.Repeat("x", pad) + marker + strings.Repeat("y", 50)
		out := strings.Repeat(line+"\n", 200) + "error: boom"
		for _, failed := range []bool{true, false} {
			got := selectOutput(out, failed, errorBudget)
			for i := 0; ; {
				k := strings.Index(got[i:], excerpt.MarkerPrefix)
				if k < 0 {
					break
				}
				i += k
				if excerpt.MarkerLen(got[i:]) == 0 {
					t.Fatalf("pad %d: a marker was split: %q", pad, got[i:min(len(got), i+40)])
				}
				i++
			}
		}
	}
}

func TestFailed(t *testing.T) {
	for _, c := range []struct {
		tool, out string
		want      bool
	}{
		{"Bash", "Exit code 2\n\n> tsc\nsrc/app.ts(48,27): error TS2339: Property 'x' does not exist", true},
		{"exec_command", "Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 1\nOutput:\nboom", true},
		{"exec_command", "Chunk ID: 1\nWall time: 0.2 seconds\nProcess exited with code 0\nOutput:\nok", false},
		{"run_terminal_cmd", "$ pm install\nbash: pm: command not found", true},
		{"Bash", "=== RUN   TestX\n--- FAIL: TestX (0.00s)\nFAIL\tpkg\t0.01s", true},
		{"Bash", "Traceback (most recent call last):\n  File \"x.py\", line 1\nZeroDivisionError: division by zero", true},
		{"Bash", "..F.\n1 failed, 3 passed in 0.12s", true},
		{"Bash", "ok  \tpkg\t0.01s\n0 failed", false},
		{"Bash", "| 1.7.4 | Min limit | Limit < 1 returns 400 error |\n- [ ] 404 errors work correctly", false},
		{"Bash", "**(note)** all good", false},
		{"Bash", "     ** (RuntimeError) no :secret_key_base", true},
		{"Read", "     1→func f() error {\n     2→\tpanic: (\"x\")\n     3→\treturn fmt.Errorf(\"failed\")", false},
		{"Edit", "<tool_use_error>String to replace not found in file.</tool_use_error>", true},
		{"Task", "Here is the report. The build failed because of a missing import.", false},
		{"", "Error: ENOENT: no such file or directory", true},
		{"list_dir", "Could not resolve URI: Error: file missing", false},
	} {
		if got := Failed(c.tool, c.out); got != c.want {
			t.Errorf("Failed(%q, %q) = %v, want %v", c.tool, c.out, got, c.want)
		}
	}
}

// toolStream is a normalized stream in the order pos-normalize writes a
// Claude Code exchange: the prompt, a tool's result before the assistant
// message that called it (which names the tool), the exchange after its
// messages; then a second exchange of the same session running the same
// failing command again, and a third session with the same output.
func toolStream(t *testing.T, out string) []byte {
	t.Helper()
	ts := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	var b []byte
	add := func(r *schema.Record) {
		r.Schema, r.Platform, r.TS = schema.Version, claudecode.Name, ts
		ts = ts.Add(time.Second)
		b = append(schema.AppendRecord(b, r), '\n')
	}
	in, _ := json.Marshal(map[string]string{"command": "go test ./store", "description": "run the tests"})
	exchange := func(session, n string) {
		prompt := "p" + session + n
		add(&schema.Record{Kind: schema.KindMessage, ID: prompt, SessionID: session, Role: schema.RoleUser,
			ContentType: schema.ContentText, Text: "run the store tests " + n})
		add(&schema.Record{Kind: schema.KindMessage, ID: "r" + session + n, SessionID: session, Role: schema.RoleTool,
			ContentType: schema.ContentToolResult, Tools: []schema.Tool{{CallID: "call" + session + n, Output: out}}})
		add(&schema.Record{Kind: schema.KindMessage, ID: "a" + session + n, SessionID: session, Role: schema.RoleAssistant,
			ContentType: schema.ContentToolUse, Tools: []schema.Tool{{Name: "Bash", CallID: "call" + session + n, Input: in}}})
		add(&schema.Record{Kind: schema.KindExchange, ID: schema.ExchangeID(claudecode.Name, prompt), SessionID: session,
			ParentID: prompt, Role: schema.RoleUser, ContentType: schema.ContentExchange, Text: "run the store tests " + n,
			Exchange: &schema.Exchange{Number: 1, Prompt: "run the store tests " + n, PromptID: prompt}})
	}
	exchange("s1", "1")
	exchange("s1", "2")
	exchange("s2", "1")
	return b
}

func embedStream(t *testing.T, in []byte, opt Options) ([]*schema.Record, Stats) {
	t.Helper()
	p, err := NewProvider(Config{})
	if err != nil {
		t.Fatal(err)
	}
	opt.Provider = p
	var out bytes.Buffer
	st, err := Embed(context.Background(), bytes.NewReader(in), &out, opt)
	if err != nil {
		t.Fatal(err)
	}
	return testrec.Decode(t, &out), st
}

// TestEmbedToolUnits: a tool's command and its failed output become chunks
// of types command and tool_error, named after the tool whose call came
// after the result, linked to their exchange; the same command and output
// again in the session are not indexed twice, in another session they
// are.
func TestEmbedToolUnits(t *testing.T) {
	out := "Exit code 1\n--- FAIL: TestLedger (0.00s)\n    store_test.go:12: ledger balance 7, want 9\nFAIL\tstore\t0.01s"
	recs, st := embedStream(t, toolStream(t, out), Options{})
	type key struct{ session, ctype, parent, tool string }
	got := map[key]int{}
	for _, r := range recs {
		if r.Kind != schema.KindChunk || !IsToolType(r.ContentType) {
			continue
		}
		tool := ""
		if len(r.Tools) == 1 {
			tool = r.Tools[0].Name
		}
		got[key{r.SessionID, r.ContentType, r.ParentID, tool}]++
		if r.ContentType == schema.ContentToolError && !strings.Contains(r.Text, "ledger balance 7, want 9") {
			t.Errorf("the tool_error chunk lacks the failure: %q", r.Text)
		}
		if r.ContentType == schema.ContentCommand && r.Text != "go test ./store" {
			t.Errorf("the command chunk is %q", r.Text)
		}
		if len(r.Chunk.Embedding) == 0 {
			t.Errorf("chunk %s has no vector", r.ID)
		}
	}
	ex := func(s, n string) string { return schema.ExchangeID(claudecode.Name, "p"+s+n) }
	want := map[key]int{
		{"s1", schema.ContentCommand, ex("s1", "1"), "Bash"}:   1,
		{"s1", schema.ContentToolError, ex("s1", "1"), "Bash"}: 1,
		{"s2", schema.ContentCommand, ex("s2", "1"), "Bash"}:   1,
		{"s2", schema.ContentToolError, ex("s2", "1"), "Bash"}: 1,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("tool chunks (session, type, parent, tool):\n got %v\nwant %v", got, want)
	}
	if st.Units != 4+6 { // 4 tool units; 3 exchanges and 3 prompts
		t.Errorf("%d units, want 10", st.Units)
	}
	// Every record is still there, and chunks come after their exchange.
	if n := len(recs) - int(st.Chunks); n != 12 {
		t.Errorf("%d records besides chunks, want the 12 read", n)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Kind == schema.KindExchange {
			seen[r.ID] = true
		}
		if r.Kind == schema.KindChunk && IsToolType(r.ContentType) && !seen[r.ParentID] {
			t.Errorf("chunk %s comes before its exchange %s", r.ID, r.ParentID)
		}
	}
	// --types without the tool types: none of them.
	recs, _ = embedStream(t, toolStream(t, out), Options{Types: []string{schema.ContentExchange}})
	for _, r := range recs {
		if r.Kind == schema.KindChunk && r.ContentType != schema.ContentExchange {
			t.Errorf("--types exchange made a %s chunk", r.ContentType)
		}
	}
}

// TestEmbedToolOutputBounded: a 2 MB log is a few chunks, its error among
// them, and an output outside any exchange keeps its message as parent.
func TestEmbedToolOutputBounded(t *testing.T) {
	lines := noise(20000, 0)
	mid := len(lines) / 2
	lines[mid] = "panic: runtime error: index out of range [5] with length 3"
	log := strings.Join(lines, "\n")
	for len(log) < 2<<20 {
		log += "\n" + strings.Join(noise(1000, len(log)), "\n")
	}
	var b []byte
	ts := time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC)
	r := &schema.Record{Schema: schema.Version, Kind: schema.KindMessage, ID: "m1", Platform: codex.Name, SessionID: "s",
		TS: ts, Role: schema.RoleTool, ContentType: schema.ContentToolResult,
		Tools: []schema.Tool{{Name: "exec_command", CallID: "c1", Output: log}}}
	b = append(schema.AppendRecord(b, r), '\n')
	recs, st := embedStream(t, b, Options{})
	var chunks []*schema.Record
	for _, r := range recs {
		if r.Kind == schema.KindChunk {
			chunks = append(chunks, r)
		}
	}
	if len(chunks) == 0 || len(chunks) > 6 {
		t.Fatalf("a 2 MB log made %d chunks, want 1 to 6", len(chunks))
	}
	var all strings.Builder
	for _, c := range chunks {
		all.WriteString(c.Text + "\n")
		if c.ContentType != schema.ContentToolError || c.ParentID != "m1" || c.Tools[0].Name != "exec_command" {
			t.Errorf("chunk: type %s parent %s tools %v", c.ContentType, c.ParentID, c.Tools)
		}
	}
	if !strings.Contains(all.String(), lines[mid]) || !strings.Contains(all.String(), lines[mid-2]) || !strings.Contains(all.String(), lines[mid+2]) {
		t.Errorf("the chunks lack the panic and its surroundings")
	}
	if all.Len() > errorBudget+1024 {
		t.Errorf("the chunks hold %d bytes of a 2 MB log", all.Len())
	}
	if st.Units != 1 {
		t.Errorf("%d units, want 1", st.Units)
	}
}

// TestOutputText: a JSON object output (Cursor's) is indexed by what it
// says, not its JSON.
func TestOutputText(t *testing.T) {
	got := outputText(`{"output":"$ pm install\nbash: pm: command not found","notInterrupted":true}`)
	if got != "$ pm install\nbash: pm: command not found" {
		t.Errorf("outputText = %q", got)
	}
	if s := `{"a":1}`; outputText(s) != s {
		t.Errorf("an object without text members changed: %q", outputText(s))
	}
	if s := "plain"; outputText(s) != s {
		t.Errorf("plain text changed")
	}
}

// FuzzSelectOutput: whatever the output, the selection is bounded, every
// line of it is a line of the output (or the start of one, or "…"), no
// redaction marker is split, and it says whether it failed alike twice.
func FuzzSelectOutput(f *testing.F) {
	f.Add("Exit code 1\nerror: boom", true)
	f.Add(strings.Repeat("x", 390)+"[REDACTED:aws-key:0123abcd] tail\n"+strings.Repeat("ok\n", 400), false)
	f.Add("a\r\nb\rc\n\n\nerror TS1: x\n"+strings.Repeat("line\n", 2000), true)
	f.Add(`{"output":"$ make\nmake: *** [all] Error 2","exit_code":2}`, false)
	f.Fuzz(func(t *testing.T, out string, failed bool) {
		for _, budget := range []int{commandBudget, outputBudget, errorBudget} {
			got := selectOutput(out, failed, budget)
			if len(got) > 2*budget+32 && len(got) > len(strings.TrimSpace(out)) {
				t.Fatalf("selected %d bytes of %d, budget %d", len(got), len(out), budget)
			}
			for _, l := range strings.Split(got, "\n") {
				l = strings.TrimSuffix(l, gap)
				if l != "" && !strings.Contains(out, l) {
					t.Fatalf("line %q is not the output's", l)
				}
			}
			if n, m := len(excerpt.Markers(got)), strings.Count(got, excerpt.MarkerPrefix); n != m && len(excerpt.Markers(out)) == strings.Count(out, excerpt.MarkerPrefix) {
				t.Fatalf("a marker was split: %q", got)
			}
		}
		if Failed("Bash", out) != Failed("Bash", out) {
			t.Fatal("Failed is not deterministic")
		}
		_ = outputText(out)
	})
}

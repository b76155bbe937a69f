package cline

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract/extracttest"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/internal/excerpt"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/normalize"
)

var update = flag.Bool("update", false, "rewrite golden files")

// The fixture's task folders (testdata/cline/home).
const (
	taskA = "1772700000000"                        // Cline 3.5x, compact, joined times
	taskB = "5f0c2d1e-8b4a-4c3e-9d2f-1a2b3c4d5e6f" // Roo Code, pretty-printed, ts per message
	taskC = "1772720000000"                        // Kilo Code, tool_result blocks, no ui file
	taskD = "1772730000000"                        // malformed files
	taskE = "1772740000000"                        // orphan ui file in ~/.cline/data
)

// fixture copies testdata/cline/home to a temp dir with fixed mtimes, so
// outputs are reproducible, and returns it (the home directory).
func fixture(t *testing.T) string {
	dst := t.TempDir()
	extracttest.CopyTree(t, extracttest.Testdata("cline", "home"), dst, time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC))
	return dst
}

func taskDirOf(home, id string) string {
	switch id {
	case taskA, taskD:
		return filepath.Join(home, ".config", "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "tasks", id)
	case taskB:
		return filepath.Join(home, ".config", "Cursor", "User", "globalStorage", "rooveterinaryinc.roo-cline", "tasks", id)
	case taskC:
		return filepath.Join(home, ".config", "VSCodium", "User", "globalStorage", "kilocode.kilo-code", "tasks", id)
	}
	return filepath.Join(home, ".cline", "data", "tasks", id)
}

var find = extracttest.Find

func messagesOf(recs []*schema.Record, session string) []*schema.Record {
	return find(recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage && r.SessionID == session })
}

func sessionOf(t *testing.T, recs []*schema.Record, session string) (*schema.Record, map[string]any) {
	t.Helper()
	s := find(recs, func(r *schema.Record) bool { return r.Kind == schema.KindSession && r.SessionID == session })
	if len(s) != 1 {
		t.Fatalf("%d session records for %s", len(s), session)
	}
	var meta map[string]any
	if err := json.Unmarshal(s[0].Meta, &meta); err != nil {
		t.Fatalf("session meta %s: %v", s[0].Meta, err)
	}
	return s[0], meta
}

func metaOf(t *testing.T, r *schema.Record) map[string]any {
	t.Helper()
	m := map[string]any{}
	if len(r.Meta) > 0 {
		if err := json.Unmarshal(r.Meta, &m); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

func ms(v int64) time.Time { return time.UnixMilli(v).UTC() }

// checkStream checks what every run must hold: each native element is a
// raw record with its provenance and id, each message follows the raw
// record of its element.
func checkStream(t *testing.T, recs []*schema.Record) {
	t.Helper()
	for i, r := range recs {
		switch r.Kind {
		case schema.KindRaw:
			if len(r.Raw) == 0 || r.Source == nil || r.Source.Key == "" || r.ID != schema.RawID(r) || r.TS.IsZero() {
				t.Fatalf("raw record without raw, provenance, id or time: %+v", r)
			}
			if bytes.ContainsAny(r.Raw, "\n\r") || !json.Valid(r.Raw) {
				t.Fatalf("raw is not one line of JSON: %s", r.Raw)
			}
		case schema.KindMessage:
			j := i - 1
			for j >= 0 && recs[j].Kind == schema.KindMessage && *recs[j].Source == *r.Source {
				j--
			}
			if len(r.Raw) > 0 || j < 0 || recs[j].Kind != schema.KindRaw || *recs[j].Source != *r.Source {
				t.Fatalf("message %s (%s) does not follow its element's raw record", r.ID, r.Source.Key)
			}
			if r.ID == "" || r.TS.IsZero() || r.TSPrecision == "" || r.Completeness == "" {
				t.Fatalf("message without id, time or completeness: %+v", r)
			}
		}
	}
}

func TestFixture(t *testing.T) {
	home := fixture(t)
	res := extracttest.Run(t, Adapter{}, extract.Options{Home: home})
	checkStream(t, res.Recs)

	// The broken api file is reported once, at the element where its JSON
	// breaks; the half-written ui file is not an error, only left for later.
	// Elements that are JSON but no object (a number, an array for the
	// metadata) are named: they are kept in the raw layer only.
	if len(res.Skips) != 3 || !strings.HasSuffix(res.Skips[2].Path, filepath.Join(taskD, apiFile)) || res.Skips[2].Key != apiFile+"[3]" {
		t.Fatalf("skips: %v", res.Skips)
	}
	if !strings.Contains(res.Skips[2].Error(), apiFile+":"+apiFile+"[3]: invalid JSON") {
		t.Fatalf("diagnostic %q", res.Skips[2].Error())
	}
	for i, want := range []string{metaFile + ":" + metaFile + ": an array, not an object: kept in the raw layer only",
		apiFile + ":" + apiFile + "[1]: a number, not an object: kept in the raw layer only"} {
		if !strings.HasSuffix(res.Skips[i].Error(), want) {
			t.Errorf("diagnostic %q, want %q", res.Skips[i].Error(), want)
		}
	}
	if got := res.Stats.Partial.Load(); got != 1 {
		t.Fatalf("partial files %d", got)
	}
	for _, r := range res.Recs {
		if r.Source != nil && (strings.Contains(r.Source.Path, "taskHistory") || strings.Contains(r.Source.Path, "focus_chain")) {
			t.Fatalf("read %s, which is not a history file", r.Source.Path)
		}
	}

	// One raw record per element of every file.
	perFile := map[string]int{}
	for _, r := range res.Recs {
		if r.Kind == schema.KindRaw {
			rel, _ := filepath.Rel(home, r.Source.Path)
			perFile[filepath.Base(filepath.Dir(rel))+"/"+filepath.Base(rel)]++
		}
	}
	want := map[string]int{
		taskA + "/" + apiFile: 8, taskA + "/" + uiFile: 20, taskA + "/" + metaFile: 1,
		taskB + "/" + apiFile: 7, taskB + "/" + uiFile: 9, taskB + "/" + metaFile: 1,
		taskC + "/" + apiFile: 4,
		taskD + "/" + apiFile: 3, taskD + "/" + uiFile: 1, taskD + "/" + metaFile: 1,
		taskE + "/" + uiFile: 13,
	}
	for k, n := range want {
		if perFile[k] != n {
			t.Errorf("%s: %d raw records, want %d", k, perFile[k], n)
		}
	}
	if len(perFile) != len(want) {
		t.Errorf("raw records per file: %v", perFile)
	}

	t.Run("cline", func(t *testing.T) { checkTaskA(t, res.Recs) })
	t.Run("roo", func(t *testing.T) { checkTaskB(t, home, res.Recs) })
	t.Run("kilo", func(t *testing.T) { checkTaskC(t, res.Recs) })
	t.Run("malformed", func(t *testing.T) { checkTaskD(t, res.Recs) })
	t.Run("orphan", func(t *testing.T) { checkTaskE(t, res.Recs) })
	extracttest.GoldenRecords(t, extracttest.Testdata("cline", "extract.golden.ndjson"), res.Recs, home, *update)
}

func checkTaskA(t *testing.T, recs []*schema.Record) {
	const t0 = 1772700000000
	m := messagesOf(recs, taskA)
	var got []string
	for _, r := range m {
		got = append(got, r.Role+"/"+r.ContentType)
	}
	wantKinds := []string{"user/text", "assistant/text", "tool/tool_result", "assistant/text", "tool/tool_result", "user/text",
		"assistant/text", "user/text", "assistant/text"}
	if !slices.Equal(got, wantKinds) {
		t.Fatalf("messages %v\nwant %v", got, wantKinds)
	}
	// The task as typed, without the environment details and reminders;
	// its time is the ui row where the user typed it.
	if m[0].Text != "Fix the login redirect loop\nIt happens right after the OAuth callback." || !m[0].TS.Equal(ms(t0)) ||
		m[0].TSPrecision != schema.PrecisionDerived || m[0].Cwd != "/home/dev/webapp" || m[0].Project != "/home/dev/webapp" {
		t.Fatalf("task prompt: %+v", m[0])
	}
	// The answer streamed from the first ui row of its place in the
	// history; its request's tokens and cost, relative paths resolved.
	a := m[1]
	if !a.TS.Equal(ms(t0+2000)) || a.Model != "claude-sonnet-4-5-20250929" || a.Thinking != "Look at the auth module first." ||
		a.Text != "Let me read the auth code." || len(a.Tools) != 2 || a.Tools[0].CallID != "toolu_A1" ||
		*a.Usage != (schema.Usage{Input: 100, Output: 50, CacheCreation: 1000}) ||
		!slices.Equal(a.Files, []string{"/home/dev/webapp/src/auth.ts", "/home/dev/webapp/src/login.ts"}) {
		t.Fatalf("assistant: %+v", a)
	}
	if mm := metaOf(t, a); mm["cost"] != 0.01 || mm["mode"] != "act" || mm["provider"] != "anthropic" {
		t.Fatalf("assistant meta %v", mm)
	}
	// Text results become tool results paired with their calls.
	tr := m[2]
	if tr.ParentID != a.ID || len(tr.Tools) != 2 || tr.Tools[0].Name != "read_file" || tr.Tools[0].CallID != "toolu_A1" ||
		!strings.HasPrefix(tr.Tools[0].Output, "export function auth()") || tr.Tools[0].IsError ||
		tr.Tools[1].CallID != "toolu_A2" || !tr.Tools[1].IsError || !tr.TS.Equal(ms(t0+9000)) {
		t.Fatalf("tool results: %+v", tr)
	}
	// A failed attempt and its retry both count, once, on the answer.
	if u := m[3].Usage; *u != (schema.Usage{Input: 20, Output: 80, CacheCreation: 200, CacheRead: 1000}) {
		t.Fatalf("retried request usage %+v", u)
	}
	if mm := metaOf(t, m[3]); mm["cost"] != 0.021 || mm["requests"] != 2.0 {
		t.Fatalf("retried request meta %v", mm)
	}
	// A denial with feedback is a tool result and then a prompt.
	if !m[4].Tools[0].IsError || m[4].Tools[0].CallID != "toolu_A3" || m[5].Text != "Use a guard clause instead" ||
		m[5].ParentID != m[4].ID || m[5].ID == m[4].ID || !m[5].TS.Equal(ms(t0+30000)) {
		t.Fatalf("feedback: %+v %+v", m[4], m[5])
	}
	// attempt_completion's result is the assistant's prose.
	if m[6].Text != "The redirect loop is fixed with a guard clause in src/auth.ts." || m[6].ContentType != schema.ContentText {
		t.Fatalf("completion: %+v", m[6])
	}
	// New instructions given on resuming are a prompt.
	if m[7].Text != "Also add a test for it" || !m[7].TS.Equal(ms(t0+201000)) {
		t.Fatalf("resumption: %+v", m[7])
	}
	if m[8].Model != "claude-opus-4-5-20251101" || metaOf(t, m[8])["mode"] != "plan" {
		t.Fatalf("model switch: %+v", m[8])
	}
	s, meta := sessionOf(t, recs, taskA)
	if excerpt.Title(s) != "Fix the login redirect loop" || s.Session.TitleSource != "prompt" || s.Completeness != schema.CompleteFull ||
		!slices.Equal(s.Files, []string{"/home/dev/webapp/src/auth.ts", "/home/dev/webapp/src/login.ts"}) ||
		!s.TS.Equal(ms(t0+300000)) {
		t.Fatalf("session: %+v", s)
	}
	if meta["fork"] != "cline" || meta["extension"] != "saoudrizwan.claude-dev" || meta["host"] != "Code" ||
		meta["version"] != "3.51.0" || meta["cost"] != 0.0665 || meta["api_requests"] != 6.0 || meta["mode"] != "plan" ||
		len(meta["files_in_context"].([]any)) != 2 {
		t.Fatalf("session meta %v", meta)
	}
	// The request cancelled after the last answer is in no message.
	if u, _ := meta["unattributed_usage"].(map[string]any); u["input"] != 5.0 {
		t.Fatalf("unattributed usage %v", meta["unattributed_usage"])
	}
}

func checkTaskB(t *testing.T, home string, recs []*schema.Record) {
	const t1 = 1772710000000
	// The pretty-printed files: every offset points at its element.
	for _, name := range []string{apiFile, uiFile} {
		path := filepath.Join(taskDirOf(home, taskB), name)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(b, &elems); err != nil {
			t.Fatal(err)
		}
		raws := find(recs, func(r *schema.Record) bool { return r.Kind == schema.KindRaw && r.Source.Path == path })
		if len(raws) != len(elems) {
			t.Fatalf("%s: %d raw records for %d elements", name, len(raws), len(elems))
		}
		for i, r := range raws {
			var c bytes.Buffer
			json.Compact(&c, elems[i])
			if b[r.Source.Offset] != '{' || !bytes.Equal(r.Raw, c.Bytes()) || r.Source.Key != key(name, i) {
				t.Fatalf("%s element %d: offset %d, raw %.80s", name, i, r.Source.Offset, r.Raw)
			}
		}
	}
	m := messagesOf(recs, taskB)
	if len(m) != 7 {
		t.Fatalf("%d messages", len(m))
	}
	for i, r := range m {
		if r.TSPrecision != schema.PrecisionExact {
			t.Fatalf("message %d: %s time", i, r.TSPrecision)
		}
	}
	// XML tool calls and <thinking> come out of the text; the result's
	// output follows its header block.
	if m[1].Thinking != "Find the loader first." || len(m[1].Tools) != 1 || m[1].Tools[0].Name != "read_file" ||
		string(m[1].Tools[0].Input) != `{"path":"cfg/load.py"}` || m[1].Text != "" || m[1].ContentType != schema.ContentToolUse ||
		!slices.Equal(m[1].Files, []string{"/home/dev/tool/cfg/load.py"}) || m[1].Cwd != "/home/dev/tool" {
		t.Fatalf("xml tool call: %+v", m[1])
	}
	if m[2].Tools[0].Name != "read_file" || !strings.Contains(m[2].Tools[0].Output, "def load(): pass") {
		t.Fatalf("split result: %+v", m[2].Tools)
	}
	if m[3].Text != "Renamed it.\n\nRenamed load to read_config in cfg/load.py." {
		t.Fatalf("xml completion: %q", m[3].Text)
	}
	// Rows without conversationHistoryIndex give their tokens to the next
	// answer in time.
	if m[1].Usage.Input != 50 || m[3].Usage.Input != 60 || m[4].Usage.Input != 70 || m[6].Usage.Input != 80 {
		t.Fatalf("usage by time: %+v %+v %+v %+v", m[1].Usage, m[3].Usage, m[4].Usage, m[6].Usage)
	}
	if m[4].Role != schema.RoleSystem || m[4].ContentType != schema.ContentCompactSummary || !m[4].TS.Equal(ms(t1+31000)) {
		t.Fatalf("condensed summary: %+v", m[4])
	}
	if m[5].Role != schema.RoleUser || m[5].Text != "Now update the docs too" {
		t.Fatalf("plain prompt: %+v", m[5])
	}
	if _, meta := sessionOf(t, recs, taskB); meta["fork"] != "roo-code" || meta["host"] != "Cursor" {
		t.Fatalf("roo session meta %v", meta)
	}
}

func checkTaskC(t *testing.T, recs []*schema.Record) {
	m := messagesOf(recs, taskC)
	if len(m) != 4 {
		t.Fatalf("%d messages", len(m))
	}
	// No ui file: the api metrics give the tokens; a Windows working
	// directory resolves in its own style.
	if *m[1].Usage != (schema.Usage{Input: 500, Output: 40, CacheRead: 300}) || m[1].Model != "gpt-5" ||
		!slices.Equal(m[1].Files, []string{`C:\Users\dev\proj\src\main.go`}) || metaOf(t, m[1])["cost"] != 0.004 {
		t.Fatalf("metrics: %+v", m[1])
	}
	if m[0].Text != "List the TODOs" {
		t.Fatalf("prompt with an image: %q", m[0].Text)
	}
	tr := m[2]
	if len(tr.Tools) != 2 || tr.Tools[0].Name != "search_files" || tr.Tools[0].CallID != "call_1" || tr.Tools[0].Output != "src/main.go:3: // TODO: flags" ||
		tr.Tools[1].Name != "read_file" || tr.Tools[1].Output != "package main\n// TODO: flags" {
		t.Fatalf("tool_result blocks: %+v", tr.Tools)
	}
	if _, meta := sessionOf(t, recs, taskC); meta["fork"] != "kilo-code" || meta["host"] != "VSCodium" || meta["cost"] != 0.006 {
		t.Fatalf("kilo session meta %v", meta)
	}
}

func checkTaskD(t *testing.T, recs []*schema.Record) {
	m := messagesOf(recs, taskD)
	if len(m) != 2 || m[0].Text != "Say hello" || m[1].Text != "Hello!" || m[1].Source.Key != apiFile+"[2]" {
		t.Fatalf("messages before the break: %+v", m)
	}
	// A valid element of another shape is kept raw.
	if r := find(recs, func(r *schema.Record) bool { return r.SessionID == taskD && string(r.Raw) == "42" }); len(r) != 1 || r[0].Kind != schema.KindRaw {
		t.Fatalf("non-object element: %+v", r)
	}
	if r := find(recs, func(r *schema.Record) bool {
		return r.SessionID == taskD && r.Source != nil && r.Source.Key == metaFile
	}); len(r) != 1 || string(r[0].Raw) != "[1,2]" {
		t.Fatalf("task_metadata of another shape: %+v", r)
	}
}

func checkTaskE(t *testing.T, recs []*schema.Record) {
	m := messagesOf(recs, taskE)
	var keys []string
	for _, r := range m {
		keys = append(keys, r.Source.Key)
		if r.Completeness != schema.CompletePartial {
			t.Fatalf("orphan message %s is %s", r.Source.Key, r.Completeness)
		}
	}
	// The partial reasoning row [2] that row [3] completes is raw only.
	want := []string{"[0]", "[3]", "[4]", "[5]", "[7]", "[8]", "[9]", "[10]", "[12]"}
	for i := range want {
		want[i] = uiFile + want[i]
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("orphan messages %v\nwant %v", keys, want)
	}
	if m[1].Thinking != "thinking about make targets" || m[1].Usage.Output != 100 || m[1].Model != "claude-haiku-4-5" || m[1].ParentID != m[0].ID {
		t.Fatalf("superseded row's usage: %+v", m[1])
	}
	if m[4].Tools[0].Name != "execute_command" || string(m[4].Tools[0].Input) != `{"command":"make test"}` || m[5].Role != schema.RoleTool {
		t.Fatalf("command: %+v %+v", m[4], m[5])
	}
	s, meta := sessionOf(t, recs, taskE)
	if s.Completeness != schema.CompletePartial || meta["ui_only"] != true || meta["fork"] != "cline" || s.Title != "Explain the build" {
		t.Fatalf("orphan session %+v %v", s, meta)
	}
}

// normalized runs records through pos-normalize in-process.
func normalized(t *testing.T, recs []*schema.Record) []*schema.Record {
	t.Helper()
	out, _ := extracttest.Normalize(t, normalize.Options{Name: "test"}, recs)
	return out
}

func TestNormalized(t *testing.T) {
	res := extracttest.Run(t, Adapter{}, extract.Options{Home: fixture(t)})
	out := normalized(t, res.Recs)
	exchanges := map[string]int{}
	for _, r := range out {
		if r.Kind == schema.KindExchange {
			exchanges[r.SessionID]++
		}
	}
	// Prompts open exchanges; tool results, injected text and the rows of
	// one orphan response (merged) do not.
	want := map[string]int{taskA: 3, taskB: 2, taskC: 1, taskD: 1, taskE: 2}
	for s, n := range want {
		if exchanges[s] != n {
			t.Errorf("%s: %d exchanges, want %d", s, exchanges[s], n)
		}
	}
	for _, r := range out {
		if r.Kind == schema.KindMessage && r.SessionID == taskE && r.Role == schema.RoleAssistant && r.Source.Key == uiFile+"[3]" {
			if r.Text != "The build uses make." || len(r.Tools) != 1 || r.Usage.Output != 100 {
				t.Fatalf("orphan response not merged: %+v", r)
			}
		}
	}
}

func TestIncremental(t *testing.T) {
	home := fixture(t)
	// Run again unchanged, the broken file is not reported again.
	first, st := extracttest.FirstRun(t, Adapter{}, extract.Options{Home: home}, 11)
	if n := len(find(first.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindCheckpoint })); n != 11 {
		t.Fatalf("%d checkpoints, want one per file (11)", n)
	}

	// Cline rewrites the ui file of task A (a row appended): the whole task
	// is read again, with the ids of the first run.
	dir := taskDirOf(home, taskA)
	ui := filepath.Join(dir, uiFile)
	b, _ := os.ReadFile(ui)
	b = append(bytes.TrimSuffix(b, []byte("]")), []byte(`,{"ts":1772700400000,"type":"ask","ask":"resume_completed_task","conversationHistoryIndex":7}]`)...)
	if err := os.WriteFile(ui, b, 0o644); err != nil {
		t.Fatal(err)
	}
	inc := extracttest.Run(t, Adapter{}, extract.Options{Home: home, State: st})
	checkStream(t, inc.Recs)
	ids := func(recs []*schema.Record, kind schema.Kind) []string {
		var out []string
		for _, r := range recs {
			if r.Kind == kind && r.SessionID == taskA {
				out = append(out, r.ID)
			}
		}
		return out
	}
	if got, want := ids(inc.Recs, schema.KindMessage), ids(first.Recs, schema.KindMessage); !slices.Equal(got, want) {
		t.Fatalf("re-read message ids differ:\n%v\n%v", got, want)
	}
	if raws := ids(inc.Recs, schema.KindRaw); len(raws) != 8+21+1 {
		t.Fatalf("%d raw records re-read, want every element of the task's files", len(raws))
	}
	for _, r := range inc.Recs {
		if r.SessionID != taskA && r.Kind != schema.KindCheckpoint {
			t.Fatalf("an unchanged task was read: %+v", r)
		}
	}
	cps := find(inc.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindCheckpoint })
	if len(cps) != 3 || inc.Stats.Unchanged.Load() != 8 || inc.Stats.Files.Load() != 3 {
		t.Fatalf("%d checkpoints, %d unchanged", len(cps), inc.Stats.Unchanged.Load())
	}
	for _, c := range cps {
		if c.Checkpoint.Resume != 0 || c.Checkpoint.Size != c.Checkpoint.Seen {
			t.Fatalf("checkpoint %+v", c.Checkpoint)
		}
	}
	extracttest.Commit(st, inc.Recs)

	// The half-written ui file of task D is completed: it is read again.
	ud := filepath.Join(taskDirOf(home, taskD), uiFile)
	os.WriteFile(ud, []byte(`[{"ts":1772730000000,"type":"say","say":"text","text":"Say hello","conversationHistoryIndex":-1},{"ts":1772730000500,"type":"say","say":"api_req_started","text":"{}","conversationHistoryIndex":-1}]`), 0o644)
	done := extracttest.Run(t, Adapter{}, extract.Options{Home: home, State: st})
	if n := len(find(done.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindRaw && r.Source.Path == ud })); n != 2 || done.Stats.Partial.Load() != 0 {
		t.Fatalf("completed file: %d rows, %d partial", n, done.Stats.Partial.Load())
	}
}

func TestSince(t *testing.T) {
	home := fixture(t)
	since := ms(1772710000000) // task B's start
	res := extracttest.Since(t, Adapter{}, extract.Options{Home: home, Since: since})
	if len(messagesOf(res.Recs, taskA)) != 0 || len(messagesOf(res.Recs, taskB)) == 0 {
		t.Fatal("--since kept old messages or dropped newer ones")
	}
}

func TestRoots(t *testing.T) {
	home := fixture(t)
	dir := taskDirOf(home, taskA)
	sessions := func(res extracttest.Result) []string {
		var out []string
		for _, r := range res.Recs {
			if r.Kind == schema.KindSession {
				out = append(out, r.SessionID)
			}
		}
		return out
	}
	// A single file stands for its task; a task folder; a tasks folder.
	for _, root := range []string{filepath.Join(dir, apiFile), dir} {
		res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}})
		if got := sessions(res); !slices.Equal(got, []string{taskA}) || len(messagesOf(res.Recs, taskA)) != 9 {
			t.Fatalf("root %s: sessions %v", root, got)
		}
	}
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{filepath.Dir(dir)}})
	if got := sessions(res); !slices.Equal(got, []string{taskA, taskD}) {
		t.Fatalf("tasks root: sessions %v", got)
	}
	if got := (Adapter{}).Locations(extract.Options{Roots: []string{dir}, Home: home}); !slices.Equal(got, []string{dir}) {
		t.Fatalf("locations with a root: %v", got)
	}
}

func TestDefaultRoots(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	j := filepath.Join
	tests := []struct {
		goos string
		opt  extract.Options
		want []string // some of the roots
		not  []string
	}{
		{"linux", extract.Options{Home: "/h"}, []string{
			j("/h", ".config", "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "tasks"),
			j("/h", ".config", "Cursor", "User", "globalStorage", "kilocode.kilo-code", "tasks"),
			j("/h", ".config", "Code - Insiders", "User", "globalStorage", "rooveterinaryinc.roo-cline", "tasks"),
			j("/h", ".vscode-server", "data", "User", "globalStorage", "saoudrizwan.claude-dev", "tasks"),
			j("/h", ".cline", "data", "tasks"),
		}, []string{"/h"}},
		{"linux", extract.Options{Home: "/h", Env: env(map[string]string{"XDG_CONFIG_HOME": "/x", "CLINE_DIR": "/c"})}, []string{
			j("/x", "Windsurf", "User", "globalStorage", "saoudrizwan.claude-dev", "tasks"),
			j("/c", "data", "tasks"),
		}, []string{j("/h", ".config", "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "tasks")}},
		{"darwin", extract.Options{Home: "/Users/u", Env: env(map[string]string{"CLINE_DATA_DIR": "/d"})}, []string{
			j("/Users/u", "Library", "Application Support", "VSCodium", "User", "globalStorage", "saoudrizwan.claude-dev", "tasks"),
			j("/d", "tasks"),
		}, nil},
		{"windows", extract.Options{Home: "/w", Env: env(map[string]string{"APPDATA": "/w/AppData/Roaming"})}, []string{
			j("/w/AppData/Roaming", "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "tasks"),
		}, []string{j("/w", ".vscode-server", "data", "User", "globalStorage", "saoudrizwan.claude-dev", "tasks")}},
	}
	for _, tc := range tests {
		got := defaultRoots(&tc.opt, tc.goos)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: %s missing from %v", tc.goos, w, got)
			}
		}
		for _, n := range tc.not {
			if slices.Contains(got, n) {
				t.Errorf("%s: %s should not be searched", tc.goos, n)
			}
		}
		if want := len(Hosts)*len(Forks) + 1; len(got) < want {
			t.Errorf("%s: %d roots", tc.goos, len(got))
		}
	}
	if got := defaultRoots(&extract.Options{}, "linux"); len(got) != 0 {
		t.Errorf("no home, no environment: %v", got)
	}
}

func TestOrigin(t *testing.T) {
	tests := []struct {
		dir  string
		want origin
	}{
		{"/h/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1", origin{"cline", "saoudrizwan.claude-dev", "Code"}},
		{`C:\Users\u\AppData\Roaming\Cursor\User\globalStorage\RooVeterinaryInc.roo-cline\tasks\x`, origin{"roo-code", "rooveterinaryinc.roo-cline", "Cursor"}},
		{"/h/.vscode-server/data/User/globalStorage/kilocode.kilo-code/tasks/1", origin{"kilo-code", "kilocode.kilo-code", ".vscode-server"}},
		{"/h/.cline/data/tasks/1", origin{fork: "cline"}},
		{"/tmp/export/1", origin{}},
	}
	for _, tc := range tests {
		if got := originOf(tc.dir); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.dir, got, tc.want)
		}
	}
}

func TestElements(t *testing.T) {
	type element struct {
		off int64
		raw string
	}
	tests := []struct {
		in    string
		want  []element
		end   int64
		check func(error) bool
	}{
		{`[{"a":1},{"b":[2]}]`, []element{{1, `{"a":1}`}, {9, `{"b":[2]}`}}, 19, func(e error) bool { return e == nil }},
		{"[\n  {\n    \"a\": 1\n  },\n  \"s\",\n  3\n]\n", []element{{4, `{"a":1}`}, {24, `"s"`}, {31, `3`}}, 34, func(e error) bool { return e == nil }},
		{`[]`, nil, 2, func(e error) bool { return e == nil }},
		{``, nil, 0, truncated},
		{`[{"a":1},{"b":`, []element{{1, `{"a":1}`}}, 8, truncated},
		{`[{"a":1}`, []element{{1, `{"a":1}`}}, 8, truncated},
		{`{"a":1}`, nil, 0, func(e error) bool { return errors.Is(e, errNotArray) }},
		{`[{"a":1},{]`, []element{{1, `{"a":1}`}}, 8, func(e error) bool {
			var ee *elemError
			return errors.As(e, &ee) && ee.Index == 1 && !truncated(e)
		}},
		{`[1] x`, []element{{1, `1`}}, 3, func(e error) bool { return e != nil && !truncated(e) }},
	}
	for _, tc := range tests {
		var got []element
		end, err := elements(strings.NewReader(tc.in), func(e elem) error {
			if e.i != len(got) {
				t.Fatalf("%q: index %d", tc.in, e.i)
			}
			got = append(got, element{e.off, string(e.raw)})
			return nil
		})
		if !slices.Equal(got, tc.want) || end != tc.end || !tc.check(err) {
			t.Errorf("%q: %v end %d err %v; want %v end %d", tc.in, got, end, err, tc.want, tc.end)
		}
	}
}

func TestSplitXML(t *testing.T) {
	rest, th, tools := splitXML("Intro <b>bold</b>\n<thinking>plan</thinking>\n<execute_command>\n<command>go test ./...</command>\n<requires_approval>false</requires_approval>\n</execute_command>\n<read_file>unclosed")
	if strings.TrimSpace(rest) != "Intro <b>bold</b>\n\n\n<read_file>unclosed" || !slices.Equal(th, []string{"plan"}) || len(tools) != 1 ||
		tools[0].Name != "execute_command" || string(tools[0].Input) != `{"command":"go test ./...","requires_approval":"false"}` {
		t.Fatalf("%q %q %+v", rest, th, tools)
	}
}

func TestResolve(t *testing.T) {
	tests := []struct{ cwd, p, want string }{
		{"/w", "a/b.go", "/w/a/b.go"},
		{"/w/", "./a.go", "/w/a.go"},
		{"/w", "/abs.go", "/abs.go"},
		{`C:\p`, `src\m.go`, `C:\p\src\m.go`},
		{"D:/p", "x.md", "D:/p/x.md"},
		{"D:/p", `E:\x.md`, `E:\x.md`},
		{"", "rel.go", "rel.go"},
	}
	for _, tc := range tests {
		if got := resolve(tc.cwd, tc.p); got != tc.want {
			t.Errorf("resolve(%q, %q) = %q, want %q", tc.cwd, tc.p, got, tc.want)
		}
	}
}

func TestCapabilities(t *testing.T) {
	c, _ := extract.Declared(platform)
	if c.Platform != platform || c.Cost != extract.Yes || c.Incremental != extract.Partial || len(c.Limitations) == 0 {
		t.Fatalf("%+v", c)
	}
	for _, l := range c.Limitations {
		if strings.Count(strings.TrimSuffix(l, "."), ". ") > 0 || !strings.HasSuffix(l, ".") {
			t.Errorf("not one sentence: %q", l)
		}
	}
}

// One element that a JSON decoder refuses (nested 10,000 levels, a raw
// control character, a lone surrogate, not JSON at all) does not end the
// reading: the elements after it are read, and each one that is JSON is
// handed on strict, on one line, with what was changed.
func TestElementsKeepsWhatIsJSON(t *testing.T) {
	deep := strings.Repeat(`{"a":[`, 5000) + "1" + strings.Repeat("]}", 5000)
	in := "\xEF\xBB\xBF[\n {\"role\":\"user\",\"content\":\"a\x01b\"},\n" + deep + ",\n {\"s\":\"\\ud800\"},\n {\"x\" 1},\n {\"last\":\n  true}\n]\n"
	var got []elem
	end, err := elements(strings.NewReader(in), func(e elem) error {
		got = append(got, e)
		return nil
	})
	if err != nil || end != int64(len(in)-1) || len(got) != 5 {
		t.Fatalf("%d elements, end %d, err %v", len(got), end, err)
	}
	if string(got[0].raw) != `{"role":"user","content":"a\u0001b"}` || got[0].rep != schema.RepairControl || got[0].off != 6 {
		t.Errorf("element 0: %s %v at %d", got[0].raw, got[0].rep, got[0].off)
	}
	var text string
	if json.Unmarshal(got[1].raw, &text) != nil || text != deep || got[1].rep != schema.RepairText {
		t.Errorf("element 1 is not kept as its text: %.40s", got[1].raw)
	}
	if string(got[2].raw) != `{"s":"\ufffd"}` || got[2].rep != schema.RepairSurrogate {
		t.Errorf("element 2: %s", got[2].raw)
	}
	if got[3].raw != nil || got[3].bad == nil {
		t.Errorf("element 3 is not JSON: %s %v", got[3].raw, got[3].bad)
	}
	if string(got[4].raw) != `{"last":true}` || got[4].bad != nil {
		t.Errorf("element 4: %s", got[4].raw)
	}
}

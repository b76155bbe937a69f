package claudecode

import (
	"bytes"
	"context"
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
	"github.com/pos-lake/pos/internal/testfs"
	"github.com/pos-lake/pos/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

const (
	s1 = "11111111-1111-4111-8111-111111111111"
	s2 = "22222222-2222-4222-8222-222222222222"
	s3 = "33333333-3333-4333-8333-333333333333"
)

// fixture copies testdata/claude/home to a temp dir with fixed mtimes, so
// outputs are reproducible, and returns its .claude directory.
func fixture(t *testing.T) string {
	return filepath.Join(extracttest.Fixture(t, "claude/home", ""), ".claude")
}

var find = extracttest.Find

func TestFixture(t *testing.T) {
	root := fixture(t)
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}})

	// The malformed line is reported with its file and line; the half-written
	// last line is not an error, only left for later.
	if len(res.Skips) != 1 || !strings.HasSuffix(res.Skips[0].Path, s2+".jsonl") || res.Skips[0].Line != 5 {
		t.Fatalf("skips: %v", res.Skips)
	}
	if !strings.Contains(res.Skips[0].Error(), ".jsonl:5: invalid JSON") {
		t.Fatalf("diagnostic %q", res.Skips[0].Error())
	}
	if got := res.Stats.Partial.Load(); got != 1 {
		t.Fatalf("partial lines %d", got)
	}
	for _, r := range res.Recs {
		if r.Source != nil && strings.HasSuffix(r.Source.Path, "history.jsonl") {
			t.Fatal("read ~/.claude/history.jsonl, which is not a transcript")
		}
	}
	// Every line of every transcript is a raw record with its provenance;
	// a message made from a line comes right after the line's raw record.
	if lines := extracttest.Contract(t, res.Recs, 1); lines != 34 {
		t.Fatalf("%d line records, want 34", lines)
	}

	// rawOf returns the raw record of the line with the given uuid, and
	// byNative the message made from that line.
	rawOf := func(uuid string) *schema.Record {
		for _, r := range res.Recs {
			if r.Kind == schema.KindRaw && strings.Contains(string(r.Raw), `"uuid":"`+uuid+`"`) {
				return r
			}
		}
		t.Fatalf("no line for %s", uuid)
		return nil
	}
	byNative := func(uuid string) *schema.Record {
		raw := rawOf(uuid)
		for _, r := range res.Recs {
			if r.Kind == schema.KindMessage && *r.Source == *raw.Source {
				return r
			}
		}
		t.Fatalf("no message for %s", uuid)
		return nil
	}
	label := find(res.Recs, func(r *schema.Record) bool { return r.ContentType == schema.ContentSummaryLabel })
	if len(label) != 1 || label[0].Text != "Fix login redirect loop" || label[0].ParentID != msgID("a0000000-0000-4000-8000-000000000006") ||
		label[0].SessionID != s1 || label[0].TSPrecision != schema.PrecisionDerived {
		t.Fatalf("summary label: %+v", label)
	}
	if r := byNative("a0000000-0000-4000-8000-000000000008"); r.ContentType != schema.ContentCompactBoundary || !strings.Contains(string(r.Meta), "preTokens") {
		t.Fatalf("compact boundary: %+v", r)
	}
	if r := byNative("a0000000-0000-4000-8000-000000000009"); r.ContentType != schema.ContentCompactSummary || r.Role != schema.RoleSystem || r.ParentID != msgID("a0000000-0000-4000-8000-000000000008") {
		t.Fatalf("compact summary: %+v", r)
	}
	if r := byNative("a0000000-0000-4000-8000-000000000010"); r.ContentType != schema.ContentCommand || r.Text != "/model" {
		t.Fatalf("command: %+v", r)
	}
	if r := byNative("a0000000-0000-4000-8000-000000000011"); r.ContentType != schema.ContentCommandOutput || r.Text != "Set model to opus" {
		t.Fatalf("command output: %+v", r)
	}
	if r := byNative("a0000000-0000-4000-8000-000000000012"); r.Text != "Now add a test for the redirect. Caf\uFFFD \u2615" || !strings.Contains(string(rawOf("a0000000-0000-4000-8000-000000000012").Raw), "Caf\uFFFD") {
		t.Fatalf("invalid UTF-8 not replaced: %q", r.Text)
	}
	if r := byNative("a0000000-0000-4000-8000-000000000007"); r.Role != schema.RoleTool || r.Tools[0].CallID != "toolu_02" || r.Tools[0].Output != "The file was edited." {
		t.Fatalf("tool result: %+v", r)
	}
	if r := byNative("a0000000-0000-4000-8000-000000000006"); r.NativeID != "msg_01B" || r.Files[0] != "/home/dev/webapp/src/auth.ts" || r.Usage.CacheRead != 1010 {
		t.Fatalf("assistant: %+v", r)
	}
	future := find(res.Recs, func(r *schema.Record) bool { return r.NativeType == "a-future-line-type" })
	if len(future) != 1 || future[0].Kind != schema.KindRaw || future[0].SessionID != s1 {
		t.Fatalf("unknown line type not kept raw: %+v", future)
	}
	// Subagents: the v2.1 agent gets its type from the .meta.json, the v1.0
	// inline sidechain is a thread named by its root, the v2.0 agent file
	// takes its session from its lines.
	sub := byNative("b0000000-0000-4000-8000-000000000002")
	if sub.SessionID != s1 || sub.Agent == nil || sub.Agent.ID != "ab12cd3" || sub.Agent.Type != "general-purpose" || !sub.Agent.Sidechain {
		t.Fatalf("subagent: %+v %+v", sub, sub.Agent)
	}
	side := byNative("c0000000-0000-4000-8000-000000000004")
	if side.Agent == nil || side.Agent.ID != "side-c0000000-0000-4000-8000-000000000003" {
		t.Fatalf("inline sidechain: %+v", side.Agent)
	}
	warm := byNative("e0000000-0000-4000-8000-000000000001")
	if warm.SessionID != s3 || warm.Agent.ID != "9f8e7d6c" {
		t.Fatalf("v2.0 agent file: %+v", warm)
	}
	// Plans are documents linked by slug.
	plans := find(res.Recs, func(r *schema.Record) bool { return r.ContentType == schema.ContentPlan })
	if len(plans) != 2 {
		t.Fatalf("plans: %d", len(plans))
	}
	for _, p := range plans {
		if p.SessionID != s1 || p.NativeID != "quiet-blue-heron" {
			t.Fatalf("plan not linked: %+v", p)
		}
	}
	// A title carries its source's lines; the lake keeps its first line.
	if excerpt.Title(plans[0]) != "Fix the login redirect loop" && excerpt.Title(plans[1]) != "Fix the login redirect loop" {
		t.Fatalf("plan titles: %q %q", plans[0].Title, plans[1].Title)
	}
	extracttest.GoldenRecords(t, extracttest.Testdata("claude", "extract.golden.ndjson"), res.Recs, filepath.Dir(root), *update)
}

func TestIncremental(t *testing.T) {
	root := fixture(t)
	_, st := extracttest.FirstRun(t, Adapter{}, extract.Options{Roots: []string{root}}, 7)

	// A line appended to a subagent's transcript: its session's file, in
	// the same job, stays unchanged; only the subagent's new line is read.
	sub := filepath.Join(root, "projects", "-home-dev-webapp", s1, "subagents", "agent-ab12cd3.jsonl")
	extracttest.AppendFile(t, sub, `{"isSidechain":true,"userType":"external","cwd":"/home/dev/webapp","sessionId":"`+s1+`","version":"2.1.40","parentUuid":"b0000000-0000-4000-8000-000000000004","type":"user","message":{"role":"user","content":"and the logout page?"},"uuid":"b0000000-0000-4000-8000-000000000005","timestamp":"2026-03-02T10:03:00.000Z","agentId":"ab12cd3"}`+"\n")
	subRun := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
	raws := find(subRun.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindRaw })
	if len(raws) != 1 || raws[0].Source.Path != sub || subRun.Stats.Unchanged.Load() != 6 || subRun.Stats.Files.Load() != 1 {
		t.Fatalf("subagent append: %d raw records, %d files unchanged, %d read", len(raws), subRun.Stats.Unchanged.Load(), subRun.Stats.Files.Load())
	}
	extracttest.Commit(st, subRun.Recs)

	// Session 2's half-written line is completed and a line appended: the
	// next run emits both and nothing before the open exchange.
	p2 := filepath.Join(root, "projects", "-home-dev-webapp", s2+".jsonl")
	extracttest.AppendFile(t, p2,
		`ing"},"timestamp":"2026-03-03T08:05:00.000Z","sessionId":"`+s2+`","uuid":"c0000000-0000-4000-8000-000000000007","cwd":"/home/dev/webapp"}`+"\n",
		`{"parentUuid":"c0000000-0000-4000-8000-000000000007","isSidechain":false,"type":"assistant","sessionId":"`+s2+`","uuid":"c0000000-0000-4000-8000-000000000008","timestamp":"2026-03-03T08:05:03.000Z","cwd":"/home/dev/webapp","requestId":"req_02C","message":{"id":"msg_02C","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"Done."}],"usage":{"input_tokens":1,"output_tokens":2}}}`+"\n",
	)
	delivered := st.Get(platform, p2).Size
	inc := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
	var natives []string
	replays := 0
	for _, r := range inc.Recs {
		if r.Source != nil && r.Source.Path == p2 && (r.Kind == schema.KindRaw || r.Kind == schema.KindMessage) {
			// Lines the first run delivered come again only as the open
			// exchange's context: marked, and without their raw records.
			if old := r.Source.Offset < delivered; r.Source.Replay != old || old && (r.Kind == schema.KindRaw || len(r.Raw) > 0) {
				t.Fatalf("%s at offset %d (delivered up to %d): replay %v, %d raw bytes", r.Kind, r.Source.Offset, delivered, r.Source.Replay, len(r.Raw))
			}
			if r.Source.Replay {
				replays++
			}
		}
		if r.Kind == schema.KindMessage {
			natives = append(natives, r.Text)
			if r.Source.Line < 1 {
				t.Fatalf("bad line number %+v", r.Source)
			}
		}
	}
	// The first line after the watermark is the completed prompt: the open
	// exchange ended as the first run wrote it, and the read starts at the
	// watermark (TestResume reads an open exchange again); line numbers stay
	// those of the file.
	if len(natives) != 2 || natives[0] != "still typing" || natives[1] != "Done." {
		t.Fatalf("incremental texts %q", natives)
	}
	if replays != 0 {
		t.Fatalf("%d lines of a finished exchange read again", replays)
	}
	if len(inc.Skips) != 0 {
		// The bad line 5 is before the watermark: the first run said so.
		t.Fatalf("skips %v", inc.Skips)
	}
	last := inc.Recs[len(inc.Recs)-1]
	// The completed line is a new prompt: the next run resumes there.
	if last.Kind != schema.KindCheckpoint || last.Checkpoint.Lines != 7 || last.Checkpoint.Resume == 0 || last.Checkpoint.Size != last.Checkpoint.Seen {
		t.Fatalf("checkpoint %+v", last.Checkpoint)
	}
	extracttest.Commit(st, inc.Recs)

	// A shrunk file is read again from the start.
	p3 := filepath.Join(root, "projects", "-home-dev-webapp", s3+".jsonl")
	b, _ := os.ReadFile(p3)
	os.WriteFile(p3, b[:bytes.IndexByte(b, '\n')+1], 0o644)
	shr := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
	if n := len(find(shr.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage })); n != 1 {
		t.Fatalf("shrunk file: %d messages", n)
	}
	extracttest.Commit(st, shr.Recs)

	// A file replaced by another of the same size and time is read again.
	rep := bytes.Replace(b[:bytes.IndexByte(b, '\n')+1], []byte("redirects forever"), []byte("REDIRECTS FOREVER"), 1)
	os.WriteFile(p3, rep, 0o644)
	fi, _ := os.Stat(p3)
	os.Chtimes(p3, fi.ModTime(), fi.ModTime())
	rr := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
	msgs := find(rr.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindMessage })
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "REDIRECTS") {
		t.Fatalf("replaced file: %+v", msgs)
	}
}

func TestSince(t *testing.T) {
	root := fixture(t)
	since := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	res := extracttest.Since(t, Adapter{}, extract.Options{Roots: []string{root}, Since: since})
	if len(find(res.Recs, func(r *schema.Record) bool { return r.SessionID == s2 && r.Kind == schema.KindMessage })) == 0 {
		t.Fatal("newer records were dropped")
	}
}

func TestDefaultRoots(t *testing.T) {
	home := filepath.Dir(fixture(t))
	dirs := filepath.Join(t.TempDir(), "none") + "," + filepath.Join(home, ".claude")
	extracttest.DefaultRoots(t, Adapter{}, home, "~/.claude/projects", "CLAUDE_CONFIG_DIR", dirs)
}

func TestCorpusEveryLine(t *testing.T) {
	dir, res := extracttest.Corpus(t, Adapter{}, "claude_code")
	perFile := map[string]int{}
	for _, r := range res.Recs {
		if r.Kind == schema.KindRaw {
			perFile[r.Source.Path]++
		}
	}
	files, _ := (&extract.Options{}).Walk(context.Background(), []string{dir}, extract.Match{Name: func(p string) bool { return strings.HasSuffix(p, ".jsonl") }})
	if len(files) != 27 {
		t.Fatalf("%d corpus files, want 27", len(files))
	}
	for _, f := range files {
		b, _ := os.ReadFile(f.Path)
		if want := bytes.Count(b, []byte{'\n'}); perFile[f.Path] != want {
			t.Errorf("%s: %d records, want one per line (%d)", f.Path, perFile[f.Path], want)
		}
	}
}

// runProject extracts a Claude Code home whose one project holds files
// (paths relative to the project folder) with their contents.
func runProject(t *testing.T, files map[string]string) extracttest.Result {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".claude")
	for rel, body := range files {
		p := filepath.Join(root, "projects", "p", filepath.FromSlash(rel))
		testfs.WriteFile(t, p, body)
	}
	return extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}})
}

// A message made in fast mode (usage.speed "fast") is its model's "-fast"
// variant, which has its own price; "standard" and no speed leave the
// model as written.
func TestFastModeModel(t *testing.T) {
	line := func(id, speed string) string {
		sp := ""
		if speed != "" {
			sp = `,"speed":"` + speed + `"`
		}
		return `{"parentUuid":null,"isSidechain":false,"sessionId":"` + s1 + `","version":"2.1.39","type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_` + id + `","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2` + sp + `}},"requestId":"req_` + id + `","uuid":"u-` + id + `","timestamp":"2026-04-01T10:00:0` + id + `.000Z"}` + "\n"
	}
	res := runProject(t, map[string]string{s1 + ".jsonl": line("1", "fast") + line("2", "standard") + line("3", "")})
	want := map[string]string{"msg_1": "claude-opus-4-6-fast", "msg_2": "claude-opus-4-6", "msg_3": "claude-opus-4-6"}
	n := 0
	for _, r := range res.Recs {
		if r.Kind != schema.KindMessage || r.Role != schema.RoleAssistant {
			continue
		}
		n++
		if w := want[r.NativeID]; r.Model != w {
			t.Errorf("%s: model %q, want %q", r.NativeID, r.Model, w)
		}
	}
	if n != 3 {
		t.Errorf("%d assistant messages, want 3", n)
	}
}

// TestAdvisorCalls: usage.iterations entries of type advisor_message become
// the message's Advisor, one entry per call with its model and tokens (the
// 1-hour cache write share included); the executor's own iterations and
// entries without a model do not.
func TestAdvisorCalls(t *testing.T) {
	body := `{"parentUuid":null,"isSidechain":false,"sessionId":"` + s1 + `","version":"2.1.90","type":"assistant","message":{"model":"claude-sonnet-4-6","id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":50,"iterations":[` +
		`{"type":"message","input_tokens":100,"output_tokens":10},` +
		`{"type":"advisor_message","model":"claude-opus-4-6","input_tokens":7000,"output_tokens":700,"cache_creation_input_tokens":1000,"cache_read_input_tokens":2000,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":1000}},` +
		`{"type":"advisor_message","input_tokens":5},` +
		`{"type":"message","output_tokens":40},` +
		`{"type":"advisor_message","model":"claude-opus-4-6","input_tokens":10,"output_tokens":1}]}},"requestId":"req_1","uuid":"u-1","timestamp":"2026-04-01T10:00:01.000Z"}` + "\n"
	res := runProject(t, map[string]string{s1 + ".jsonl": body})
	want := []schema.ModelUsage{
		{Model: "claude-opus-4-6", Usage: schema.Usage{Input: 7000, Output: 700, CacheCreation: 1000, CacheRead: 2000, CacheCreation1h: 1000}},
		{Model: "claude-opus-4-6", Usage: schema.Usage{Input: 10, Output: 1}},
	}
	n := 0
	for _, r := range res.Recs {
		if r.Kind != schema.KindMessage || r.Role != schema.RoleAssistant {
			continue
		}
		n++
		if r.Model != "claude-sonnet-4-6" || *r.Usage != (schema.Usage{Input: 100, Output: 50}) {
			t.Errorf("executor: model %q usage %+v", r.Model, *r.Usage)
		}
		if !slices.Equal(r.Advisor, want) {
			t.Errorf("advisor %+v, want %+v", r.Advisor, want)
		}
	}
	if n != 1 {
		t.Errorf("%d assistant messages, want 1", n)
	}
}

// TestProgressCopies: a subagent's assistant line copied into the parent's
// agent_progress line becomes a message (the subagent's thread, the copied
// line's uuid and usage) when the subagent has no transcript, and is passed
// over when it has one (2.1 subagents/ folder or 2.0 file beside the
// session), whose own lines are then read.
func TestProgressCopies(t *testing.T) {
	copyLine := func(agent, uuid, id string) string {
		return `{"parentUuid":null,"isSidechain":false,"sessionId":"` + s1 + `","version":"2.1.39","type":"progress","parentToolUseID":"toolu_1","data":{"type":"agent_progress","agentId":"` + agent + `","message":{"type":"assistant","isSidechain":true,"agentId":"` + agent + `","message":{"model":"claude-haiku-4-5","id":"` + id + `","type":"message","role":"assistant","content":[{"type":"text","text":"found it"}],"usage":{"input_tokens":30,"output_tokens":40,"cache_read_input_tokens":50}},"requestId":"req_` + id + `","uuid":"` + uuid + `","timestamp":"2026-04-01T10:00:03.000Z"}},"uuid":"p-` + uuid + `","timestamp":"2026-04-01T10:00:04.000Z"}` + "\n"
	}
	task := `{"parentUuid":null,"isSidechain":false,"sessionId":"` + s1 + `","version":"2.1.39","type":"assistant","message":{"model":"claude-opus-4-6","id":"msg_t","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Task","input":{"subagent_type":"Explore","prompt":"look"}}],"usage":{"input_tokens":1,"output_tokens":2}},"requestId":"req_t","uuid":"u-t","timestamp":"2026-04-01T10:00:01.000Z"}` + "\n"
	sub := func(agent string) string {
		return `{"parentUuid":null,"isSidechain":true,"sessionId":"` + s1 + `","agentId":"` + agent + `","version":"2.1.39","type":"assistant","message":{"model":"claude-haiku-4-5","id":"msg_s","type":"message","role":"assistant","content":[{"type":"text","text":"found it"}],"usage":{"input_tokens":30,"output_tokens":40,"cache_read_input_tokens":50}},"requestId":"req_msg_s","uuid":"u-s","timestamp":"2026-04-01T10:00:03.000Z"}` + "\n"
	}
	for _, tc := range []struct {
		name       string
		transcript string // relative to the project folder, "" for none
	}{
		{"no transcript", ""},
		{"2.1 subagents folder", s1 + "/subagents/agent-a1.jsonl"},
		{"2.0 beside the session", "agent-a1.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{s1 + ".jsonl": task + copyLine("a1", "u-s", "msg_s")}
			if tc.transcript != "" {
				files[tc.transcript] = sub("a1")
			}
			res := runProject(t, files)
			var got []*schema.Record
			for _, r := range res.Recs {
				if r.Kind == schema.KindMessage && r.Model == "claude-haiku-4-5" {
					got = append(got, r)
				}
			}
			if len(got) != 1 {
				t.Fatalf("%d messages of the subagent, want 1 (from the copy without a transcript, else from the transcript)", len(got))
			}
			m := got[0]
			from := "progress/agent_progress"
			if tc.transcript != "" {
				from = "assistant"
			}
			if m.NativeType != from || m.Agent == nil || m.Agent.ID != "a1" || !m.Agent.Sidechain || m.SessionID != s1 ||
				*m.Usage != (schema.Usage{Input: 30, Output: 40, CacheRead: 50}) || m.Text != "found it" ||
				!m.TS.Equal(time.Date(2026, 4, 1, 10, 0, 3, 0, time.UTC)) {
				t.Errorf("message %+v agent %+v usage %+v", m, m.Agent, m.Usage)
			}
			if tc.transcript == "" && m.Agent.Type != "Explore" {
				t.Errorf("agent type %q, want Explore (the Task call's subagent_type)", m.Agent.Type)
			}
			// The copy and the transcript line give the same id.
			if want := msgID("u-s"); m.ID != want {
				t.Errorf("id %s, want %s (the copied line's uuid)", m.ID, want)
			}
		})
	}
}

package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract/extracttest"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/normalize"
)

var update = flag.Bool("update", false, "rewrite golden files")

const (
	sA = "aaaaaaaa-0000-4000-8000-000000000001"
	sB = "bbbbbbbb-0000-4000-8000-000000000002"
	sC = "cccccccc-0000-4000-8000-000000000003"
	sD = "dddddddd-0000-4000-8000-000000000004"
)

// fixture copies testdata/codex/home to a temp dir with fixed mtimes and
// returns its .codex directory.
func fixture(t *testing.T) string {
	return filepath.Join(extracttest.Fixture(t, "codex/home", ""), ".codex")
}

var find = extracttest.Find

// at returns the message made from line n of the file whose name has the
// given session id.
func at(t *testing.T, recs []*schema.Record, session string, n int64) *schema.Record {
	t.Helper()
	for _, r := range recs {
		if r.Kind == schema.KindMessage && strings.Contains(r.Source.Path, session) && r.Source.Line == n {
			return r
		}
	}
	t.Fatalf("no message from %s line %d", session, n)
	return nil
}

func sumUsage(recs []*schema.Record, pred func(*schema.Record) bool) schema.Usage {
	var u schema.Usage
	for _, r := range recs {
		if r.Kind == schema.KindMessage && pred(r) {
			u.Add(r.Usage)
		}
	}
	return u
}

func TestFixture(t *testing.T) {
	root := fixture(t)
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}})

	// The malformed line is reported with its file and line; the half-written
	// last line is only left for later.
	if len(res.Skips) != 1 || !strings.Contains(res.Skips[0].Path, sA) || res.Skips[0].Line != 30 ||
		!strings.Contains(res.Skips[0].Error(), ".jsonl:30: invalid JSON") {
		t.Fatalf("skips: %v", res.Skips)
	}
	if got := res.Stats.Partial.Load(); got != 1 {
		t.Fatalf("partial lines %d", got)
	}
	// Every complete line of every rollout (not history.jsonl) is one raw
	// record; a message comes right after its line's raw record.
	for _, r := range res.Recs {
		if r.Source != nil && strings.HasSuffix(r.Source.Path, "history.jsonl") {
			t.Fatal("read history.jsonl, which is not a rollout")
		}
	}
	if want, lines := 36+14+6+8, extracttest.Contract(t, res.Recs, 1); lines != want {
		t.Fatalf("%d line records, want %d", lines, want)
	}

	// One text stream: the event copies of prompts and answers are raw only.
	for _, r := range extracttest.Messages(res.Recs) {
		if strings.HasPrefix(r.NativeType, "event_msg/user_message") || strings.HasPrefix(r.NativeType, "event_msg/agent_") {
			t.Fatalf("message from an event copy: %+v", r)
		}
	}
	// Prompts: those a user_message event confirms; injected context and
	// developer messages are system.
	if r := at(t, res.Recs, sA, 2); r.Role != schema.RoleSystem || r.ContentType != schema.ContentMeta {
		t.Fatalf("developer message: %+v", r)
	}
	if r := at(t, res.Recs, sA, 3); r.Role != schema.RoleSystem || r.ContentType != schema.ContentMeta {
		t.Fatalf("environment context: %+v", r)
	}
	var prompts []string
	for _, r := range extracttest.Messages(res.Recs) {
		if r.Role == schema.RoleUser && r.ContentType == schema.ContentText {
			prompts = append(prompts, r.Text)
		}
	}
	want := []string{"Fix the failing build.", "Add a /health endpoint to the API.", "Now add a test for it.", "Find where routes are registered.", "Try a middleware-based approach instead."}
	if strings.Join(prompts, "|") != strings.Join(want, "|") {
		t.Fatalf("prompts %q", prompts)
	}
	// One request's items share a native id (pos-normalize merges them),
	// carry the turn's model, and its usage once, on the last item.
	think, say, call := at(t, res.Recs, sA, 10), at(t, res.Recs, sA, 12), at(t, res.Recs, sA, 13)
	if think.Thinking != "Planning the endpoint" || think.ContentType != schema.ContentThinking || say.Text != "I'll look at the router first." ||
		think.NativeID != say.NativeID || say.NativeID != call.NativeID || call.Model != "gpt-5.3-codex" {
		t.Fatalf("request items: %+v %+v %+v", think, say, call)
	}
	if think.Usage != nil || say.Usage != nil || *call.Usage != (schema.Usage{Input: 200, Output: 50, CacheRead: 800}) {
		t.Fatalf("request usage: %+v %+v %+v", think.Usage, say.Usage, call.Usage)
	}
	if call.Tools[0].Name != "exec_command" || string(call.Tools[0].Input) != `{"cmd":"ls","workdir":"/home/dev/api"}` {
		t.Fatalf("function call: %+v", call.Tools)
	}
	// Outputs are paired with their calls by call_id.
	out := at(t, res.Recs, sA, 15)
	if out.Role != schema.RoleTool || out.Tools[0].Name != "exec_command" || out.Tools[0].CallID != "call_1" || out.Tools[0].IsError ||
		!strings.Contains(out.Tools[0].Output, "router.go") || out.ParentID != call.ID {
		t.Fatalf("function output: %+v", out)
	}
	patch, patchOut := at(t, res.Recs, sA, 19), at(t, res.Recs, sA, 21)
	if patch.Tools[0].Name != "apply_patch" || len(patch.Files) != 1 || patch.Files[0] != "/home/dev/api/health.go" ||
		*patch.Usage != (schema.Usage{Input: 200, Output: 70, CacheRead: 1000}) {
		t.Fatalf("custom tool call: %+v %+v", patch, patch.Usage)
	}
	if !patchOut.Tools[0].IsError || patchOut.Tools[0].Name != "apply_patch" || !strings.HasPrefix(patchOut.Tools[0].Output, "apply_patch verification failed") {
		t.Fatalf("custom tool output: %+v", patchOut.Tools)
	}
	if r := at(t, res.Recs, sA, 22); r.Tools[0].Name != "web_search" || !strings.Contains(string(r.Tools[0].Input), "health check") {
		t.Fatalf("web search: %+v", r.Tools)
	}
	if r := at(t, res.Recs, sA, 26); r.ContentType != schema.ContentCompactBoundary {
		t.Fatalf("context_compacted: %+v", r)
	}
	if r := at(t, res.Recs, sA, 27); r.ContentType != schema.ContentCompactSummary || r.Text != "Summary: the API gained a /health endpoint." {
		t.Fatalf("compacted: %+v", r)
	}
	future := find(res.Recs, func(r *schema.Record) bool { return r.NativeType == "a_future_line_type" })
	if len(future) != 1 || future[0].Kind != schema.KindRaw || future[0].SessionID != sA {
		t.Fatalf("unknown line type not kept raw: %+v", future)
	}
	// The second turn's model, shell-wrapped apply_patch files, content-item
	// output, an interrupted turn.
	if r := at(t, res.Recs, sA, 34); r.Model != "gpt-5.4-codex" || len(r.Files) != 1 || r.Files[0] != "/home/dev/api/health_test.go" {
		t.Fatalf("turn 2 call: %+v", r)
	}
	if r := at(t, res.Recs, sA, 36); r.Tools[0].IsError || !strings.HasPrefix(r.Tools[0].Output, "Process exited with code 0") {
		t.Fatalf("content-item output: %+v", r.Tools)
	}
	if r := at(t, res.Recs, sA, 37); r.ContentType != schema.ContentInterrupt || r.Text != "turn aborted: interrupted" {
		t.Fatalf("turn aborted: %+v", r)
	}
	// Token usage: the re-emitted total (line 17) adds nothing, so the
	// session's usage is its last total, uncached input apart from cached.
	if u := sumUsage(res.Recs, func(r *schema.Record) bool { return r.SessionID == sA && r.Agent == nil }); u != (schema.Usage{Input: 1000, Output: 300, CacheRead: 4000}) {
		t.Fatalf("session A usage %+v", u)
	}
	// The fork: the copied history is raw only and its counts only set the
	// baseline, so the fork's own request counts 4700-3500 input tokens.
	forkMsgs := find(extracttest.Messages(res.Recs), func(r *schema.Record) bool { return r.SessionID == sB })
	if len(forkMsgs) != 2 || forkMsgs[0].Text != "Try a middleware-based approach instead." || forkMsgs[1].Text != "Switched to a middleware." {
		t.Fatalf("fork messages: %+v", forkMsgs)
	}
	if u := *forkMsgs[1].Usage; u != (schema.Usage{Input: 300, Output: 60, CacheRead: 900}) {
		t.Fatalf("fork usage %+v", u)
	}
	if n := len(find(res.Recs, func(r *schema.Record) bool { return r.SessionID == sB && string(r.Meta) == `{"replayed":true}` })); n != 8 {
		t.Fatalf("%d replayed lines, want 8", n)
	}
	// The spawned subagent is a sidechain thread of its parent's session.
	sub := find(extracttest.Messages(res.Recs), func(r *schema.Record) bool { return r.Agent != nil })
	if len(sub) != 2 || sub[0].SessionID != sA || sub[0].Agent.ID != sC || sub[0].Agent.Type != "explorer" || !sub[0].Agent.Sidechain ||
		sub[1].Model != "gpt-5.3-codex-mini" || *sub[1].Usage != (schema.Usage{Input: 400, Output: 30}) {
		t.Fatalf("subagent: %+v", sub)
	}
	// The legacy rollout: bare items, no events; the text decides prompts.
	if r := at(t, res.Recs, sD, 3); r.Role != schema.RoleSystem {
		t.Fatalf("legacy user instructions: %+v", r)
	}
	if r := at(t, res.Recs, sD, 7); r.Tools[0].IsError || r.Tools[0].Output != "ok\n" || r.Tools[0].Name != "shell" {
		t.Fatalf("legacy output: %+v", r.Tools)
	}
	if r := at(t, res.Recs, sD, 4); r.TSPrecision != schema.PrecisionDerived || r.SessionID != sD {
		t.Fatalf("legacy prompt: %+v", r)
	}
	// Session records: cwd as project, model, CLI version and origin.
	sess := find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindSession })
	if len(sess) != 3 {
		t.Fatalf("%d session records, want 3 (none for the subagent)", len(sess))
	}
	for _, s := range sess {
		if s.SessionID != sA {
			continue
		}
		if s.Title != "Health endpoint" || s.Project != "/home/dev/api" || s.Model != "gpt-5.4-codex" || s.GitBranch != "main" ||
			!strings.Contains(string(s.Meta), `"cli_version":"0.110.0"`) || !strings.Contains(string(s.Meta), `"originator":"codex_cli_rs"`) {
			t.Fatalf("session A: %+v %s", s, s.Meta)
		}
	}
	extracttest.GoldenRecords(t, extracttest.Testdata("codex", "extract.golden.ndjson"), res.Recs, filepath.Dir(root), *update)
}

func TestIncremental(t *testing.T) {
	root := fixture(t)
	first, st := extracttest.FirstRun(t, Adapter{}, extract.Options{Roots: []string{root}}, 4)
	cpA := extracttest.Checkpoint(first.Recs, sA)
	// Session A resumes at its last prompt (line 31), which opened the
	// exchange still open; the half-written line is not consumed.
	if cpA == nil || cpA.Lines != 30 || cpA.Size == cpA.Seen || cpA.Context["total"] != "3500,2800,0,200,40,3700" {
		t.Fatalf("checkpoint %+v", cpA)
	}

	// The half-written prompt is finished and answered.
	p := filepath.Join(root, "sessions", "2026", "03", "01", "rollout-2026-03-01T10-00-00-"+sA+".jsonl")
	extracttest.AppendFile(t, p,
		`ing"}]}}`+"\n",
		`{"timestamp":"2026-03-01T10:00:40.000Z","type":"event_msg","payload":{"type":"user_message","message":"still typing"}}`+"\n",
		`{"timestamp":"2026-03-01T10:00:42.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}}`+"\n",
		`{"timestamp":"2026-03-01T10:00:42.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":6000,"cached_input_tokens":4800,"output_tokens":350,"reasoning_output_tokens":70,"total_tokens":6350},"last_token_usage":{"input_tokens":1000,"cached_input_tokens":800,"output_tokens":50,"reasoning_output_tokens":10,"total_tokens":1050}}}}`+"\n",
	)
	inc := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
	msgs := extracttest.Messages(inc.Recs)
	// The open exchange (from line 31) is read again with the new lines; the
	// re-read request keeps its usage, the new one adds only its own.
	if len(msgs) == 0 || msgs[0].Source.Line != 31 || msgs[0].Text != "Now add a test for it." {
		t.Fatalf("incremental run starts at %+v", msgs[0])
	}
	last := msgs[len(msgs)-1]
	if last.Text != "Done." || *last.Usage != (schema.Usage{Input: 200, Output: 50, CacheRead: 800}) {
		t.Fatalf("new answer %+v %+v", last, last.Usage)
	}
	if u := sumUsage(inc.Recs, func(*schema.Record) bool { return true }); u != (schema.Usage{Input: 500, Output: 150, CacheRead: 2000}) {
		t.Fatalf("incremental usage %+v", u)
	}
	for _, r := range msgs {
		if r.Text == "still typing" && (r.Role != schema.RoleUser || r.ContentType != schema.ContentText) {
			t.Fatalf("completed prompt %+v", r)
		}
	}
	if len(inc.Skips) != 0 {
		t.Fatalf("skips %v", inc.Skips)
	}
	cp := inc.Recs[len(inc.Recs)-1]
	if cp.Kind != schema.KindCheckpoint || cp.Checkpoint.Lines != 37 || cp.Checkpoint.Size != cp.Checkpoint.Seen ||
		cp.Checkpoint.Context["total"] != "5000,4000,0,300,60,5300" {
		t.Fatalf("checkpoint %+v", cp.Checkpoint)
	}
	// The same records as a full read of the grown file would give.
	full := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{p}})
	byID := map[string]*schema.Record{}
	for _, r := range extracttest.Messages(full.Recs) {
		byID[r.ID] = r
	}
	for _, r := range msgs {
		w := byID[r.ID]
		if w == nil || w.Text != r.Text || (w.Usage == nil) != (r.Usage == nil) || (w.Usage != nil && *w.Usage != *r.Usage) {
			t.Fatalf("incremental %+v differs from full %+v", r, w)
		}
	}
}

func TestSince(t *testing.T) {
	root := fixture(t)
	since := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	res := extracttest.Since(t, Adapter{}, extract.Options{Roots: []string{root}, Since: since})
	if len(find(extracttest.Messages(res.Recs), func(r *schema.Record) bool { return r.SessionID == sB })) == 0 {
		t.Fatal("newer records were dropped")
	}
}

func TestDefaultRoots(t *testing.T) {
	codexHome := fixture(t)
	extracttest.DefaultRoots(t, Adapter{}, filepath.Dir(codexHome), "~/.codex/sessions", "CODEX_HOME", codexHome)
	locs := Adapter{}.Locations(extract.Options{Home: "/h"})
	if len(locs) != 2 || locs[0] != filepath.Join("/h", ".codex", "sessions") || locs[1] != filepath.Join("/h", ".codex", "archived_sessions") {
		t.Fatalf("locations %v", locs)
	}
}

// TestCorpus reads the real rollouts, runs the records through
// pos-normalize in-process, and checks per-file counts and the token sums
// against a computation of its own over the files.
func TestCorpus(t *testing.T) {
	dir, res := extracttest.Corpus(t, Adapter{}, "codex")
	norm, _ := extracttest.Normalize(t, normalize.Options{Name: "corpus"}, res.Recs)
	bySession := map[string]string{} // session -> file
	type counts struct{ raw, msgs, exchanges int }
	got := map[string]*counts{}
	for _, r := range norm {
		if r.Source != nil && r.SessionID != "" {
			bySession[r.SessionID] = filepath.Base(r.Source.Path)
		}
	}
	for _, r := range norm {
		f := bySession[r.SessionID]
		if got[f] == nil {
			got[f] = &counts{}
		}
		switch r.Kind {
		case schema.KindRaw:
			got[f].raw++
		case schema.KindMessage:
			got[f].msgs++
		case schema.KindExchange:
			got[f].exchanges++
		}
	}
	// Independent counts: lines, and prompts as Codex's user_message events.
	files, _ := (&extract.Options{}).Walk(context.Background(), []string{dir}, extract.Match{Name: func(p string) bool { return strings.HasSuffix(p, ".jsonl") }})
	if len(files) != 5 {
		t.Fatalf("%d corpus files, want 5", len(files))
	}
	// Messages after pos-normalize merged each request's items into one:
	// one per request (a token count that grew), one per tool output, one
	// per user or developer item.
	wantMsgs := map[string]int{
		"rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl": 81 + 104 + 10 + 10,
		"rollout-2026-02-23T12-41-04-019c8a4d-8f45-7010-8b5d-7fad920aa6f9.jsonl": 28 + 118 + 3 + 4,
		"rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl": 83 + 143 + 13 + 15,
		"rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl": 6 + 5 + 3 + 4,
		"session-01.jsonl": 1 + 0 + 2 + 1,
	}
	var want schema.Usage
	for _, f := range files {
		base := filepath.Base(f.Path)
		fc := scanCorpusFile(t, f.Path)
		c := got[base]
		if c == nil {
			t.Fatalf("%s: no records", base)
		}
		if fc.msgs != wantMsgs[base] {
			t.Errorf("%s: the file has %d message-making items, the table says %d", base, fc.msgs, wantMsgs[base])
		}
		if c.raw != fc.lines || c.exchanges != fc.prompts || c.msgs != fc.msgs {
			t.Errorf("%s: %d raw, %d messages, %d exchanges; want %d, %d, %d", base, c.raw, c.msgs, c.exchanges, fc.lines, fc.msgs, fc.prompts)
		}
		last := fc.last
		want.Add(&schema.Usage{Input: last.Input - last.Cached, Output: last.Output, CacheRead: last.Cached})
	}
	// Token sums: the messages', and the session rollups', equal the sum of
	// each session's last cumulative total.
	if u := sumUsage(norm, func(r *schema.Record) bool { return r.Role == schema.RoleAssistant }); u != want {
		t.Errorf("message usage %+v, want %+v", u, want)
	}
	var sess schema.Usage
	for _, r := range norm {
		if r.Kind == schema.KindSession {
			sess.Add(r.Usage)
		}
	}
	if sess != want {
		t.Errorf("session usage %+v, want %+v", sess, want)
	}
	t.Logf("corpus tokens: %+v", want)
}

type fileCounts struct {
	lines, prompts, msgs int
	last                 tokens // the last cumulative total
}

// scanCorpusFile counts a rollout's lines, user_message events and the
// items that make messages, and finds its last cumulative token total,
// with plain encoding/json.
func scanCorpusFile(t *testing.T, path string) (c fileCounts) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l struct {
			Type    string `json:"type"`
			Payload struct {
				Type string `json:"type"`
				Role string `json:"role"`
				Info *struct {
					Total *tokens `json:"total_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		c.lines++
		switch {
		case l.Type == "event_msg" && l.Payload.Type == "user_message":
			c.prompts++
		case l.Type == "event_msg" && l.Payload.Type == "token_count" && l.Payload.Info != nil && l.Payload.Info.Total != nil:
			if *l.Payload.Info.Total != c.last {
				c.msgs++ // a request's items become one message
			}
			c.last = *l.Payload.Info.Total
		case l.Type == "response_item" && (strings.HasSuffix(l.Payload.Type, "_output") || (l.Payload.Type == "message" && l.Payload.Role != "assistant")):
			c.msgs++
		}
	}
	return c
}

// TestOtherToolsIgnored: other tools' .jsonl files under the same root
// (Claude Code transcripts, Gemini chats) are not taken for rollouts.
func TestOtherToolsIgnored(t *testing.T) {
	others := []string{filepath.Join("..", "..", "testdata", "gemini"), filepath.Join("..", "..", "testdata", "claude")}
	extracttest.Ignores(t, Adapter{}, others...)
}

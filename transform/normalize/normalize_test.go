package normalize

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/testrec"

	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/enrich"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixtureStream is pos-extract's output over testdata/claude (kept as a
// golden file by the extract tests).
func fixtureStream(t *testing.T) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "claude", "extract.golden.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func normalizeAll(t *testing.T, in []byte) ([]*schema.Record, Stats) {
	t.Helper()
	var out bytes.Buffer
	st, err := Normalize(context.Background(), bytes.NewReader(in), &out, Options{Name: "test", Enrich: enrich.All})
	if err != nil {
		t.Fatal(err)
	}
	return testrec.Decode(t, &out), st
}

func TestFixture(t *testing.T) {
	in := fixtureStream(t)
	recs, st := normalizeAll(t, in)

	kinds := map[schema.Kind]int{}
	for _, r := range recs {
		kinds[r.Kind]++
		if r.Kind == schema.KindMessage && len(r.Raw) > 0 {
			t.Fatalf("message kept its raw record: %s", r.ID)
		}
	}
	// Every native line's record is in the raw layer (34 lines), the replayed
	// prompt of session 3 is dropped, and the three lines of msg_01A are one
	// message.
	if kinds[schema.KindRaw] != 34 || st.Replays != 1 || st.Merged != 2 {
		t.Fatalf("kinds %v, stats %+v", kinds, st)
	}
	var merged *schema.Record
	for _, r := range recs {
		if r.Kind == schema.KindMessage && r.NativeID == "msg_01A" {
			if merged != nil {
				t.Fatal("msg_01A emitted twice")
			}
			merged = r
		}
	}
	if merged == nil || merged.Usage.Output != 120 || merged.Thinking == "" || len(merged.Tools) != 1 ||
		!strings.Contains(merged.Text, "calls itself") || merged.ContentType != schema.ContentText ||
		merged.TS.Format("15:04:05") != "09:00:03" {
		t.Fatalf("merged message: %+v", merged)
	}
	// A child of an absorbed line points at the merged message.
	for _, r := range recs {
		if r.Kind == schema.KindMessage && strings.Contains(r.Text, "") && r.Role == schema.RoleTool && r.Tools[0].CallID == "toolu_01" && r.ParentID != merged.ID {
			t.Fatalf("tool result parent %s, want the merged message %s", r.ParentID, merged.ID)
		}
	}

	var exchanges []*schema.Record
	docs := map[string]*schema.Record{}
	sessions := map[string]*schema.Record{}
	for _, r := range recs {
		switch r.Kind {
		case schema.KindExchange:
			exchanges = append(exchanges, r)
		case schema.KindDocument:
			docs[r.ContentType+":"+r.Title] = r
		case schema.KindSession:
			sessions[r.SessionID] = r
		}
	}
	var prompts []string
	for _, e := range exchanges {
		p := e.Exchange.Prompt
		if len(p) > 12 {
			p = p[:12]
		}
		prompts = append(prompts, e.SessionID[:2]+" "+p)
	}
	// Session 1: three prompts in the main thread and its subagent's; session
	// 2: a prompt and its inline sidechain's; session 3: a prompt and the
	// warmup agent, which has no prompt but is still a unit of work.
	want := "11 The login pa|11 /model|11 Now add a te|11 Write a test|22 Upgrade the |22 List outdate|33 Also handle |33 "
	if got := strings.Join(prompts, "|"); got != want {
		t.Fatalf("exchanges\n got %q\nwant %q", got, want)
	}
	first := exchanges[0]
	if first.Exchange.MessageCount != 7 || first.Exchange.ToolCount != 2 || first.Usage.Output != 180 ||
		strings.Join(first.Files, ",") != "/home/dev/webapp/src/auth.ts" || !strings.Contains(first.Text, "return the target URL") {
		t.Fatalf("first exchange: %+v %+v", first, first.Exchange)
	}
	if d := docs["subagent_summary:general-purpose: Write a test for redirect()"]; d == nil || d.Text != "Added tests/redirect.test.ts; 3 tests pass." {
		t.Fatalf("subagent report missing: %v", docs)
	}
	s1 := sessions["11111111-1111-4111-8111-111111111111"]
	if s1 == nil || s1.Title != "Fix login redirect loop" || s1.Session.Slug != "quiet-blue-heron" || s1.Session.PlanID == "" ||
		s1.Session.Compactions != 1 || s1.Session.UserCount != 3 || len(s1.Session.Models) != 2 {
		t.Fatalf("session 1: %+v %+v", s1, s1.Session)
	}
	// Enrichment: the files the tools named, the commit a tool reported, the
	// decision stated, the tags of each exchange.
	var refs, decisions []*schema.Record
	for _, r := range recs {
		switch r.Kind {
		case schema.KindFileRef:
			refs = append(refs, r)
		case schema.KindDecision:
			decisions = append(decisions, r)
		}
	}
	if len(refs) != 3 || refs[0].FileRef.Path != "/home/dev/webapp/src/auth.ts" || refs[0].FileRef.Action != "read" ||
		refs[0].FileRef.ExchangeID != exchanges[0].ID || refs[1].FileRef.Action != "edit" {
		t.Fatalf("file refs: %d, first %+v", len(refs), refs[0].FileRef)
	}
	if len(decisions) != 1 || decisions[0].Decision.Status != "decision" || decisions[0].Decision.Context != "Upgrade the dependencies in package.json" ||
		!strings.HasPrefix(decisions[0].Text, "Let's go with react 19") {
		t.Fatalf("decisions: %+v", decisions)
	}
	if c := exchanges[2].Exchange.Commits; len(c) != 1 || c[0] != "3f2a9c1" {
		t.Fatalf("commits of %q: %v", exchanges[2].Exchange.Prompt, c)
	}
	if strings.Join(exchanges[0].Tags, ",") != "typescript" {
		t.Fatalf("tags %v", exchanges[0].Tags)
	}
	golden(t, "normalize.golden.ndjson", recs)
}

func golden(t *testing.T, name string, recs []*schema.Record) {
	t.Helper()
	var got []byte
	for _, r := range recs {
		got = append(schema.AppendRecord(got, r), '\n')
	}
	path := filepath.Join("..", "..", "testdata", "claude", name)
	if *update {
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs (go test -update rewrites it)", name)
	}
}

func TestPassesUnknownKindsAndFields(t *testing.T) {
	in := `{"schema":"pos/2","kind":"hologram","id":"h1","future":{"a":1}}` + "\n" +
		`{"schema":"pos/1","kind":"checkpoint","checkpoint":{"platform":"x","path":"/p","size":1,"resume":1,"seen":1,"lines":1}}` + "\n"
	var out bytes.Buffer
	if _, err := Normalize(context.Background(), strings.NewReader(in), &out, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != in {
		t.Fatalf("not passed through:\n%s", got)
	}
}

func TestBadLinesAreReportedAndSkipped(t *testing.T) {
	in := "{\"kind\":\"message\",\"id\":\"1\",\"platform\":\"p\",\"session_id\":\"s\",\"role\":\"user\",\"content_type\":\"text\",\"text\":\"hi\"}\nnot json\n"
	var bad []*schema.BadInput
	var out bytes.Buffer
	st, err := Normalize(context.Background(), strings.NewReader(in), &out, Options{Name: "in.ndjson", OnSkip: func(b *schema.BadInput) error {
		bad = append(bad, b)
		return nil
	}})
	if err != nil || st.Skipped != 1 || len(bad) != 1 || !strings.HasPrefix(bad[0].Error(), "in.ndjson:2: ") {
		t.Fatalf("err %v, stats %+v, bad %v", err, st, bad)
	}
	if st.Exchanges != 1 || st.Sessions != 1 {
		t.Fatalf("the good line was not processed: %+v", st)
	}
}

func TestReplayFilterIsBounded(t *testing.T) {
	f := replayFilter{max: 4}
	for i := range 100 {
		if f.seen(string(rune('a' + i))) {
			t.Fatal("false replay")
		}
	}
	if len(f.cur)+len(f.prev) > 8 {
		t.Fatalf("filter holds %d ids", len(f.cur)+len(f.prev))
	}
	if !f.seen(string(rune('a' + 99))) {
		t.Fatal("recent id forgotten")
	}
}

// A resumed run reads the open exchange again: lines an earlier run
// delivered come marked as replays. They rebuild the exchange (its message
// count, tokens and files) but are not written again, and an assistant
// message that goes on past the watermark is written whole.
func TestReplayedContext(t *testing.T) {
	src := func(line int64, replay bool) string {
		return `"source":{"path":"/s.jsonl","line":` + strconv.FormatInt(line, 10) + `,"offset":` + strconv.FormatInt(line*100, 10) + `,"replay":` + strconv.FormatBool(replay) + `}`
	}
	head := `{"schema":"pos/1","kind":"message","platform":"claude_code","session_id":"s1",`
	in := strings.Join([]string{
		head + `"id":"p1","role":"user","content_type":"text","text":"We decided to fix the parser because it is slow.","ts":"2026-03-01T10:00:00Z",` + src(1, true) + `}`,
		head + `"id":"a1","native_id":"msg_1","request_id":"r1","role":"assistant","content_type":"tool_use","ts":"2026-03-01T10:00:01Z","tools":[{"name":"Edit","call_id":"c1","input":{"file_path":"/w/parser.go"}}],"usage":{"input":10,"output":5},` + src(2, true) + `}`,
		head + `"id":"t1","role":"tool","content_type":"tool_result","ts":"2026-03-01T10:00:02Z","tools":[{"call_id":"c1","output":"ok"}],` + src(3, true) + `}`,
		head + `"id":"a2","native_id":"msg_2","request_id":"r2","role":"assistant","content_type":"text","text":"We decided to use a hand-written scanner because it is faster.","ts":"2026-03-01T10:00:03Z","usage":{"input":20,"output":7},` + src(4, true) + `}`,
		// The watermark was here: msg_2 goes on, then a new prompt.
		head + `"id":"a3","native_id":"msg_2","request_id":"r2","role":"assistant","content_type":"text","text":"Done.","ts":"2026-03-01T10:00:04Z","usage":{"input":20,"output":9},` + src(5, false) + `}`,
		head + `"id":"p2","role":"user","content_type":"text","text":"thanks","ts":"2026-03-01T10:01:00Z",` + src(6, false) + `}`,
	}, "\n") + "\n"
	recs, st := normalizeAll(t, []byte(in))
	var msgs []string
	var ex *schema.Record
	decisions := 0
	for _, r := range recs {
		switch r.Kind {
		case schema.KindMessage:
			msgs = append(msgs, r.ID+":"+r.Text)
			if r.Source != nil && r.Source.Replay {
				t.Fatalf("message %s written still marked as a replay", r.ID)
			}
		case schema.KindFileRef, schema.KindDecision:
			if r.ParentID != "a2" {
				t.Fatalf("%s of a replayed message written again: %+v", r.Kind, r)
			}
			decisions++
		case schema.KindExchange:
			if ex == nil {
				ex = r
			}
		}
	}
	if want := []string{"a2:We decided to use a hand-written scanner because it is faster.\nDone.", "p2:thanks"}; !slices.Equal(msgs, want) {
		t.Fatalf("messages %q, want %q", msgs, want)
	}
	if decisions != 1 {
		t.Fatalf("%d decisions from the message written whole, want 1", decisions)
	}
	if st.Context != 4 {
		t.Fatalf("context lines %d, want 4", st.Context)
	}
	if ex == nil || ex.Exchange == nil || ex.Exchange.MessageCount != 4 || ex.Usage == nil || ex.Usage.Output != 14 || !slices.Contains(ex.Files, "/w/parser.go") {
		t.Fatalf("exchange rebuilt from the replayed lines: %+v %+v", ex, ex.Exchange)
	}
}

// TestTitleRanks: of the session records an adapter emits for one session
// in a run, the name the user gave it holds against a later platform
// title, and a later title of the same rank or higher replaces it.
func TestTitleRanks(t *testing.T) {
	hint := func(title, source string) *schema.Record {
		r := schema.New(schema.KindSession)
		r.Platform, r.SessionID, r.Title = "claude_code", "s", title
		r.Session = &schema.Session{TitleSource: source}
		return r
	}
	for _, c := range []struct {
		hints       []*schema.Record
		title, from string
	}{
		{[]*schema.Record{hint("mine", schema.TitleUser), hint("label", schema.TitlePlatform)}, "mine", schema.TitleUser},
		{[]*schema.Record{hint("label", schema.TitlePlatform), hint("mine", schema.TitleUser)}, "mine", schema.TitleUser},
		{[]*schema.Record{hint("old", schema.TitleUser), hint("new", schema.TitleUser)}, "new", schema.TitleUser},
		{[]*schema.Record{hint("old", ""), hint("new", schema.TitlePlatform)}, "new", schema.TitlePlatform},
		{[]*schema.Record{hint("mine", schema.TitleUser), hint("", "")}, "mine", schema.TitleUser},
	} {
		var out []*schema.Record
		n := New(Options{}, func(r *schema.Record) error { out = append(out, r); return nil })
		for _, h := range c.hints {
			if err := n.Add(h); err != nil {
				t.Fatal(err)
			}
		}
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		if len(out) != 1 {
			t.Fatalf("%d records, want the session rollup", len(out))
		}
		if out[0].Title != c.title || out[0].Session.TitleSource != c.from {
			t.Fatalf("title %q from %q; want %q from %q", out[0].Title, out[0].Session.TitleSource, c.title, c.from)
		}
	}
}

// TestAdvisorCalls: the calls to an advisor model within a message become
// assistant messages of the advisor's model (content type "usage", no
// text), taken from the message's last line that lists them, after the
// message; the message keeps its own usage and no longer lists them; the
// exchange and the session count both models; a replayed message's calls
// are not written again; the ids are the same in every run.
func TestAdvisorCalls(t *testing.T) {
	src := func(line int64, replay bool) string {
		return `"source":{"path":"/s.jsonl","line":` + strconv.FormatInt(line, 10) + `,"offset":` + strconv.FormatInt(line*100, 10) + `,"replay":` + strconv.FormatBool(replay) + `}`
	}
	head := `{"schema":"pos/1","kind":"message","platform":"claude_code","session_id":"s1",`
	adv := func(in int64) string {
		return `"advisor":[{"model":"claude-opus-4-6","input":` + strconv.FormatInt(in, 10) + `,"output":600,"cache_creation":1000,"cache_read":0,"cache_creation_1h":1000}]`
	}
	in := strings.Join([]string{
		head + `"id":"p0","role":"user","content_type":"text","text":"old","ts":"2026-03-01T09:00:00Z",` + src(1, true) + `}`,
		head + `"id":"a0","native_id":"msg_0","request_id":"r0","role":"assistant","content_type":"text","text":"before","model":"claude-sonnet-4-6","ts":"2026-03-01T09:00:01Z","usage":{"input":1,"output":1},` + adv(9) + `,` + src(2, true) + `}`,
		head + `"id":"p1","role":"user","content_type":"text","text":"plan it","ts":"2026-03-01T10:00:00Z",` + src(3, false) + `}`,
		// One message over two lines, the call listed on both.
		head + `"id":"a1","native_id":"msg_1","request_id":"r1","role":"assistant","content_type":"text","text":"part one","model":"claude-sonnet-4-6","ts":"2026-03-01T10:00:01Z","usage":{"input":100,"output":10},` + adv(5000) + `,` + src(4, false) + `}`,
		head + `"id":"a2","native_id":"msg_1","request_id":"r1","role":"assistant","content_type":"text","text":"part two","model":"claude-sonnet-4-6","ts":"2026-03-01T10:00:02Z","usage":{"input":100,"output":50},` + adv(5001) + `,` + src(5, false) + `}`,
	}, "\n") + "\n"
	run := func() ([]*schema.Record, Stats) { return normalizeAll(t, []byte(in)) }
	recs, st := run()
	var msgs []*schema.Record
	var ex, sess *schema.Record
	for _, r := range recs {
		switch r.Kind {
		case schema.KindMessage:
			msgs = append(msgs, r)
		case schema.KindExchange:
			if r.Exchange.Prompt == "plan it" {
				ex = r
			}
		case schema.KindSession:
			sess = r
		}
	}
	if len(msgs) != 3 || msgs[0].ID != "p1" || msgs[1].ID != "a1" {
		t.Fatalf("messages %d: want p1, a1 and one advisor call (none for the replayed a0)", len(msgs))
	}
	exec, call := msgs[1], msgs[2]
	if len(exec.Advisor) != 0 || *exec.Usage != (schema.Usage{Input: 100, Output: 50}) || exec.Model != "claude-sonnet-4-6" {
		t.Errorf("executor: advisor %+v usage %+v model %q", exec.Advisor, *exec.Usage, exec.Model)
	}
	if call.Role != schema.RoleAssistant || call.ContentType != schema.ContentUsage || call.NativeType != "advisor_message" ||
		call.Model != "claude-opus-4-6" || call.Text != "" || call.ParentID != "a1" || call.RequestID != "r1" ||
		!call.TS.Equal(exec.TS) || call.SessionID != "s1" || call.Source == nil || call.Source.Line != 4 ||
		*call.Usage != (schema.Usage{Input: 5001, Output: 600, CacheCreation: 1000, CacheCreation1h: 1000}) {
		t.Errorf("advisor call %+v usage %+v", call, call.Usage)
	}
	if st.Advisor != 2 || st.Messages != 3 {
		t.Errorf("stats: %d advisor calls (the replayed one counts), %d messages written; want 2 and 3", st.Advisor, st.Messages)
	}
	if ex == nil || ex.Usage == nil || ex.Usage.Input != 5101 || ex.Usage.Output != 650 ||
		!slices.Equal(ex.Exchange.Models, []string{"claude-sonnet-4-6", "claude-opus-4-6"}) || ex.Exchange.Response != "part one\npart two" {
		t.Errorf("exchange: usage %+v %+v", ex.Usage, ex.Exchange)
	}
	if sess == nil || len(sess.Session.Models) != 2 {
		t.Fatalf("session models: %+v", sess)
	}
	for _, m := range sess.Session.Models {
		if m.Model == "claude-opus-4-6" && (m.Messages != 2 || m.Input != 5001+9) {
			t.Errorf("session: advisor's model %+v", m)
		}
	}
	again, _ := run()
	var ids []string
	for _, r := range again {
		if r.Kind == schema.KindMessage {
			ids = append(ids, r.ID)
		}
	}
	if want := []string{"p1", "a1", call.ID}; !slices.Equal(ids, want) {
		t.Errorf("ids of a second run %q, want %q", ids, want)
	}
}

package gemini

import (
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
	sA = "aaaa1111-0000-4000-8000-000000000001" // legacy .json
	sB = "bbbb2222-0000-4000-8000-000000000002" // .jsonl: updates, $rewindTo, $set
	sC = "cccc3333-0000-4000-8000-000000000003" // .jsonl: a $set with messages
	sD = "dddd4444-0000-4000-8000-000000000004" // B's subagent
)

const siteHash = "67a32ece2ae96f76490f75686ef9f5cd2e43ef798ce37fe01a72ec6c279fc3ff"

// fixture copies testdata/gemini/home to a temp dir with fixed mtimes and
// returns its .gemini directory.
func fixture(t *testing.T) string {
	return filepath.Join(extracttest.Fixture(t, "gemini/home", ""), ".gemini")
}

var find = extracttest.Find

// msg returns the message with the given native id.
func msg(t *testing.T, recs []*schema.Record, id string) *schema.Record {
	t.Helper()
	m := find(extracttest.Messages(recs), func(r *schema.Record) bool { return r.NativeID == id })
	if len(m) != 1 {
		t.Fatalf("%d messages %s", len(m), id)
	}
	return m[0]
}

func TestFixture(t *testing.T) {
	root := fixture(t)
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}})

	if len(res.Skips) != 1 || !strings.Contains(res.Skips[0].Path, "bbbb2222.jsonl") || res.Skips[0].Line != 11 ||
		!strings.Contains(res.Skips[0].Error(), ".jsonl:11: invalid JSON") {
		t.Fatalf("skips: %v", res.Skips)
	}
	if got := res.Stats.Partial.Load(); got != 1 {
		t.Fatalf("partial lines %d", got)
	}
	// Every line, and every message of the legacy file plus its metadata,
	// is one raw record; a message follows the raw record it was made from.
	raw := 0
	for i, r := range res.Recs {
		if r.Source != nil && (strings.HasSuffix(r.Source.Path, "logs.json") || strings.Contains(r.Source.Path, "checkpoint-")) {
			t.Fatalf("read %s, which is not a chat", r.Source.Path)
		}
		switch r.Kind {
		case schema.KindRaw:
			raw++
			if len(r.Raw) == 0 || r.Source == nil || (r.Source.Line == 0 && r.Source.Key == "") || r.ID != schema.RawID(r) {
				t.Fatalf("raw record without raw or provenance: %+v", r)
			}
		case schema.KindMessage:
			if r.Source.Key != "" && strings.HasPrefix(r.Source.Key, "$set.") {
				continue // made from an element of the $set line before it
			}
			if len(r.Raw) > 0 || i == 0 || res.Recs[i-1].Kind != schema.KindRaw || *res.Recs[i-1].Source != *r.Source {
				t.Fatalf("message %s does not follow its raw record", r.ID)
			}
		}
	}
	if want := 8 + 12 + 6 + 3; raw != want {
		t.Fatalf("%d raw records, want %d", raw, want)
	}

	// The legacy file: thoughts, tokens, tool calls with results and errors.
	g1 := msg(t, res.Recs, "a-g1")
	if g1.Role != schema.RoleAssistant || g1.Text != "It compiles, then bundles." || g1.Thinking != "Reading the script: It calls make." ||
		g1.Model != "gemini-2.5-pro" || *g1.Usage != (schema.Usage{Input: 405, Output: 70, CacheRead: 600}) ||
		g1.Source.Key != "messages[1]" || g1.SessionID != sA || g1.Project != siteHash {
		t.Fatalf("gemini message: %+v %+v", g1, g1.Usage)
	}
	if len(g1.Tools) != 2 || g1.Tools[0].Output != "#!/bin/sh\nmake all" || g1.Tools[0].IsError ||
		!g1.Tools[1].IsError || g1.Tools[1].Output != "Permission denied" || string(g1.Tools[0].Input) != `{"absolute_path":"/home/dev/site/build.sh"}` {
		t.Fatalf("tool calls: %+v", g1.Tools)
	}
	if len(g1.Files) != 2 || g1.Files[1] != "/home/dev/site/out.txt" {
		t.Fatalf("files %v", g1.Files)
	}
	if r := msg(t, res.Recs, "a-u2"); r.Text != "Thanks! Summarise @build.sh" || r.ParentID != msg(t, res.Recs, "a-e1").ID {
		t.Fatalf("displayed prompt: %+v", r)
	}
	if r := msg(t, res.Recs, "a-i1"); r.Role != schema.RoleSystem || r.ContentType != schema.ContentMeta {
		t.Fatalf("info: %+v", r)
	}
	if r := msg(t, res.Recs, "a-e1"); r.ContentType != schema.ContentError {
		t.Fatalf("error: %+v", r)
	}
	if f := find(res.Recs, func(r *schema.Record) bool { return r.NativeType == "message/a_future_kind" }); len(f) != 1 || f[0].Kind != schema.KindRaw {
		t.Fatalf("unknown message type not kept raw: %+v", f)
	}

	// The JSONL file: the last copy of b-g1 wins, the rewind drops b-u2 and
	// b-g2, unknown lines stay raw.
	var texts []string
	for _, r := range extracttest.Messages(res.Recs) {
		if r.SessionID == sB && r.Agent == nil {
			texts = append(texts, r.NativeID)
		}
	}
	if strings.Join(texts, ",") != "b-u1,b-g1,b-u3,b-g3" {
		t.Fatalf("jsonl messages %v", texts)
	}
	bg1 := msg(t, res.Recs, "b-g1")
	if bg1.Source.Line != 5 || bg1.Text != "I'll split the router by resource." || *bg1.Usage != (schema.Usage{Input: 500, Output: 140, CacheRead: 1500}) ||
		bg1.Tools[0].Name != "replace" || bg1.Files[0] != "/home/dev/webapp/src/router.ts" || bg1.Project != "/home/dev/webapp" || bg1.Cwd != "/home/dev/webapp" {
		t.Fatalf("updated message: %+v", bg1)
	}
	meta := func(line int64) string {
		for _, r := range res.Recs {
			if r.Kind == schema.KindRaw && strings.HasSuffix(r.Source.Path, "bbbb2222.jsonl") && r.Source.Line == line {
				return r.NativeType + " " + string(r.Meta)
			}
		}
		return ""
	}
	if meta(4) != `message/gemini {"superseded":true}` || meta(6) != `message/user {"rewound":true}` || meta(7) != `message/gemini {"rewound":true}` ||
		meta(8) != "$rewindTo " || meta(13) != "unknown " || meta(12) != "$set " || meta(1) != "metadata " {
		t.Fatalf("raw lines: %q %q %q %q %q %q", meta(4), meta(6), meta(7), meta(8), meta(12), meta(13))
	}
	// A $set with messages rewrites the conversation: its copies are the
	// messages, made after its line.
	cg1 := msg(t, res.Recs, "c-g1")
	if cg1.Source.Key != "$set.messages[1]" || cg1.Source.Line != 4 || cg1.Tools[0].Output != "<tool output masked>" || cg1.Usage.Input != 1000 {
		t.Fatalf("$set message: %+v", cg1)
	}
	if r := msg(t, res.Recs, "c-u2"); r.ParentID != cg1.ID {
		t.Fatalf("c-u2 parent %s, want %s", r.ParentID, cg1.ID)
	}
	// The subagent's chat is a sidechain thread of its parent's session.
	dg1 := msg(t, res.Recs, "d-g1")
	if dg1.SessionID != sB || dg1.Agent == nil || dg1.Agent.ID != sD || !dg1.Agent.Sidechain || dg1.Agent.Type != "subagent" {
		t.Fatalf("subagent: %+v %+v", dg1, dg1.Agent)
	}
	// Session records: the summary is the title; none for the subagent.
	sess := find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindSession })
	if len(sess) != 3 {
		t.Fatalf("%d session records", len(sess))
	}
	for _, s := range sess {
		switch s.SessionID {
		case sA:
			if s.Title != "Build script explained" || !strings.Contains(string(s.Meta), siteHash) {
				t.Fatalf("session A: %+v", s)
			}
		case sB:
			if s.Title != "Router refactor" || s.Project != "/home/dev/webapp" || s.Session.TitleSource != "platform" {
				t.Fatalf("session B: %+v", s)
			}
		}
	}
	extracttest.GoldenRecords(t, extracttest.Testdata("gemini", "extract.golden.ndjson"), res.Recs, filepath.Dir(root), *update)
}

func TestIncremental(t *testing.T) {
	root := fixture(t)
	first, st := extracttest.FirstRun(t, Adapter{}, extract.Options{Roots: []string{root}}, 4)
	cpB := extracttest.Checkpoint(first.Recs, "bbbb2222.jsonl")
	// The open exchange starts at b-u3 (line 9); the half-written line is
	// not consumed.
	if cpB == nil || cpB.Lines != 8 || cpB.Size == cpB.Seen || cpB.Context["summary"] != "Router refactor" || cpB.Context["session_id"] != sB {
		t.Fatalf("checkpoint %+v", cpB)
	}

	pB := filepath.Join(root, "tmp", "webapp", "chats", "session-2026-03-02T10-00-bbbb2222.jsonl")
	extracttest.AppendFile(t, pB,
		`ate the docs."}]}`+"\n",
		`{"id":"b-g4","timestamp":"2026-03-02T10:03:05.000Z","type":"gemini","content":"Docs updated.","model":"gemini-2.5-pro"}`+"\n",
		`{"id":"b-g4","timestamp":"2026-03-02T10:03:05.000Z","type":"gemini","content":"Docs updated.","model":"gemini-2.5-pro","tokens":{"input":3000,"output":30,"cached":2500,"thoughts":0,"tool":0,"total":3030}}`+"\n",
	)
	// The legacy file is rewritten whole with one more message.
	pA := filepath.Join(root, "tmp", siteHash, "chats", "session-2026-03-01T09-00-aaaa1111.json")
	var conv map[string]any
	b, _ := os.ReadFile(pA)
	json.Unmarshal(b, &conv)
	conv["messages"] = append(conv["messages"].([]any), map[string]any{"id": "a-u3", "timestamp": "2026-03-01T09:03:00.000Z", "type": "user", "content": []any{map[string]any{"text": "One more thing."}}})
	b, _ = json.MarshalIndent(conv, "", "  ")
	os.WriteFile(pA, b, 0o644)
	// Files are read oldest first: fix the order of the two changed files.
	os.Chtimes(pA, time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC))
	os.Chtimes(pB, time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC))

	inc := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
	var ids []string
	for _, r := range extracttest.Messages(inc.Recs) {
		ids = append(ids, r.NativeID)
	}
	// The legacy file again whole; the JSONL file from its open exchange.
	if strings.Join(ids, ",") != "a-u1,a-g1,a-i1,a-e1,a-u2,a-g2,a-u3,b-u3,b-g3,b-u4,b-g4" {
		t.Fatalf("incremental messages %v", ids)
	}
	if g4 := msg(t, inc.Recs, "b-g4"); g4.Usage == nil || g4.Usage.Input != 500 || g4.Source.Line != 16 {
		t.Fatalf("b-g4: %+v", g4)
	}
	if len(inc.Skips) != 1 || inc.Skips[0].Line != 11 {
		t.Fatalf("skips %v", inc.Skips)
	}
	if c := extracttest.Checkpoint(inc.Recs, "bbbb2222.jsonl"); c == nil || c.Lines != 13 || c.Size != c.Seen {
		t.Fatalf("checkpoint %+v", c)
	}
}

func TestSince(t *testing.T) {
	root := fixture(t)
	since := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	res := extracttest.Since(t, Adapter{}, extract.Options{Roots: []string{root}, Since: since})
	if len(find(extracttest.Messages(res.Recs), func(r *schema.Record) bool { return r.SessionID == sC })) != 4 {
		t.Fatal("newer records were dropped")
	}
}

func TestDefaultRoots(t *testing.T) {
	dir := fixture(t)
	home := filepath.Dir(dir)
	res := extracttest.DefaultRoots(t, Adapter{}, home, "~/.gemini/tmp", "GEMINI_CLI_HOME", home)
	for _, root := range []string{home, dir} {
		if n := len(extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}}).Recs); n != len(res.Recs) {
			t.Fatalf("--root %s: %d records, want %d", root, n, len(res.Recs))
		}
	}
	if l := (Adapter{}).Locations(extract.Options{Home: "/h"}); len(l) != 1 || l[0] != filepath.Join("/h", ".gemini", "tmp") {
		t.Fatalf("locations %v", l)
	}
}

// TestCorpus reads the real chat file, runs the records through
// pos-normalize in-process, and checks the counts and the token sums
// against a computation of its own over the file.
func TestCorpus(t *testing.T) {
	dir, res := extracttest.Corpus(t, Adapter{}, "gemini")
	norm, _ := extracttest.Normalize(t, normalize.Options{Name: "corpus"}, res.Recs)
	files, _ := (&extract.Options{}).Walk(context.Background(), []string{dir}, extract.Match{Name: chatName, Content: func(p string) (bool, error) { return isChat(&extract.Options{}, p) }})
	if len(files) != 1 {
		t.Fatalf("%d corpus files, want 1", len(files))
	}
	b, err := os.ReadFile(files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	var conv struct {
		Messages []struct {
			Type   string `json:"type"`
			Tokens *struct {
				Input, Output, Cached, Thoughts, Tool int64
			} `json:"tokens"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b, &conv); err != nil {
		t.Fatal(err)
	}
	var want schema.Usage
	prompts := 0
	for _, m := range conv.Messages {
		if m.Type == "user" {
			prompts++
		}
		if k := m.Tokens; k != nil {
			want.Add(&schema.Usage{Input: k.Input - k.Cached + k.Tool, Output: k.Output + k.Thoughts, CacheRead: k.Cached})
		}
	}
	count := func(k schema.Kind) int { return len(find(norm, func(r *schema.Record) bool { return r.Kind == k })) }
	if raw, msgs, ex := count(schema.KindRaw), count(schema.KindMessage), count(schema.KindExchange); raw != 1+len(conv.Messages) || msgs != len(conv.Messages) || ex != prompts || msgs != 2 {
		t.Fatalf("%d raw, %d messages, %d exchanges; want %d, %d, %d", raw, msgs, ex, 1+len(conv.Messages), len(conv.Messages), prompts)
	}
	var got, sess schema.Usage
	for _, r := range norm {
		switch {
		case r.Kind == schema.KindMessage:
			got.Add(r.Usage)
		case r.Kind == schema.KindSession:
			sess.Add(r.Usage)
		}
	}
	if got != want || sess != want || want.Input != 4383 || want.Output != 36 {
		t.Fatalf("usage %+v, sessions %+v, want %+v", got, sess, want)
	}
	t.Logf("corpus tokens: %+v", want)
}

// TestOtherToolsIgnored: other tools' files under the same root (Codex
// rollouts, Claude Code transcripts) are not taken for chats, even one
// named session-*.jsonl.
func TestOtherToolsIgnored(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "session-01.jsonl"), []byte(`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x","sessionId":"y"}}`+"\n"), 0o644)
	others := []string{dir, filepath.Join("..", "..", "testdata", "codex"), filepath.Join("..", "..", "testdata", "claude")}
	extracttest.Ignores(t, Adapter{}, others...)
}

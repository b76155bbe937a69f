package push

import (
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

// fixture copies testdata/push/push to a temp dir with fixed mtimes and
// returns the copy.
func fixture(t *testing.T) string {
	return extracttest.Fixture(t, "push/push", "push")
}

var find = extracttest.Find

func TestFixture(t *testing.T) {
	root := fixture(t)
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}})

	// The line that is not JSON is reported with its file and line, and so
	// is the JSON array, kept in the raw layer only; the half-written last
	// line is left for later.
	if len(res.Skips) != 2 || !strings.HasSuffix(res.Skips[0].Path, "s-42.jsonl") || res.Skips[0].Line != 7 ||
		!strings.Contains(res.Skips[0].Error(), "s-42.jsonl:7: invalid JSON") ||
		!strings.HasSuffix(res.Skips[1].Error(), "s-42.jsonl:8: an array, not an object: kept in the raw layer only") {
		t.Fatalf("skips: %v", res.Skips)
	}
	if got := res.Stats.Partial.Load(); got != 1 {
		t.Fatalf("partial lines %d", got)
	}
	// Every other line is a raw record; its messages follow it, two of
	// them for an exchange event.
	for _, r := range res.Recs {
		if r.Kind == schema.KindRaw && strings.HasSuffix(r.Source.Path, ".md") {
			t.Fatal("read a file that is not a .jsonl log")
		}
	}
	if raws := extracttest.Contract(t, res.Recs, 2); raws != 15 {
		t.Fatalf("%d raw records, want 15", raws)
	}
	msgs := extracttest.Messages(res.Recs)
	byText := func(s string) *schema.Record {
		t.Helper()
		for _, m := range msgs {
			if m.Text == s {
				return m
			}
		}
		t.Fatalf("no message %q", s)
		return nil
	}
	// An exchange event (the seed's own lines, without "v") is a prompt and
	// an answer, linked.
	u, a := byText("What are embeddings?"), byText("Embeddings are vectors that place similar texts close together.")
	if u.Role != schema.RoleUser || u.ContentType != schema.ContentText || u.SessionID != "abc123" || a.ParentID != u.ID ||
		a.Role != schema.RoleAssistant || !a.TS.Equal(time.Date(2025, 10, 25, 14, 30, 0, 0, time.UTC)) || a.TSPrecision != schema.PrecisionExact {
		t.Fatalf("exchange: %+v %+v", u, a)
	}
	if u.ID != schema.ID(platform, "abc123", "line:session-abc123.jsonl:0:"+schema.ContentHash(find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindRaw })[0].Raw), "user") {
		t.Fatalf("id of an event without one: %s", u.ID)
	}
	x := byText("jina-embeddings-v2: its context is 8192 tokens.")
	if x.ID != schema.ID(platform, "def456", "ex-1", "ai") || x.NativeID != "ex-1" || *x.Usage != (schema.Usage{Input: 1500, Output: 40, CacheRead: 1200}) ||
		x.Model != "gpt-4o" || x.Files[0] != "docs/embeddings.md" || string(x.Meta) != `{"agent":"cursor","cost_usd":0.0042}` ||
		!x.TS.Equal(time.Date(2025, 10, 25, 15, 2, 0, 250e6, time.UTC)) {
		t.Fatalf("exchange with usage: %+v %s", x, x.Meta)
	}
	if m := byText("context reset: context_limit"); m.Role != schema.RoleSystem || m.ContentType != schema.ContentCompactBoundary || m.SessionID != "abc123" {
		t.Fatalf("context reset: %+v", m)
	}
	if m := byText("session resumed from abc123"); m.SessionID != "def456" || string(m.Meta) != `{"previous_session":"abc123"}` {
		t.Fatalf("session resume: %+v", m)
	}
	// Message events.
	if m := byText("I will move the tax code first."); m.Thinking == "" || len(m.Tools) != 1 || string(m.Tools[0].Input) != `{"file_path":"billing/tax.py"}` ||
		m.Usage.CacheCreation != 300 || m.ContentType != schema.ContentText || m.ID != schema.ID(platform, "s-42", "m2", "message") {
		t.Fatalf("assistant message: %+v", m)
	}
	tr := find(msgs, func(r *schema.Record) bool { return r.Role == schema.RoleTool })
	if len(tr) != 1 || tr[0].Tools[0].CallID != "t1" || tr[0].Tools[0].Output != "edited billing/tax.py" || tr[0].ContentType != schema.ContentToolResult {
		t.Fatalf("tool result: %+v", tr)
	}
	if m := byText("/compact"); m.ContentType != schema.ContentCommand || string(m.Meta) != `{"ignored":"files: number, not []string"}` {
		t.Fatalf("command with a member of the wrong type: %+v %s", m, m.Meta)
	}
	if m := byText("No timestamp on this line."); m.TSPrecision != schema.PrecisionDerived || !m.TS.Equal(time.Date(2026, 3, 1, 10, 1, 0, 0, time.UTC)) {
		t.Fatalf("event without a time: %+v", m)
	}
	if m := byText("Done: billing/discount.py."); m.Agent == nil || m.Agent.ID != "sub-1" || m.Agent.Type != "refactorer" || !m.Agent.Sidechain {
		t.Fatalf("subagent: %+v", m.Agent)
	}
	// Kept raw only: an unknown type, another version, a JSON value that is
	// not an object.
	for _, nt := range []string{"heartbeat", "exchange", ""} {
		raw := find(res.Recs, func(r *schema.Record) bool {
			return r.Kind == schema.KindRaw && r.NativeType == nt && r.SessionID == "s-42"
		})
		if len(raw) == 0 {
			t.Fatalf("no raw record of type %q", nt)
		}
	}
	if len(find(msgs, func(r *schema.Record) bool { return strings.Contains(r.Text, "future") })) != 0 {
		t.Fatal("a v2 line made a message")
	}
	// Sessions: the title, the agent, the link to the previous session.
	sess := find(res.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindSession })
	if len(sess) != 3 {
		t.Fatalf("%d session records", len(sess))
	}
	for _, s := range sess {
		switch s.SessionID {
		case "def456":
			if s.ParentID != schema.SessionRecordID(platform, "abc123") || string(s.Meta) != `{"agent":"cursor","previous_session":"abc123"}` {
				t.Fatalf("resumed session: %+v", s)
			}
		case "s-42":
			if s.Title != "Refactor the billing module" || s.Project != "/home/dev/billing" || s.GitBranch != "main" {
				t.Fatalf("named session: %+v", s)
			}
		}
	}

	// pos-normalize: one exchange per prompt, the subagent's thread its own.
	out, st := extracttest.Normalize(t, normalize.Options{}, res.Recs)
	if st.Exchanges != 6 || st.Sessions != 3 {
		t.Fatalf("normalize: %+v", st)
	}
	for _, r := range out {
		if r.Kind == schema.KindSession && r.SessionID == "s-42" && (r.Title != "Refactor the billing module" || r.Session.Compactions != 0 || r.Usage.Input != 2100) {
			t.Fatalf("s-42 rollup: %+v %+v", r, r.Session)
		}
		if r.Kind == schema.KindSession && r.SessionID == "abc123" && r.Session.Compactions != 1 {
			t.Fatalf("abc123 rollup: %+v", r.Session)
		}
	}
	extracttest.GoldenRecords(t, extracttest.Testdata("push", "extract.golden.ndjson"), res.Recs, filepath.Dir(root), *update)
}

func TestIncremental(t *testing.T) {
	root := fixture(t)
	first, st := extracttest.FirstRun(t, Adapter{}, extract.Options{Roots: []string{root}}, 2)
	ids := extracttest.IDs(first.Recs)

	// The half-written line is finished and an answer appended, with echo.
	p := filepath.Join(root, "my-agent", "s-42.jsonl")
	extracttest.AppendFile(t, p,
		`ing","timestamp":"2026-03-01T10:05:00Z"}`+"\n",
		`{"type":"message","session_id":"s-42","timestamp":"2026-03-01T10:05:30Z","role":"assistant","text":"Typed."}`+"\n",
	)
	inc := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
	msgs := extracttest.Messages(inc.Recs)
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Text)
	}
	// It resumes at the last prompt of the main thread ("/compact"), with
	// the ids it had.
	if len(msgs) != 6 || msgs[0].Text != "/compact" || !ids[msgs[0].ID] || msgs[4].Text != "still typing" || msgs[5].Text != "Typed." {
		t.Fatalf("incremental: %q", texts)
	}
	if len(inc.Skips) != 0 {
		t.Fatalf("skips %v", inc.Skips)
	}
	sess := find(inc.Recs, func(r *schema.Record) bool { return r.Kind == schema.KindSession })
	if len(sess) != 1 || sess[0].Title != "Refactor the billing module" {
		t.Fatalf("the session record lost what earlier lines said: %+v", sess)
	}
	last := inc.Recs[len(inc.Recs)-1]
	if last.Kind != schema.KindCheckpoint || last.Checkpoint.Size != last.Checkpoint.Seen || last.Checkpoint.Lines != 12 {
		t.Fatalf("checkpoint %+v", last.Checkpoint)
	}
}

func TestDefaultLocation(t *testing.T) {
	root := fixture(t)
	home := t.TempDir()
	dir := filepath.Join(home, ".local", "share", "pos")
	os.MkdirAll(dir, 0o755)
	if err := os.Rename(root, filepath.Join(dir, "push")); err != nil {
		t.Fatal(err)
	}
	if l := (Adapter{}).Locations(extract.Options{Home: home}); len(l) != 1 || l[0] != filepath.Join(dir, "push") {
		t.Fatalf("default location %v", l)
	}
	res := extracttest.Run(t, Adapter{}, extract.Options{Home: home})
	if len(extracttest.Messages(res.Recs)) != 15 {
		t.Fatalf("default location: %d messages", len(extracttest.Messages(res.Recs)))
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"POS_PUSH_DIR": "/srv/push"}, "/srv/push"},
		{map[string]string{"XDG_DATA_HOME": "/data"}, "/data/pos/push"},
		{map[string]string{"XDG_DATA_HOME": "relative"}, filepath.Join(home, ".local", "share", "pos", "push")},
	} {
		opt := extract.Options{Home: home, Env: func(k string) string { return tc.env[k] }}
		if l := (Adapter{}).Locations(opt); len(l) != 1 || l[0] != tc.want {
			t.Errorf("%v: %v", tc.env, l)
		}
	}
	if l := (Adapter{}).Locations(extract.Options{}); len(l) != 0 {
		t.Fatalf("no home: %v", l)
	}
}

func TestSince(t *testing.T) {
	root := fixture(t)
	since := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := extracttest.Since(t, Adapter{}, extract.Options{Roots: []string{root}, Since: since})
	if len(extracttest.Messages(res.Recs)) == 0 {
		t.Fatal("newer records were dropped")
	}
}

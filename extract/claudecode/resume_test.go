package claudecode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

// TestResume: a read after a finished exchange starts at the watermark and
// points the new prompt at the merged message, as pos-normalize would have;
// a read that continues the open exchange reads it again.
func TestResume(t *testing.T) {
	const sid = "44444444-4444-4444-8444-444444444444"
	root := filepath.Join(t.TempDir(), ".claude")
	path := filepath.Join(root, "projects", "-home-dev-app", sid+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	uuid := func(n string) string { return "d0000000-0000-4000-8000-00000000000" + n }
	user := func(n, parent, content, ts string) string {
		return `{"parentUuid":` + parent + `,"isSidechain":false,"type":"user","sessionId":"` + sid + `","uuid":"` + uuid(n) + `","timestamp":"2026-03-04T10:0` + ts + `:00.000Z","cwd":"/home/dev/app","message":{"role":"user","content":` + content + `}}` + "\n"
	}
	assistant := func(n, parent, msg, block, ts string) string {
		return `{"parentUuid":"` + uuid(parent) + `","isSidechain":false,"type":"assistant","sessionId":"` + sid + `","uuid":"` + uuid(n) + `","timestamp":"2026-03-04T10:0` + ts + `:00.000Z","cwd":"/home/dev/app","requestId":"req_` + msg + `","message":{"id":"msg_` + msg + `","role":"assistant","model":"claude-sonnet-4-20250514","content":[` + block + `],"usage":{"input_tokens":1,"output_tokens":2}}}` + "\n"
	}
	// One exchange whose answer is one assistant message in two lines
	// (thinking, then text): pos-normalize merges line 3 into line 2.
	extracttest.AppendFile(t, path,
		user("1", "null", `"first question"`, "0"),
		assistant("2", "1", "X", `{"type":"thinking","thinking":"hmm"}`, "1"),
		assistant("3", "2", "X", `{"type":"text","text":"first answer"}`, "1"),
	)
	st := watermark.NewState()
	extracttest.Commit(st, extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st}).Recs)
	if tail := st.Get(platform, path).Context["tail"]; tail != msgID(uuid("2"))+":"+msgID(uuid("3")) {
		t.Fatalf("saved merges %q", tail)
	}

	read := func() (msgs []*schema.Record, replays int) {
		t.Helper()
		res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
		for _, r := range res.Recs {
			if r.Kind == schema.KindMessage {
				msgs = append(msgs, r)
				if r.Source.Replay {
					replays++
				}
			}
		}
		extracttest.Commit(st, res.Recs)
		return msgs, replays
	}
	// A new prompt, whose parent is the merged line, then its answer.
	extracttest.AppendFile(t, path,
		user("4", `"`+uuid("3")+`"`, `"second question"`, "2"),
		assistant("5", "4", "Y", `{"type":"text","text":"second answer"}`, "3"),
	)
	msgs, replays := read()
	if replays != 0 || len(msgs) != 2 || msgs[0].Text != "second question" || msgs[0].Source.Line != 4 || msgs[1].Source.Line != 5 {
		for _, m := range msgs {
			t.Logf("%q line %d replay %v", m.Text, m.Source.Line, m.Source.Replay)
		}
		t.Fatalf("after a finished exchange: %d messages, %d replayed", len(msgs), replays)
	}
	if msgs[0].ParentID != msgID(uuid("2")) {
		t.Fatalf("the new prompt's parent is %s, want the merged message %s", msgs[0].ParentID, msgID(uuid("2")))
	}
	// The answer goes on (no new prompt): the open exchange is read again.
	extracttest.AppendFile(t, path, assistant("6", "5", "Z", `{"type":"text","text":"more"}`, "4"))
	msgs, replays = read()
	if replays != 2 || len(msgs) != 3 || msgs[0].Text != "second question" || msgs[0].Source.Line != 4 || msgs[2].Text != "more" {
		t.Fatalf("continuing the open exchange: %d messages, %d replayed", len(msgs), replays)
	}
	// A tool result first is no prompt either.
	extracttest.AppendFile(t, path, user("7", `"`+uuid("6")+`"`, `[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]`, "5"))
	if _, replays = read(); replays == 0 {
		t.Fatal("a tool result after the watermark: the open exchange was not read again")
	}
	// A watermark from an older build (no saved merges) reads again.
	c := *st.Get(platform, path)
	c.Context = map[string]string{"session": sid}
	st.Put(&c)
	extracttest.AppendFile(t, path, user("8", `"`+uuid("7")+`"`, `"third question"`, "6"))
	if _, replays = read(); replays == 0 {
		t.Fatal("without saved merges the open exchange must be read again")
	}
}

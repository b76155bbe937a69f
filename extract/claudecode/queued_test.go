package claudecode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/internal/corpus"
	"github.com/pos-lake/pos/schema"
)

// queuedLines is a turn during which the user typed a prompt (Claude Code
// writes it as a queued_command attachment, never as a user line) and the
// harness queued a task notification.
var queuedLines = []string{
	`{"type":"user","sessionId":"` + s4 + `","uuid":"e1000000-0000-4000-8000-000000000001","timestamp":"2026-03-04T09:00:00.000Z","cwd":"/home/dev/app","message":{"role":"user","content":"fix the export"}}`,
	`{"parentUuid":"e1000000-0000-4000-8000-000000000001","type":"assistant","sessionId":"` + s4 + `","uuid":"e1000000-0000-4000-8000-000000000002","timestamp":"2026-03-04T09:00:05.000Z","requestId":"req_e1","message":{"id":"msg_e1","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"tool_use","id":"toolu_e1","name":"Read","input":{"file_path":"/home/dev/app/export.go"}}],"usage":{"input_tokens":3,"output_tokens":4}}}`,
	`{"parentUuid":"e1000000-0000-4000-8000-000000000002","type":"user","sessionId":"` + s4 + `","uuid":"e1000000-0000-4000-8000-000000000003","timestamp":"2026-03-04T09:00:06.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_e1","content":"package export"}]}}`,
	`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-03-04T09:00:07.000Z","sessionId":"` + s4 + `","content":"and convert the prices to euros"}`,
	`{"parentUuid":"e1000000-0000-4000-8000-000000000003","type":"attachment","sessionId":"` + s4 + `","uuid":"e1000000-0000-4000-8000-000000000004","timestamp":"2026-03-04T09:00:08.000Z","attachment":{"type":"queued_command","prompt":"and convert the prices to euros","commandMode":"prompt","origin":{"kind":"human"}}}`,
	`{"parentUuid":"e1000000-0000-4000-8000-000000000004","type":"attachment","sessionId":"` + s4 + `","uuid":"e1000000-0000-4000-8000-000000000005","timestamp":"2026-03-04T09:00:09.000Z","attachment":{"type":"queued_command","prompt":"<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>","commandMode":"task-notification","origin":{"kind":"task-notification"}}}`,
	`{"parentUuid":"e1000000-0000-4000-8000-000000000005","type":"attachment","sessionId":"` + s4 + `","uuid":"e1000000-0000-4000-8000-000000000006","timestamp":"2026-03-04T09:00:09.500Z","attachment":{"type":"hook_additional_context","content":"lint is clean"}}`,
	`{"parentUuid":"e1000000-0000-4000-8000-000000000006","type":"assistant","sessionId":"` + s4 + `","uuid":"e1000000-0000-4000-8000-000000000007","timestamp":"2026-03-04T09:00:12.000Z","requestId":"req_e2","message":{"id":"msg_e2","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"Fixed, and the prices are in euros."}],"usage":{"input_tokens":5,"output_tokens":9}}}`,
}

func TestQueuedPrompts(t *testing.T) {
	recs := runSession(t, queuedLines)
	byType := map[string][]*schema.Record{}
	for _, r := range recs {
		if r.Kind == schema.KindMessage {
			byType[r.NativeType] = append(byType[r.NativeType], r)
		}
	}
	q := byType["attachment/queued_command"]
	if len(q) != 2 {
		t.Fatalf("%d messages from queued commands, want the prompt and the notification", len(q))
	}
	if p := q[0]; p.Role != schema.RoleUser || p.ContentType != schema.ContentText || p.Text != "and convert the prices to euros" ||
		p.ID != msgID("e1000000-0000-4000-8000-000000000004") || p.ParentID != msgID("e1000000-0000-4000-8000-000000000003") {
		t.Fatalf("queued prompt: %+v", p)
	}
	if n := q[1]; n.Role != schema.RoleSystem || n.ContentType != schema.ContentMeta || !strings.Contains(n.Text, "<task-id>b1</task-id>") {
		t.Fatalf("queued notification: %+v", n)
	}
	// Other attachments and the queue's bookkeeping stay in the raw layer,
	// named by their kind.
	if len(byType["attachment/hook_additional_context"]) != 0 || len(byType["queue-operation/enqueue"]) != 0 {
		t.Fatalf("bookkeeping made messages: %v", byType)
	}
	if raws := find(recs, func(r *schema.Record) bool {
		return r.Kind == schema.KindRaw && r.NativeType == "attachment/hook_additional_context"
	}); len(raws) != 1 {
		t.Fatalf("hook attachment: %d raw records", len(raws))
	}

	// The queued prompt is a prompt: a read that starts at it needs
	// nothing before it.
	var l line
	if parseLine([]byte(queuedLines[4]), &l) != nil || !promptLine(&l) {
		t.Fatal("a queued prompt is not taken for a prompt where an incremental read starts")
	}
	if parseLine([]byte(queuedLines[5]), &l) != nil || promptLine(&l) {
		t.Fatal("a queued notification is taken for a prompt")
	}
}

// In the corpus's Claude Code 2.1.39 sessions the prompts typed while the
// agent worked are written only as queue-operation lines: enqueue with the
// text, then remove when the running turn took it in. Each becomes one user
// message; a queued notification delivered as a user line later, or never
// taken in, is not counted again.
func TestCorpusQueuedPrompts(t *testing.T) {
	dir := corpus.Platform(t, "claude_code")
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{dir}})
	count := map[string]int{}
	var queued []*schema.Record
	for _, r := range res.Recs {
		if r.Kind != schema.KindMessage {
			continue
		}
		count[strings.TrimSpace(r.Text)]++
		if r.NativeType == "queue-operation/enqueue" {
			queued = append(queued, r)
		}
	}
	for _, p := range []string{"check again", "new beads for the epic were added. tackle them"} {
		if count[p] != 1 {
			t.Errorf("%q: %d messages, want 1", p, count[p])
		}
	}
	var texts []string
	for _, r := range queued {
		texts = append(texts, r.Text)
	}
	slices.Sort(texts)
	if got := strings.Join(texts, "|"); got != "/mcp|check again|new beads for the epic were added. tackle them" {
		t.Fatalf("messages from the queue: %q, want the three typed prompts taken in", got)
	}
	for _, r := range queued {
		if r.Role != schema.RoleUser || r.ContentType != schema.ContentText || r.Agent != nil || r.SessionID == "" || r.Source == nil || r.Source.Line == 0 {
			t.Errorf("queued prompt: %+v", r)
		}
	}
	// The notification enqueued at line 280 reached the model as a user
	// line (496): one message of it.
	for text, n := range count {
		if strings.Contains(text, "<task-id>b0be39e</task-id>") && n != 1 {
			t.Errorf("notification b0be39e: %d messages", n)
		}
	}
}

// queueSession is one turn of a session, a prompt typed while it ran taken
// in through the given lines.
func queueSession(t *testing.T, mid ...string) []*schema.Record {
	t.Helper()
	head := []string{
		`{"type":"user","sessionId":"` + s4 + `","uuid":"f1000000-0000-4000-8000-000000000001","timestamp":"2026-03-04T09:00:00.000Z","cwd":"/home/dev/app","message":{"role":"user","content":"fix the export"}}`,
		`{"parentUuid":"f1000000-0000-4000-8000-000000000001","type":"assistant","sessionId":"` + s4 + `","uuid":"f1000000-0000-4000-8000-000000000002","timestamp":"2026-03-04T09:00:05.000Z","requestId":"req_f1","message":{"id":"msg_f1","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"tool_use","id":"toolu_f1","name":"Read","input":{"file_path":"/home/dev/app/export.go"}}],"usage":{"input_tokens":3,"output_tokens":4}}}`,
		`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-03-04T09:00:06.000Z","sessionId":"` + s4 + `","content":"and convert the prices to euros"}`,
	}
	tail := []string{
		`{"parentUuid":"f1000000-0000-4000-8000-000000000002","type":"user","sessionId":"` + s4 + `","uuid":"f1000000-0000-4000-8000-000000000003","timestamp":"2026-03-04T09:00:08.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_f1","content":"package export"}]}}`,
	}
	lines := append(append(head, mid...), tail...)
	lines = append(lines, `{"parentUuid":"f1000000-0000-4000-8000-000000000003","type":"assistant","sessionId":"`+s4+`","uuid":"f1000000-0000-4000-8000-000000000009","timestamp":"2026-03-04T09:00:12.000Z","requestId":"req_f2","message":{"id":"msg_f2","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"Fixed, and the prices are in euros."}],"usage":{"input_tokens":5,"output_tokens":9}}}`)
	return runSession(t, lines)
}

// runSession extracts a project holding one session file of lines, which
// must all read without a report.
func runSession(t *testing.T, lines []string) []*schema.Record {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", "-home-dev-app")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, s4+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}})
	if len(res.Skips) != 0 {
		t.Fatalf("skips %v", res.Skips)
	}
	return res.Recs
}

func TestQueueOperations(t *testing.T) {
	const typed = "and convert the prices to euros"
	messages := func(recs []*schema.Record) (n int, at *schema.Record, before string) {
		prev := ""
		for _, r := range recs {
			if r.Kind != schema.KindMessage {
				continue
			}
			if r.Text == typed {
				n++
				at, before = r, prev
			}
			prev = r.Text
		}
		return n, at, before
	}
	t.Run("remove", func(t *testing.T) {
		recs := queueSession(t, `{"type":"queue-operation","operation":"remove","timestamp":"2026-03-04T09:00:07.500Z","sessionId":"`+s4+`"}`)
		n, m, _ := messages(recs)
		if n != 1 {
			t.Fatalf("%d messages of the prompt taken in, want 1", n)
		}
		if m.Role != schema.RoleUser || m.ContentType != schema.ContentText || m.SessionID != s4 || m.Source.Line != 3 ||
			!m.TS.Equal(time.Date(2026, 3, 4, 9, 0, 7, 500e6, time.UTC)) || m.ParentID != msgID("f1000000-0000-4000-8000-000000000003") {
			t.Fatalf("prompt taken in: %+v", m)
		}
		// It stands where the model read it: after the tool result, before
		// the answer.
		var order []string
		for _, r := range recs {
			if r.Kind == schema.KindMessage {
				order = append(order, string(r.Role))
			}
		}
		if got := strings.Join(order, " "); got != "user assistant tool user assistant" {
			t.Fatalf("order %s", got)
		}
	})
	t.Run("remove then attachment", func(t *testing.T) {
		// Later versions write the prompt taken in as an attachment too.
		recs := queueSession(t,
			`{"type":"queue-operation","operation":"remove","reason":"absorbed_mid_turn","timestamp":"2026-03-04T09:00:07.500Z","sessionId":"`+s4+`"}`,
			`{"parentUuid":"f1000000-0000-4000-8000-000000000002","type":"attachment","sessionId":"`+s4+`","uuid":"f1000000-0000-4000-8000-000000000004","timestamp":"2026-03-04T09:00:08.100Z","attachment":{"type":"queued_command","prompt":"`+typed+`","commandMode":"prompt","origin":{"kind":"human"}}}`)
		if n, m, _ := messages(recs); n != 1 || m.NativeType != "attachment/queued_command" {
			t.Fatalf("%d messages of the prompt, want the attachment's alone (%+v)", n, m)
		}
	})
	t.Run("dequeue", func(t *testing.T) {
		// Taken off to start a turn: the user line is its message.
		recs := queueSession(t,
			`{"type":"queue-operation","operation":"dequeue","timestamp":"2026-03-04T09:00:07.000Z","sessionId":"`+s4+`"}`,
			`{"type":"user","sessionId":"`+s4+`","uuid":"f1000000-0000-4000-8000-000000000005","timestamp":"2026-03-04T09:00:07.100Z","message":{"role":"user","content":"`+typed+`"}}`)
		if n, m, _ := messages(recs); n != 1 || m.NativeType != "user" {
			t.Fatalf("%d messages of the prompt, want the user line's alone", n)
		}
	})
	t.Run("user line", func(t *testing.T) {
		// Sent as a user line with no dequeue written, then a remove.
		recs := queueSession(t,
			`{"type":"user","sessionId":"`+s4+`","uuid":"f1000000-0000-4000-8000-000000000005","timestamp":"2026-03-04T09:00:07.100Z","message":{"role":"user","content":"`+typed+`"}}`,
			`{"type":"queue-operation","operation":"remove","timestamp":"2026-03-04T09:00:07.500Z","sessionId":"`+s4+`"}`)
		if n, _, _ := messages(recs); n != 1 {
			t.Fatalf("%d messages of the prompt, want 1", n)
		}
	})
	for _, tc := range []struct{ name, op string }{
		{"popAll", `{"type":"queue-operation","operation":"popAll","timestamp":"2026-03-04T09:00:07.000Z","sessionId":"` + s4 + `"}`},
		{"cancelled", `{"type":"queue-operation","operation":"remove","reason":"agent_stopped","timestamp":"2026-03-04T09:00:07.000Z","sessionId":"` + s4 + `"}`},
		{"still queued", `{"type":"progress","sessionId":"` + s4 + `","uuid":"f1000000-0000-4000-8000-000000000006","timestamp":"2026-03-04T09:00:07.000Z","data":{"type":"hook_progress"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Back in the input box, not taken by this turn, or never taken:
			// the model did not read it, and the raw layer keeps it.
			recs := queueSession(t, tc.op)
			if n, _, _ := messages(recs); n != 0 {
				t.Fatalf("%d messages of a prompt the model never read", n)
			}
			if raws := find(recs, func(r *schema.Record) bool { return r.NativeType == "queue-operation/enqueue" }); len(raws) != 1 || raws[0].Kind != schema.KindRaw {
				t.Fatalf("enqueue line: %v", raws)
			}
		})
	}
	t.Run("notification waits", func(t *testing.T) {
		// A remove takes the prompt a person typed, not a notification
		// queued before it.
		recs := queueSession(t,
			`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-03-04T09:00:06.500Z","sessionId":"`+s4+`","content":"<task-notification>\n<task-id>b2</task-id>\n</task-notification>"}`,
			`{"type":"queue-operation","operation":"remove","timestamp":"2026-03-04T09:00:07.500Z","sessionId":"`+s4+`"}`)
		if n, _, _ := messages(recs); n != 1 {
			t.Fatalf("%d messages of the prompt, want 1", n)
		}
		if ms := find(recs, func(r *schema.Record) bool {
			return r.Kind == schema.KindMessage && strings.Contains(r.Text, "<task-id>b2")
		}); len(ms) != 0 {
			t.Fatalf("notification made a message: %v", ms)
		}
	})
}

package claudecode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/extract"
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
	root := filepath.Join(t.TempDir(), ".claude")
	dir := filepath.Join(root, "projects", "-home-dev-app")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, s4+".jsonl"), []byte(strings.Join(queuedLines, "\n")+"\n"), 0o644)
	res := runExtract(t, extract.Options{Roots: []string{root}})
	if len(res.Skips) != 0 {
		t.Fatalf("skips %v", res.Skips)
	}
	byType := map[string][]*schema.Record{}
	for _, r := range res.Recs {
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
	if raws := find(res.Recs, func(r *schema.Record) bool {
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

package claudecode

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/internal/testfs"
	"github.com/pos-lake/pos/internal/watermark"
	"github.com/pos-lake/pos/schema"
)

// planLine is a Claude Code user line of session with slug; with a
// plan path, an assistant line whose Write call writes it.
func planLine(session, slug, uuid, agent, planPath string) string {
	side := "false"
	agentID := ""
	if agent != "" {
		side, agentID = "true", `,"agentId":"`+agent+`"`
	}
	head := `{"isSidechain":` + side + `,"cwd":"/home/dev/x","sessionId":"` + session + `","version":"2.1.40","slug":"` + slug + `"` + agentID +
		`,"uuid":"` + uuid + `","timestamp":"2026-03-02T09:00:00.000Z",`
	if planPath == "" {
		return head + `"parentUuid":null,"type":"user","message":{"role":"user","content":"plan it"}}` + "\n"
	}
	return head + `"parentUuid":null,"type":"assistant","requestId":"req_` + uuid + `","message":{"model":"claude-opus-4-6","id":"msg_` + uuid +
		`","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_` + uuid + `","name":"Write","input":{"file_path":"` +
		planPath + `","content":"# Plan"}}],"usage":{"input_tokens":1,"output_tokens":2}}}` + "\n"
}

// plansOf are the plan documents among recs, by file name.
func plansOf(recs []*schema.Record) map[string]string {
	out := map[string]string{}
	for _, r := range recs {
		if r.Kind == schema.KindDocument && r.ContentType == schema.ContentPlan {
			out[filepath.Base(r.Source.Path)] = r.SessionID
		}
	}
	return out
}

// rawFrom counts the raw records read from files under dir.
func rawFrom(recs []*schema.Record, path string) int {
	n := 0
	for _, r := range recs {
		if r.Kind == schema.KindRaw && r.Source != nil && r.Source.Path == path {
			n++
		}
	}
	return n
}

// runWith runs the adapter over root with st, then commits its
// checkpoints to st, as pos-load does.
func runWith(t *testing.T, root string, st *watermark.State) extracttest.Result {
	t.Helper()
	res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{root}, State: st})
	extracttest.Commit(st, res.Recs)
	return res
}

// TestPlanLinkedLate: a plan written after its session was read is linked
// to it by the next run, which does not read the session again; a plan
// read before its session is read again, and linked, once the session is.
func TestPlanLinkedLate(t *testing.T) {
	const s, s2 = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	root := filepath.Join(t.TempDir(), ".claude")
	session := filepath.Join(root, "projects", "-home-dev-x", s+".jsonl")
	testfs.WriteFile(t, session, planLine(s, "calm-red-fox", "u1", "", ""))
	testfs.WriteFile(t, filepath.Join(root, "plans", "late-owl.md"), "# Owl\n")
	st := watermark.NewState()
	first := runWith(t, root, st)
	if got := plansOf(first.Recs); got["late-owl.md"] != "" {
		t.Fatalf("first run: plans %v, want late-owl.md unlinked (its session is not there yet)", got)
	}

	// The plan of the session read above is written; the session of the
	// plan read above appears.
	testfs.WriteFile(t, filepath.Join(root, "plans", "calm-red-fox.md"), "# Fox\n")
	session2 := filepath.Join(root, "projects", "-home-dev-x", s2+".jsonl")
	testfs.WriteFile(t, session2, planLine(s2, "late-owl", "u2", "", ""))
	second := runWith(t, root, st)
	got := plansOf(second.Recs)
	if got["calm-red-fox.md"] != s || got["late-owl.md"] != s2 {
		t.Errorf("second run: plans %v, want calm-red-fox.md of %s and late-owl.md of %s", got, s, s2)
	}
	if n := rawFrom(second.Recs, session); n != 0 {
		t.Errorf("second run read %d lines of the session read before", n)
	}

	// Nothing changed: nothing is read.
	third := runWith(t, root, st)
	if len(third.Recs) != 0 {
		t.Errorf("third run: %d records, want none", len(third.Recs))
	}
}

// TestPlanOfSubagent: a session known only by a subagent's transcript
// (its lines carry the session's slug) owns the plans of that slug, and a
// plan a subagent's Write call named is its session's, in the same run or
// a later one.
func TestPlanOfSubagent(t *testing.T) {
	const s = "33333333-3333-4333-8333-333333333333"
	root := filepath.Join(t.TempDir(), ".claude")
	agent := filepath.Join(root, "projects", "-home-dev-x", s, "subagents", "agent-a1.jsonl")
	testfs.WriteFile(t, agent, planLine(s, "quiet-elk", "u1", "a1", "")+
		planLine(s, "quiet-elk", "u2", "a1", "/home/dev/.claude/plans/named-by-tool.md")+
		planLine(s, "quiet-elk", "u3", "a1", "/home/dev/.claude/plans/written-later.md"))
	testfs.WriteFile(t, filepath.Join(root, "plans", "quiet-elk-agent-a1.md"), "# Elk's agent\n")
	testfs.WriteFile(t, filepath.Join(root, "plans", "named-by-tool.md"), "# Named\n")
	st := watermark.NewState()
	first := runWith(t, root, st)
	got := plansOf(first.Recs)
	if got["quiet-elk-agent-a1.md"] != s || got["named-by-tool.md"] != s {
		t.Errorf("plans %v, want both of %s", got, s)
	}
	// A plan the subagent named, written after the run that read it.
	later := filepath.Join(root, "plans", "written-later.md")
	testfs.WriteFile(t, later, "# Later\n")
	now := time.Now()
	if err := os.Chtimes(later, now, now); err != nil {
		t.Fatal(err)
	}
	second := runWith(t, root, st)
	if got := plansOf(second.Recs); len(got) != 1 || got["written-later.md"] != s {
		t.Errorf("second run: plans %v, want written-later.md of %s alone", got, s)
	}
	if n := rawFrom(second.Recs, agent); n != 0 {
		t.Errorf("second run read %d lines of the subagent read before", n)
	}
}

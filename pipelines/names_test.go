package pipelines_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/internal/loadtest"
)

// TestSessionNamesSync: the name the user gave a Claude Code session
// (/rename) is its title in the lake, above Claude Code's own labels,
// including labels a later incremental sync reads; a new name replaces it.
func TestSessionNamesSync(t *testing.T) {
	const sid = "55555555-5555-4555-8555-555555555555"
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "home", ".claude", "projects", "-home-dev-app")
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, sid+".jsonl")
	n := 0
	turn := func(prompt string) []string {
		n++
		u, a := fmt.Sprintf("f0000000-0000-4000-8000-%012d", 2*n), fmt.Sprintf("f0000000-0000-4000-8000-%012d", 2*n+1)
		ts := fmt.Sprintf("2026-03-04T%02d:00:00.000Z", 8+n)
		return []string{
			`{"isSidechain":false,"type":"user","sessionId":"` + sid + `","uuid":"` + u + `","timestamp":"` + ts + `","cwd":"/home/dev/app","message":{"role":"user","content":"` + prompt + `"}}`,
			`{"parentUuid":"` + u + `","isSidechain":false,"type":"assistant","sessionId":"` + sid + `","uuid":"` + a + `","timestamp":"` + ts + `","cwd":"/home/dev/app","requestId":"req_` + a + `","message":{"id":"msg_` + a + `","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":1,"output_tokens":2}}}`,
		}
	}
	pr := func(n int) string {
		return fmt.Sprintf(`{"type":"pr-link","sessionId":"%s","prNumber":%d,"prUrl":"https://github.com/acme/app/pull/%d","prRepository":"acme/app","timestamp":"2026-03-04T12:00:00.000Z"}`, sid, n, n)
	}
	name := func(typ, key, v string) string {
		return `{"type":"` + typ + `","` + key + `":"` + v + `","sessionId":"` + sid + `"}`
	}
	write := func(lines ...string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(strings.Join(lines, "\n") + "\n")
		f.Close()
	}
	lake := filepath.Join(tmp, "lake")
	title := func(step string) string {
		t.Helper()
		mustSh(t, fmt.Sprintf("pos-extract -q --root %q --lake %q | pos-normalize -q | pos-embed -q --lake %q | pos-load -q --lake %q", filepath.Join(tmp, "home", ".claude"), lake, lake, lake))
		out := mustSh(t, fmt.Sprintf("pos-query sessions --lake %q --format csv", lake))
		db := loadtest.Views(t, lake)
		var got string
		if err := db.QueryRow(`SELECT title FROM sessions WHERE session_id = ?`, sid).Scan(&got); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !strings.Contains(out, got) {
			t.Fatalf("%s: pos-query sessions shows %q, the view %q", step, out, got)
		}
		return got
	}

	write(turn("the login test is flaky")...)
	if got := title("no names"); got != "the login test is flaky" {
		t.Fatalf("no names: title %q, want the first prompt", got)
	}
	write(name("ai-title", "aiTitle", "Fix the flaky login test"))
	if got := title("a label"); got != "Fix the flaky login test" {
		t.Fatalf("a label: title %q", got)
	}
	write(name("custom-title", "customTitle", "login-flake"), name("agent-name", "agentName", "login-flake"), pr(55))
	if got := title("renamed"); got != "login-flake" {
		t.Fatalf("renamed: title %q", got)
	}
	// The next sync starts at the new prompt and sees only the new label.
	write(append(turn("it failed again"), name("ai-title", "aiTitle", "Login flake, round two"), pr(55), pr(56))...)
	if got := title("labelled again"); got != "login-flake" {
		t.Fatalf("a later label replaced the user's name: title %q", got)
	}
	write(append(turn("and once more"), name("custom-title", "customTitle", "login-flake-3"))...)
	if got := title("renamed again"); got != "login-flake-3" {
		t.Fatalf("renamed again: title %q", got)
	}
	// The pull requests it linked, over all the syncs, once each.
	out := mustSh(t, fmt.Sprintf("pos-query sessions --lake %q --format json", lake))
	if !strings.Contains(out, `"pull_requests":["https://github.com/acme/app/pull/55","https://github.com/acme/app/pull/56"]`) {
		t.Fatalf("pull requests:\n%s", out)
	}
	// Search names its hits' sessions the same way.
	out = mustSh(t, fmt.Sprintf("pos-query search --lake %q --format json 'login test flaky'", lake))
	if !strings.Contains(out, `"title":"login-flake-3"`) || strings.Contains(out, `"title":"Login flake, round two"`) {
		t.Fatalf("search titles:\n%s", out)
	}
}

// TestQueuedPromptSync: a prompt typed while Claude Code was working,
// which it writes only as a queued_command attachment, opens an exchange
// in the lake like any prompt.
func TestQueuedPromptSync(t *testing.T) {
	const sid = "88888888-8888-4888-8888-888888888888"
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "home", ".claude", "projects", "-home-dev-app")
	os.MkdirAll(dir, 0o755)
	lines := []string{
		`{"type":"user","sessionId":"` + sid + `","uuid":"e2000000-0000-4000-8000-000000000001","timestamp":"2026-03-04T09:00:00.000Z","cwd":"/home/dev/app","message":{"role":"user","content":"fix the export"}}`,
		`{"parentUuid":"e2000000-0000-4000-8000-000000000001","type":"assistant","sessionId":"` + sid + `","uuid":"e2000000-0000-4000-8000-000000000002","timestamp":"2026-03-04T09:00:05.000Z","requestId":"req_q1","message":{"id":"msg_q1","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"Looking at it."}],"usage":{"input_tokens":3,"output_tokens":4}}}`,
		`{"parentUuid":"e2000000-0000-4000-8000-000000000002","type":"attachment","sessionId":"` + sid + `","uuid":"e2000000-0000-4000-8000-000000000003","timestamp":"2026-03-04T09:00:08.000Z","attachment":{"type":"queued_command","prompt":"and convert the prices to euros","commandMode":"prompt","origin":{"kind":"human"}}}`,
		`{"parentUuid":"e2000000-0000-4000-8000-000000000003","type":"assistant","sessionId":"` + sid + `","uuid":"e2000000-0000-4000-8000-000000000004","timestamp":"2026-03-04T09:00:12.000Z","requestId":"req_q2","message":{"id":"msg_q2","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"Fixed, in euros."}],"usage":{"input_tokens":5,"output_tokens":9}}}`,
	}
	os.WriteFile(filepath.Join(dir, sid+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	lake := filepath.Join(tmp, "lake")
	mustSh(t, fmt.Sprintf("pos-extract -q --root %q --lake %q | pos-normalize -q | pos-load -q --lake %q", filepath.Join(tmp, "home", ".claude"), lake, lake))
	db := loadtest.Views(t, lake)
	var got string
	if err := db.QueryRow(`SELECT string_agg(exchange_number || ':' || prompt || ' -> ' || response, ' | ' ORDER BY exchange_number) FROM exchanges`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if want := "1:fix the export -> Looking at it. | 2:and convert the prices to euros -> Fixed, in euros."; got != want {
		t.Fatalf("exchanges %q, want %q", got, want)
	}
	if n := count(t, db, `SELECT user_count FROM sessions`); n != 2 {
		t.Fatalf("the session counts %d prompts, want 2", n)
	}
}

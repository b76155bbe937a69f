package main

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract/claudecode"
	"github.com/pos-lake/pos/internal/corpus"
)

// Every platform is laid out as its tool lays it out, each replica with
// fresh ids, and a replica never ends between a session and its subagents.
func TestGenerateEveryPlatform(t *testing.T) {
	src := corpus.Platform(t, claudeCode)
	out := t.TempDir()
	if err := run([]string{"--src", src, "--out", out, "--size", "31MB"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	sessions := map[string]bool{}
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		rel = filepath.ToSlash(rel)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch {
		case strings.HasPrefix(rel, ".claude/projects/"):
			count["claude"]++
			if i := strings.Index(rel, "/subagents/"); i >= 0 {
				if _, err := os.Stat(filepath.Join(out, rel[:i]+".jsonl")); err != nil {
					t.Errorf("%s: subagent without its session", rel)
				}
			}
		case strings.HasPrefix(rel, ".codex/sessions/"):
			count["codex"]++
			// sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<uuid>.jsonl
			parts := strings.Split(rel, "/")
			name := parts[len(parts)-1]
			if len(parts) != 6 || !strings.HasPrefix(name, "rollout-"+parts[2]+"-"+parts[3]+"-"+parts[4]+"T") || !isUUID(strings.TrimSuffix(name[len("rollout-2026-02-23T12-40-23-"):], ".jsonl")) {
				t.Errorf("codex path %s", rel)
			}
			var first struct {
				Payload struct{ ID string } `json:"payload"`
			}
			line, _, _ := bytes.Cut(b, []byte{'\n'})
			if json.Unmarshal(line, &first) != nil || !strings.Contains(name, first.Payload.ID) {
				t.Errorf("%s: not named after its session %q", rel, first.Payload.ID)
			}
			sessions[first.Payload.ID] = true
		case strings.HasPrefix(rel, ".gemini/tmp/"):
			count["gemini"]++
			var c struct{ SessionID string }
			if json.Unmarshal(b, &c) != nil || !strings.HasSuffix(rel, c.SessionID[:8]+".json") || !strings.Contains(rel, "/chats/session-") {
				t.Errorf("gemini path %s", rel)
			}
			sessions[c.SessionID] = true
		case strings.HasPrefix(rel, "aider/"):
			count["aider"]++
			if strings.HasSuffix(rel, "-001/.aider.chat.history.md") && !bytes.Contains(b, []byte("# aider chat started at 2025-12-02 07:43:45")) {
				t.Errorf("%s: the second replica's times are not 31 hours back", rel)
			}
		case strings.HasPrefix(rel, ".claude/plans/"):
		default:
			t.Errorf("unexpected file %s", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"claude", "codex", "gemini", "aider"} {
		if count[p] == 0 {
			t.Errorf("no %s files: %v", p, count)
		}
	}
	if len(sessions) != count["codex"]+count["gemini"] {
		t.Errorf("%d distinct session ids for %d codex and gemini files", len(sessions), count["codex"]+count["gemini"])
	}
	t.Logf("files per platform: %v", count)
}

// --append dates the new lines after the home's latest line, as an agent
// writes them when a session is resumed, whatever day the session began.
func TestAppendDatesNewLinesNow(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".claude", "projects", "-work-p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	line := func(uuid, parent, ts, role string) string {
		return `{"parentUuid":"` + parent + `","type":"` + role + `","message":{"role":"` + role + `","content":"hello"},"uuid":"` + uuid + `","timestamp":"` + ts + `"}` + "\n"
	}
	sessions := map[string][]string{
		"11111111-1111-4111-8111-111111111111": {"2025-01-05T10:00:00.000Z", "2025-01-05T10:01:00.000Z"},
		"22222222-2222-4222-8222-222222222222": {"2025-03-20T08:00:00.000Z", "2025-03-20T08:05:00.000Z"},
	}
	for id, times := range sessions {
		var b strings.Builder
		b.WriteString(line(id[:8]+"-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "", times[0], "user"))
		b.WriteString(line(id[:8]+"-bbbb-4bbb-8bbb-bbbbbbbbbbbb", id[:8]+"-aaaa-4aaa-8aaa-aaaaaaaaaaaa", times[1], "assistant"))
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := grow(home, 1, 7, io.Discard); err != nil {
		t.Fatal(err)
	}
	latest := time.Date(2025, 3, 20, 8, 5, 0, 0, time.UTC)
	for id := range sessions {
		b, err := os.ReadFile(filepath.Join(dir, id+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) <= 2 {
			t.Fatalf("%s: nothing appended", id)
		}
		for _, l := range lines[2:] {
			ts := lastTimestamp([]byte(l))
			if !ts.After(latest) || ts.Sub(latest) > 6*time.Hour {
				t.Fatalf("%s: appended line at %v, want within hours after %v: %s", id, ts, latest, l)
			}
		}
	}
}

// --append starts each block at a prompt as the pipeline reads one: not at
// a compaction summary or a sub-agent's prompt, which are user lines with
// text too but continue the turn before them.
func TestAppendStartsAtPrompt(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".claude", "projects", "-work-p")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	id := "33333333-3333-4333-8333-333333333333"
	u := func(n int) string { return "aaaaaaaa-aaaa-4aaa-8aaa-00000000000" + string(rune('0'+n)) }
	lines := []string{
		`{"type":"user","message":{"role":"user","content":"fix the failing test"}`,
		`{"type":"assistant","message":{"id":"m1","role":"assistant","model":"claude-x","content":[{"type":"text","text":"on it"}]}`,
		`{"type":"system","subtype":"compact_boundary","content":"Conversation compacted"`,
		`{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued from a previous conversation."}`,
		`{"type":"assistant","message":{"id":"m2","role":"assistant","model":"claude-x","content":[{"type":"text","text":"continuing"}]}`,
		`{"type":"user","isSidechain":true,"message":{"role":"user","content":"search the repository"}`,
		`{"type":"assistant","isSidechain":true,"message":{"id":"m3","role":"assistant","model":"claude-x","content":[{"type":"text","text":"found it"}]}`,
		`{"type":"assistant","message":{"id":"m4","role":"assistant","model":"claude-x","content":[{"type":"text","text":"fixed"}]}`,
	}
	var b strings.Builder
	for i, l := range lines {
		parent := ""
		if i > 0 {
			parent = u(i - 1)
		}
		b.WriteString(l + `,"sessionId":"` + id + `","parentUuid":"` + parent + `","uuid":"` + u(i) + `","timestamp":"2025-01-05T10:0` + string(rune('0'+i)) + `:00.000Z"}` + "\n")
	}
	path := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// One line of eight: the block is the prompt before the file's end.
	if err := grow(home, 0.1, 7, io.Discard); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(all) != len(lines)+1 {
		t.Fatalf("%d lines after the append, want %d", len(all), len(lines)+1)
	}
	appended := all[len(lines)]
	if !claudecode.IsPrompt([]byte(appended)) || !strings.Contains(appended, "fix the failing test") {
		t.Fatalf("appended block starts with %s, want the prompt", appended)
	}
	for i, l := range all[:len(lines)] {
		if want := claudecode.IsPrompt([]byte(l)); want != (i == 0) {
			t.Errorf("IsPrompt(line %d) = %v", i, want)
		}
	}
}

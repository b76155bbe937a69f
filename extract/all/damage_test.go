package all_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract"
	_ "github.com/pos-lake/pos/extract/all"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/internal/testfs"
	"github.com/pos-lake/pos/schema"
)

// Damage kinds: what is put where an adapter expects one of its files, and
// the reason the run must give for passing it over.
var reasons = map[string]string{
	"loop":       "symbolic link, not followed",
	"link":       "symbolic link, not followed",
	"broken":     "symbolic link, not followed",
	"dir":        "is a directory, not a file",
	"fifo":       "not a regular file (named pipe)",
	"socket":     "not a regular file (socket)",
	"unreadable": "permission denied",
}

// secretMark is in the file the planted links point to: it must reach no
// record.
const secretMark = "LINKED-SECRET-4f1c"

// TestDamagedEntries: for every adapter, entries named as its files (and
// the files read beside them: a subagent's .meta.json, Gemini's
// .project_root, Aider's input history) that are a symbolic-link loop, a
// directory, a named pipe, a socket, a link to a file outside (as a plan
// linked to /etc/passwd), a link to nothing or (not as root) a file that
// cannot be read are each named once on the skip channel with the reason,
// counted, and never read; the run never blocks, and every record of the
// valid files around them is still emitted.
func TestDamagedEntries(t *testing.T) {
	cases := []struct {
		platform string
		fixture  string            // testdata folder copied to home+to
		to       string            // where in home
		roots    []string          // relative to home; none: the default locations
		damage   map[string]string // path relative to home -> kind
	}{
		{
			platform: "claude_code", fixture: "claude/home", to: "",
			damage: map[string]string{
				".claude/projects/-home-dev-webapp/zz-loop.jsonl":   "loop",
				".claude/projects/-home-dev-webapp/zz-dir.jsonl":    "dir",
				".claude/projects/-home-dev-webapp/zz-fifo.jsonl":   "fifo",
				".claude/projects/-home-dev-webapp/zz-sock.jsonl":   "socket",
				".claude/projects/-home-dev-webapp/zz-link.jsonl":   "link",
				".claude/projects/-home-dev-webapp/zz-broken.jsonl": "broken",
				".claude/projects/-home-dev-webapp/zz-shut.jsonl":   "unreadable",
				".claude/plans/zz-linked-plan.md":                   "link",
				".claude/plans/zz-fifo-plan.md":                     "fifo",
				// A subagent's meta file: the transcript is read without it.
				".claude/projects/-home-dev-webapp/agent-9f8e7d6c.meta.json": "fifo",
			},
		},
		{
			platform: "codex", fixture: "codex/home", to: "",
			damage: map[string]string{
				".codex/sessions/2026/03/01/rollout-zz-loop.jsonl": "loop",
				".codex/sessions/2026/03/01/rollout-zz-dir.jsonl":  "dir",
				".codex/sessions/2026/03/01/rollout-zz-fifo.jsonl": "fifo",
				".codex/sessions/2026/03/01/zz-fifo.jsonl":         "fifo",
				".codex/sessions/2026/03/01/rollout-zz-link.jsonl": "link",
				".codex/sessions/2026/03/01/rollout-zz-shut.jsonl": "unreadable",
				".codex/archived_sessions/rollout-zz-sock.jsonl":   "socket",
			},
		},
		{
			platform: "gemini", fixture: "gemini/home", to: "",
			damage: map[string]string{
				".gemini/tmp/webapp/chats/session-zz-loop.jsonl": "loop",
				".gemini/tmp/webapp/chats/session-zz-dir.json":   "dir",
				".gemini/tmp/webapp/chats/session-zz-fifo.jsonl": "fifo",
				".gemini/tmp/webapp/chats/session-zz-link.json":  "link",
				".gemini/tmp/webapp/chats/session-zz-shut.jsonl": "unreadable",
				// The marker of a project whose chat is valid.
				".gemini/tmp/zzproj/.project_root": "fifo",
			},
		},
		{
			platform: "cline", fixture: "cline/home", to: "",
			damage: map[string]string{
				".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/zz1/api_conversation_history.json": "fifo",
				".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/zz1/ui_messages.json":              "link",
				".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/zz1/task_metadata.json":            "dir",
				".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/zz2/ui_messages.json":              "loop",
				".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/zz3/ui_messages.json":              "unreadable",
			},
		},
		{
			platform: "cursor", fixture: "", to: "",
			damage: map[string]string{
				".config/Cursor/User/workspaceStorage/zz1/state.vscdb":     "fifo",
				".config/Cursor/User/workspaceStorage/zz2/state.vscdb":     "loop",
				".config/Cursor/User/workspaceStorage/zz3/state.vscdb":     "dir",
				".config/Cursor/User/workspaceStorage/zz4/state.vscdb":     "link",
				".cursor/projects/p/agent-transcripts/zz-fifo.jsonl":       "fifo",
				".cursor/projects/p/agent-transcripts/zz-link.jsonl":       "link",
				".cursor/projects/p/agent-transcripts/zz-shut/zz-sh.jsonl": "unreadable",
			},
		},
		{
			platform: "aider", fixture: "aider/projects", to: "projects", roots: []string{"projects"},
			damage: map[string]string{
				"projects/zz-fifo/.aider.chat.history.md": "fifo",
				"projects/zz-loop/.aider.chat.history.md": "loop",
				"projects/zz-link/.aider.chat.history.md": "link",
				// The input history beside a valid chat history.
				"projects/zz-input/.aider.input.history": "fifo",
			},
		},
		{
			platform: "push", fixture: "push/push", to: ".local/share/pos/push",
			damage: map[string]string{
				".local/share/pos/push/my-agent/zz-loop.jsonl": "loop",
				".local/share/pos/push/my-agent/zz-dir.jsonl":  "dir",
				".local/share/pos/push/my-agent/zz-fifo.jsonl": "fifo",
				".local/share/pos/push/my-agent/zz-sock.jsonl": "socket",
				".local/share/pos/push/my-agent/zz-link.jsonl": "link",
				".local/share/pos/push/zz.jsonl":               "unreadable",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.platform, func(t *testing.T) {
			a, ok := extract.Lookup(tc.platform)
			if !ok {
				t.Fatalf("no adapter %s", tc.platform)
			}
			home := t.TempDir()
			if tc.fixture != "" {
				extracttest.CopyTree(t, filepath.Join("..", "..", "testdata", tc.fixture), filepath.Join(home, tc.to), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
			}
			extras(t, tc.platform, home)
			opt := extract.Options{Home: home}
			for _, r := range tc.roots {
				opt.Roots = append(opt.Roots, filepath.Join(home, r))
			}
			clean := run(t, a, opt)
			// The fixtures hold bad lines of their own: reported alike.
			before := map[string]bool{}
			for _, s := range clean.Skips {
				before[s.Error()] = true
			}
			if len(clean.Recs) == 0 {
				t.Fatal("the clean home has no records")
			}

			outside := filepath.Join(t.TempDir(), "secret")
			if err := os.WriteFile(outside, []byte(secretLine(tc.platform)), 0o644); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{} // path -> reason
			for rel, kind := range tc.damage {
				p := filepath.Join(home, rel)
				if kind == "unreadable" && os.Geteuid() == 0 {
					t.Logf("%s: running as root, where chmod 000 denies nothing: not tried", rel)
					continue
				}
				plant(t, p, kind, outside, tc.platform)
				want[p] = reasons[kind]
			}
			got := run(t, a, opt)

			// Each damaged entry is named once, with its reason.
			named := map[string]int{}
			for _, s := range got.Skips {
				if before[s.Error()] {
					continue
				}
				named[s.Path]++
				if why, ok := want[s.Path]; !ok || s.Line != 0 || s.Err.Error() != why {
					t.Errorf("reported %v; want only the damaged entries, with their reason", s)
				}
			}
			for p, why := range want {
				if named[p] != 1 {
					t.Errorf("%s (%s) named %d times, want once", p, why, named[p])
				}
			}
			if n := got.Stats.Skipped.Load() - int64(len(clean.Skips)); n != int64(len(want)) {
				t.Errorf("%d more skipped counted, want %d", n, len(want))
			}
			// Every record of the clean run is still there; none comes from a
			// damaged entry, none holds what a link points to.
			have := map[string]bool{}
			for _, r := range got.Recs {
				have[key(r)] = true
				if r.Source != nil {
					if _, bad := want[r.Source.Path]; bad {
						t.Errorf("a record from %s", r.Source.Path)
					}
				}
				if b := schema.AppendRecord(nil, r); strings.Contains(string(b), secretMark) {
					t.Errorf("a record holds what a link points to: %.200s", b)
				}
			}
			for _, r := range clean.Recs {
				if r.Kind != schema.KindCheckpoint && !have[key(r)] {
					t.Errorf("lost: %s %s %s", r.Kind, r.ID, r.Source.Path)
				}
			}
		})
	}
}

// key identifies a record across runs: its id and its raw line.
func key(r *schema.Record) string { return string(r.Kind) + "\x00" + r.ID + "\x00" + string(r.Raw) }

// run extracts with a deadline: a named pipe opened for reading would
// block the run for good.
func run(t *testing.T, a extract.Adapter, opt extract.Options) extracttest.Result {
	t.Helper()
	var mu sync.Mutex
	res := extracttest.Result{Stats: &extract.Stats{}}
	opt.Stats = res.Stats
	opt.Now = func() time.Time { return extracttest.Now }
	opt.OnSkip = func(b *schema.BadInput) error {
		mu.Lock()
		defer mu.Unlock()
		res.Skips = append(res.Skips, b)
		return nil
	}
	done := make(chan error, 1)
	go func() {
		done <- a.Extract(context.Background(), opt, func(r *schema.Record) error {
			mu.Lock()
			defer mu.Unlock()
			res.Recs = append(res.Recs, r)
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the run is blocked")
	}
	return res
}

// plant puts a damaged entry of kind at p.
func plant(t *testing.T, p, kind, outside, platform string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	switch kind {
	case "loop":
		err = os.Symlink(filepath.Base(p), p)
	case "link":
		err = os.Symlink(outside, p)
	case "broken":
		err = os.Symlink(p+".absent", p)
	case "dir":
		err = os.Mkdir(p, 0o755)
	case "fifo":
		err = syscall.Mkfifo(p, 0o644)
	case "socket":
		// A socket's path is short (108 bytes): listen from its folder.
		wd, _ := os.Getwd()
		if err = os.Chdir(filepath.Dir(p)); err == nil {
			var l net.Listener
			l, err = net.Listen("unix", filepath.Base(p))
			os.Chdir(wd)
			if err == nil {
				t.Cleanup(func() { l.Close() })
			}
		}
	case "unreadable":
		if err = os.WriteFile(p, []byte(secretLine(platform)), 0o644); err == nil {
			err = os.Chmod(p, 0)
		}
	default:
		t.Fatalf("no damage %q", kind)
	}
	if err != nil {
		t.Skipf("%s: cannot make a %s here: %v", p, kind, err)
	}
}

// secretLine is a valid line (or file) of the platform holding secretMark:
// read, it would become records.
func secretLine(platform string) string {
	switch platform {
	case "claude_code":
		return `{"type":"user","sessionId":"s","uuid":"u1","timestamp":"2026-03-01T00:00:00Z","message":{"role":"user","content":"` + secretMark + `"}}` + "\n"
	case "push":
		return `{"type":"message","timestamp":"2026-03-01T00:00:00Z","session":"s","role":"user","text":"` + secretMark + `"}` + "\n"
	case "cursor":
		return `{"role":"user","message":{"content":[{"type":"text","text":"` + secretMark + `"}]}}` + "\n"
	case "aider":
		return "# aider chat started at 2026-03-01 10:00:00\n\n#### " + secretMark + "\n"
	}
	return `{"type":"session_meta","sessionId":"s","text":"` + secretMark + `"}` + "\n"
}

// extras adds to a fixture home the valid files some damage sits beside.
func extras(t *testing.T, platform, home string) {
	t.Helper()
	files := map[string]string{}
	switch platform {
	case "cursor":
		files[".cursor/projects/p/agent-transcripts/a1.jsonl"] = `{"role":"user","message":{"content":[{"type":"text","text":"hello"}]}}` + "\n" +
			`{"role":"assistant","message":{"content":[{"type":"text","text":"hi"}]}}` + "\n"
	case "gemini":
		b, err := os.ReadFile(filepath.Join(home, ".gemini/tmp/webapp/chats/session-2026-03-02T10-00-bbbb2222.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		files[".gemini/tmp/zzproj/chats/session-2026-03-09T10-00-zzzz.jsonl"] = string(b)
	case "aider":
		b, err := os.ReadFile(filepath.Join(home, "projects/notes/.aider.chat.history.md"))
		if err != nil {
			t.Fatal(err)
		}
		files["projects/zz-input/.aider.chat.history.md"] = string(b)
	}
	for rel, data := range files {
		testfs.WriteFile(t, filepath.Join(home, rel), data)
	}
}
